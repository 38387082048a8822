package main

import (
	"os"
	"path/filepath"
	"strings"
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

// TestReportOfDiffOutput: heapest diff's pprof output is a difference (its
// BASE rows negated), not a heap profile; read as one, it is refused for
// what it is, with what to do instead.
func TestReportOfDiffOutput(t *testing.T) {
	d := filepath.Join(t.TempDir(), "d.pb.gz")
	mustRun(t, "diff", "-q", "--format", "pprof", "-o", d, "testdata/growth.pb.gz", "../../parse/pprof/testdata/go-heap.pb.gz")
	_, stderr, code := runCLI(t, "report", d)
	if want := "heapest: " + d + ": heapest diff's pprof output: NEW's estimates and BASE's negated, a difference and no heap profile"; code != 2 || !strings.HasPrefix(stderr, want) {
		t.Errorf("exit %d, stderr %q: want %q", code, stderr, want)
	}
}
