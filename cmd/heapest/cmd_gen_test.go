package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGenMan checks that gen man writes a page per command, made from
// the commands' own help (flags and all).
func TestGenMan(t *testing.T) {
	dir := t.TempDir()
	if _, errOut, code := runCLI(t, "gen", "man", "--dir", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, cmd := range []string{"heapest", "heapest-report", "heapest-merge", "heapest-ci", "heapest-diff", "heapest-version"} {
		b, err := os.ReadFile(filepath.Join(dir, cmd+".1"))
		if err != nil {
			t.Errorf("no page for %s: %v", cmd, err)
			continue
		}
		if !strings.Contains(string(b), ".SH NAME") {
			t.Errorf("%s.1 is no manual page:\n%.200s", cmd, b)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "heapest-report.1"))
	for _, want := range []string{"--confidence", "EXIT STATUS", "--from-parquet"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("heapest-report.1 lacks %q", want)
		}
	}
}

// The help's tables (flags, paths, EXIT STATUS) are indented lines, a
// paragraph to markdown; gen fences each run of them as a code block, so
// neither generator reflows them.
func TestFenceIndented(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain\ntext", "plain\ntext"},
		{"Intro.\n  a  one\n  b  two\nAfter.", "Intro.\n```\n  a  one\n  b  two\n```\nAfter."},
		{"\nEXIT STATUS\n  0  success\n  2  usage", "\nEXIT STATUS\n```\n  0  success\n  2  usage\n```"},
		{"  first\n\n  second", "```\n  first\n```\n\n```\n  second\n```"},
	}
	for _, c := range cases {
		if got := fenceIndented(c.in); got != c.want {
			t.Errorf("fenceIndented(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// In the markdown pages, web's table of paths is a code block whole.
func TestGenMarkdownTables(t *testing.T) {
	dir := t.TempDir()
	if _, errOut, code := runCLI(t, "gen", "markdown", "--dir", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(filepath.Join(dir, "heapest_web.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "```\n  /             heapest's page") || !strings.Contains(string(b), "EXIT STATUS\n```\n  0  success") {
		t.Errorf("heapest_web.md's tables are not code blocks:\n%s", b)
	}
}
