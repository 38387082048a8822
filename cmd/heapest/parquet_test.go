package main

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/heapest/heapest/internal/testfile"
)

// samplesDir is ../shared/samples, beside the repository.
const samplesDir = "../../../shared/samples"

// TestParquetRoundTrip checks that a report read back from heapest's
// Parquet rows (grouped, or sample rows regrouped) is the report of the
// profiles themselves: the same rows, estimates and intervals.
func TestParquetRoundTrip(t *testing.T) {
	cases := []struct {
		name   string
		inputs []string
		by     []string
		value  string
	}{
		{"jemalloc", []string{mixedDump}, []string{"func", "stack", "size"}, "inuse_space"},
		{"fleet merge", []string{"../../testdata/fleet"}, []string{"func", "stack", "source"}, "inuse_space"},
		{"go pprof", []string{samplesDir + "/pprof/parca_1644509272337470000.pb.gz"}, []string{"func", "stack"}, "inuse_space"},
		{"gperftools", []string{samplesDir + "/pprof/google-pprof_cppbench.heap"}, []string{"func"}, "inuse_space"},
		{"nettrace", []string{"testdata/v6.nettrace"}, []string{"type", "func"}, "alloc_space"},
		{"jfr", []string{samplesDir + "/jfr/object-allocation-sample.jfr.gz"}, []string{"func", "thread"}, "alloc_space"},
	}
	for _, c := range cases {
		if _, err := os.Stat(c.inputs[0]); err != nil {
			t.Logf("%s: %v (../shared is not beside the repository)", c.name, err)
			continue
		}
		for _, by := range c.by {
			t.Run(c.name+"/"+by, func(t *testing.T) {
				cmd := "report"
				if len(c.inputs) > 1 || c.name == "fleet merge" {
					cmd = "merge"
				}
				flags := []string{"--by", by, "--value", c.value}
				want := reportJSON(t, append(append([]string{cmd, "--format", "json", "--top", "0"}, flags...), c.inputs...)...)
				for _, rows := range []string{"groups", "samples"} {
					if rows == "samples" && (by == "thread" || by == "size") {
						continue // sample rows are per stack and type
					}
					file := filepath.Join(t.TempDir(), "rows.parquet")
					args := append(append([]string{cmd, "--format", "parquet", "--parquet-rows", rows, "-o", file}, flags...), c.inputs...)
					if _, errOut, code := runCLI(t, args...); code != 0 {
						t.Fatalf("%v: exit %d: %s", args, code, errOut)
					}
					got := reportJSON(t, append([]string{"report", "--format", "json", "--top", "0", "--from-parquet", file}, flags...)...)
					sameReport(t, rows, got, want)
				}
			})
		}
	}
}

// reportJSON runs heapest and decodes its JSON report.
func reportJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	out, errOut, code := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return m
}

// sameReport compares two JSON reports' totals and rows, numbers to a
// relative 1e-12 (a merge sums in another order than the rows' reader).
func sameReport(t *testing.T, what string, got, want map[string]any) {
	t.Helper()
	for _, k := range []string{"value", "by", "total", "rows"} {
		if !closeJSON(got[k], want[k]) {
			g, _ := json.MarshalIndent(got[k], "", " ")
			w, _ := json.MarshalIndent(want[k], "", " ")
			t.Errorf("%s rows: %s differs:\n%s\nthe profiles' report:\n%s", what, k, g, w)
		}
	}
}

func closeJSON(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || math.Abs(x-y) <= 1e-12*math.Max(math.Abs(x), math.Abs(y)))
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !closeJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k := range x {
			if !closeJSON(x[k], y[k]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// TestParquetDumpsOfOneRecording: the Parquet rows of several inputs are
// refused as a merge refuses them when the inputs are dumps of one
// recording (an engine would sum the chunks they share), and no file is
// left; --latest-per-process writes the rows of the dump that holds all
// the chunks, the same rows as that dump's alone; --allow-duplicates
// writes them all.
func TestParquetDumpsOfOneRecording(t *testing.T) {
	both := testfile.Gunzip(t, "../../parse/jfr/testdata/jdk17-2chunks.jfr.gz")
	size := binary.BigEndian.Uint64(both[8:16]) // the first chunk's size, in its header
	dir := t.TempDir()
	d1, d2 := filepath.Join(dir, "d1.jfr"), filepath.Join(dir, "d2.jfr")
	for p, b := range map[string][]byte{d1: both[:size], d2: both} {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rows := filepath.Join(dir, "rows.parquet")
	_, stderr, code := runCLI(t, "report", "-q", "--format", "parquet", "-o", rows, d1, d2)
	if code != 2 || !strings.HasPrefix(stderr, "heapest: 2 inputs are dumps of one recording") {
		t.Errorf("two dumps of one recording: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(rows); !os.IsNotExist(err) {
		t.Errorf("a refused Parquet file was written: %v", err)
	}

	alone := filepath.Join(dir, "d2.parquet")
	mustRun(t, "report", "-q", "--format", "parquet", "-o", alone, d2)
	_, stderr, code = runCLI(t, "report", "-q", "--format", "parquet", "--latest-per-process", "-o", rows, d2, d1)
	if code != 0 {
		t.Fatalf("--latest-per-process: exit %d\n%s", code, stderr)
	}
	want := mustRun(t, "report", "--top", "0", "--format", "csv", "--from-parquet", alone)
	got := mustRun(t, "report", "--top", "0", "--format", "csv", "--from-parquet", rows)
	if got != strings.ReplaceAll(want, alone, rows) {
		t.Errorf("--latest-per-process rows, read back:\n%s\nwant d2's alone:\n%s", got, want)
	}

	if _, stderr, code := runCLI(t, "report", "-q", "--format", "parquet", "--allow-duplicates", "-o", rows, d1, d2); code != 0 {
		t.Errorf("--allow-duplicates: exit %d\n%s", code, stderr)
	}
}
