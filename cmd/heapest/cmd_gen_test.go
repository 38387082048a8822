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
