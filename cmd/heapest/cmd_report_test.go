package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCLI runs the CLI in-process and returns stdout, stderr and the exit code.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := newRootCommand()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.Execute()
	if err != nil {
		errOut.WriteString(err.Error())
	}
	return out.String(), errOut.String(), exitCode(err)
}

const example = "../../testdata/jemalloc/mixed_symbolized.heap"

func TestReportExitStatus(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk")
	os.WriteFile(junk, []byte("\x00\x01garbage"), 0o644)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o644)
	notELF := filepath.Join(dir, "server")
	os.WriteFile(notELF, []byte("#!/bin/sh\n"), 0o755)
	badMaps := filepath.Join(dir, "badmaps.heap")
	os.WriteFile(badMaps, []byte("heap_v2/524288\n  t*: 1: 64 [0: 0]\n  t0: 1: 64 [0: 0]\n@ 0x401010\n  t*: 1: 64 [0: 0]\n  t0: 1: 64 [0: 0]\n\nMAPPED_LIBRARIES:\n"+
		"00400000-00452000 r-xp 00000000 08:02 173521      "+notELF+"\n"), 0o644)
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"ok", []string{"report", example}, 0, ""},
		{"missing file", []string{"report", filepath.Join(dir, "nope.heap")}, 2, "no such file"},
		{"empty file", []string{"report", empty}, 2, "empty file"},
		{"junk", []string{"report", junk}, 2, "unrecognized profile format"},
		{"no args", []string{"report"}, 2, "requires at least 1 arg"},
		{"two files", []string{"report", example, example}, 2, "heapest merge"},
		{"bad flag", []string{"report", "--nope", example}, 2, "unknown flag"},
		{"bad confidence", []string{"report", "--confidence", "1.5", example}, 2, "--confidence"},
		{"bad method", []string{"report", "--method", "magic", example}, 2, `"--method" flag: want auto`},
		{"bad value", []string{"report", "--value", "heap", example}, 2, `"--value" flag: want inuse_space`},
		{"bad by", []string{"report", "--by", "color", example}, 2, `"--by" flag: want func`},
		{"bad top", []string{"report", "--top", "-1", example}, 2, "--top"},
		{"bad focus", []string{"report", "--focus", "(", example}, 2, "--focus"},
		{"bad format", []string{"report", "--format", "xml", example}, 2, `"--format" flag: want table`},
		{"alloc value absent", []string{"report", "--value", "alloc_space", "../../testdata/jemalloc/je530_threads_unbias-on.heap"}, 2, "has no allocation"},
		{"non-ELF mapped file", []string{"report", badMaps}, 2, badMaps + ":9: MAPPED_LIBRARIES: " + notELF + ": not an ELF file (expected an ELF"},
		{"bad unbias mode", []string{"report", "--jemalloc-unbias", "maybe", example}, 2, "--jemalloc-unbias"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.msg) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, errOut, tt.code, tt.msg)
			}
			if code != 0 && out != "" {
				t.Errorf("a failed run wrote to stdout: %q", out)
			}
		})
	}
}

// Standard output carries only the report; warnings go to stderr.
func TestReportStreams(t *testing.T) {
	out, errOut, code := runCLI(t, "report", "--format", "json", "../../testdata/jemalloc/je530_mixed_unbias-off.heap")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var j struct {
		Total struct{ Estimate float64 } `json:"total"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil || j.Total.Estimate <= 0 {
		t.Fatalf("stdout is not just the JSON report: %v\n%s", err, out)
	}
	if !strings.Contains(errOut, "warning") || !strings.Contains(errOut, "/opt/heaplab/t") {
		t.Errorf("expected a warning about the missing binary on stderr, got %q", errOut)
	}
}

// -o writes atomically: the file appears whole, and a failed run leaves
// no file behind.
func TestReportOutputFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.csv")
	if _, errOut, code := runCLI(t, "report", "--format", "csv", "-o", path, example); code != 0 {
		t.Fatal(errOut)
	}
	data, err := os.ReadFile(path)
	if err != nil || !strings.HasPrefix(string(data), "key,estimate,lo,hi") || !strings.Contains(string(data), "\ntotal,") {
		t.Fatalf("csv file: %v %q", err, data)
	}
	bad := filepath.Join(dir, "bad.csv")
	runCLI(t, "report", "--format", "csv", "-o", bad, filepath.Join(dir, "missing"))
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

// The --help of every command carries examples and the exit statuses.
func TestHelp(t *testing.T) {
	for _, c := range newRootCommand().Commands() {
		if c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		out, _, code := runCLI(t, c.Name(), "--help")
		if code != 0 || !strings.Contains(out, "EXIT STATUS") {
			t.Errorf("heapest %s --help: exit %d, no EXIT STATUS section", c.Name(), code)
		}
	}
	if out, _, _ := runCLI(t, "--version"); !strings.Contains(out, "heapest version") {
		t.Errorf("--version: %q", out)
	}
}
