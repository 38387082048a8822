package main

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// runHeapest runs the CLI in-process and returns stdout and the exit code.
func runHeapest(t *testing.T, args ...string) (string, int) {
	t.Helper()
	out, _, code := runCLI(t, args...)
	return out, code
}

func ciJSONOut(t *testing.T, args ...string) ciJSON {
	t.Helper()
	out, code := runHeapest(t, append([]string{"ci", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("heapest ci %v: exit %d", args, code)
	}
	var j ciJSON
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("heapest ci %v: %v\n%s", args, err, out)
	}
	return j
}

// TestCICalculatorDotnetTable reproduces every row of the .NET design's
// table (p = 1/102400, C = 0.95) through the command line.
func TestCICalculatorDotnetTable(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "ci", "testdata", "dotnet_table.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ",")
		if len(fields) != 3 || strings.HasPrefix(fields[0], "#") || fields[0] == "samples" {
			continue
		}
		lo, _ := strconv.ParseFloat(fields[1], 64)
		hi, _ := strconv.ParseFloat(fields[2], 64)
		j := ciJSONOut(t, "--samples", fields[0], "--rate", "102400", "--offset-bytes", "0")
		if math.Abs(j.Total.Lo-lo) > 1 || math.Abs(j.Total.Hi-hi) > 1 {
			t.Errorf("s=%s: [%v, %v], table [%v, %v]", fields[0], j.Total.Lo, j.Total.Hi, lo, hi)
		}
		if j.Confidence != 0.95 || j.Total.Method != "exact" || j.Total.Samples != mustFloat(fields[0]) {
			t.Errorf("s=%s: %+v", fields[0], j)
		}
		rows++
	}
	if rows != 25 {
		t.Fatalf("%d table rows, want 25", rows)
	}
}

func mustFloat(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}

func TestCICalculatorWorkedExample(t *testing.T) {
	j := ciJSONOut(t, "--samples", "8", "--rate", "102400", "--offset-bytes", "10908")
	if math.Abs(j.Total.Lo-364574) > 1 || math.Abs(j.Total.Hi-1487778) > 1 {
		t.Errorf("[%v, %v], want [364574, 1487778]", j.Total.Lo, j.Total.Hi)
	}
	// Approach 2's estimate s·q/p + u.
	if want := 8*102399.0 + 10908; math.Abs(j.Total.Estimate-want) > 1e-6 {
		t.Errorf("estimate %v, want %v", j.Total.Estimate, want)
	}
}

func TestCICalculatorSize(t *testing.T) {
	// Allocations far above R are all sampled: zero-width-ish interval of
	// s or s+1 allocations; far below R it tends to s·R.
	j := ciJSONOut(t, "--samples", "4", "--rate", "4096", "--size", "1048576")
	if j.Total.Lo != 4*1048576 || j.Total.Hi > 5*1048576 {
		t.Errorf("huge: %+v", j.Total)
	}
	j = ciJSONOut(t, "--samples", "1000", "--rate", "524288", "--size", "16")
	if e := j.Total.Estimate / (1000 * 524288); math.Abs(e-1) > 1e-4 || j.Total.Lo >= j.Total.Estimate || j.Total.Hi <= j.Total.Estimate {
		t.Errorf("tiny: %+v", j.Total)
	}
	out, code := runHeapest(t, "ci", "--samples", "2", "--rate", "524288", "--size", "64", "--method", "normal")
	if code != 0 || !strings.Contains(out, "normal") {
		t.Errorf("table: exit %d\n%s", code, out)
	}
}

func TestCICalculatorInvalid(t *testing.T) {
	bad := [][]string{
		{"--rate", "100"},
		{"--samples", "-1", "--rate", "100"},
		{"--samples", "1.5", "--rate", "100"},
		{"--samples", "3", "--rate", "0"},
		{"--samples", "3", "--rate", "-5"},
		{"--samples", "3", "--rate", "100", "--confidence", "1"},
		{"--samples", "3", "--rate", "100", "--confidence", "0"},
		{"--samples", "3", "--rate", "100", "--size", "0"},
		{"--samples", "3", "--rate", "100", "--size", "8", "--offset-bytes", "8"},
		{"--samples", "3", "--rate", "100", "--offset-bytes", "-8"},
		{"--samples", "3", "--rate", "100", "--method", "bayes"},
		{"--samples", "3", "--rate", "100", "--format", "xml"},
		{"--samples", "3", "--rate", "NaN"},
		{"--samples", "3", "--rate", "100", "some.heap"},
	}
	for _, args := range bad {
		out, code := runHeapest(t, append([]string{"ci"}, args...)...)
		if code != exitUsage || out != "" {
			t.Errorf("ci %v: exit %d, stdout %q", args, code, out)
		}
	}
}
