package main

import (
	"os"
	"path/filepath"
	"testing"
)

const example = "../../testdata/jemalloc/mixed_symbolized.heap"

// -o writes exactly what standard output would get, atomically: the file
// appears whole, and a failed run leaves no file behind.
func TestReportOutputFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.csv")
	want, _, _ := runCLI(t, "report", "--format", "csv", example)
	if out, errOut, code := runCLI(t, "report", "--format", "csv", "-o", path, example); code != 0 || out != "" {
		t.Fatalf("exit %d, stdout %q: %s", code, out, errOut)
	}
	data, err := os.ReadFile(path)
	if err != nil || string(data) != want {
		t.Fatalf("file %v:\n%s\nwant the standard output:\n%s", err, data, want)
	}
	bad := filepath.Join(dir, "bad.csv")
	if _, _, code := runCLI(t, "report", "--format", "csv", "-o", bad, filepath.Join(dir, "missing")); code != exitUsage {
		t.Errorf("missing input: exit %d", code)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}
