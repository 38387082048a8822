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

func ciJSONOut(t *testing.T, args ...string) ciJSON {
	t.Helper()
	out, errOut, code := runCLI(t, append([]string{"ci", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("heapest ci %v: exit %d: %s", args, code, errOut)
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
		// The design's table is its formula, unconditioned: --method
		// exact (auto conditions on the row's presence).
		j := ciJSONOut(t, "--samples", fields[0], "--rate", "102400", "--offset-bytes", "0", "--method", "exact")
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
	j := ciJSONOut(t, "--samples", "8", "--rate", "102400", "--offset-bytes", "10908", "--method", "exact")
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
}

// A report row of one allocation size is the calculator's --size group:
// both build their statistics with unbias.Samples, so the calculator
// prints the row's estimate and interval (the row sums its records'
// estimates, hence the rounding allowance on the estimate only).
func TestCalculatorMatchesSizeRows(t *testing.T) {
	dumps, _ := filepath.Glob("../../testdata/jemalloc/*.heap")
	compared := 0
	for _, dump := range dumps {
		for _, method := range []string{"auto", "exact", "gamma"} {
			out, errOut, code := runCLI(t, "report", "--by", "size", "--top", "0", "--method", method, "--format", "json", dump)
			if code != 0 {
				t.Fatalf("%s: %s", dump, errOut)
			}
			var rep struct {
				Sources []struct{ Rate float64 } `json:"sources"`
				Rows    []struct {
					Key string `json:"key"`
					ciJSONTotal
					SamplesBound bool `json:"samples_bound"`
				} `json:"rows"`
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatal(err)
			}
			for _, row := range rep.Rows {
				if _, err := strconv.Atoi(row.Key); err != nil || row.SamplesBound {
					continue // the row of mixed sizes
				}
				c := ciJSONOut(t, "--samples", strconv.FormatFloat(row.Samples, 'f', -1, 64), "--rate", strconv.FormatFloat(rep.Sources[0].Rate, 'f', -1, 64),
					"--size", row.Key, "--method", method, "--sampler", "geometric").Total // jemalloc's
				near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Abs(b) }
				if !near(c.Estimate, row.Estimate) || c.Method != row.Method || !near(c.Lo, row.Lo) || !near(c.Hi, row.Hi) ||
					(c.Method == "exact" && (c.Lo != row.Lo || c.Hi != row.Hi)) {
					t.Errorf("%s --method %s, size %s: row %v [%v, %v] %s; ci %v [%v, %v] %s", dump, method, row.Key,
						row.Estimate, row.Lo, row.Hi, row.Method, c.Estimate, c.Lo, c.Hi, c.Method)
				}
				compared++
			}
		}
	}
	if compared < 15 {
		t.Errorf("compared %d rows, want every single-size row of the bundled dumps", compared)
	}
}

// TestCICalculatorOutputs: the calculator takes the formats and -o that
// report takes, and its JSON says what the interval is of.
func TestCICalculatorOutputs(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want ciInputs
	}{
		{"size", []string{"--samples", "3", "--rate", "512KiB", "--size", "4KiB"}, ciInputs{Samples: 3, Rate: 524288, Sampler: "exponential", Size: 4096}},
		{"size, jemalloc's sampler", []string{"--samples", "3", "--rate", "16", "--size", "32", "--sampler", "geometric"},
			ciInputs{Samples: 3, Rate: 16, Sampler: "geometric", Size: 32}},
		{"offset", []string{"--samples", "8", "--rate", "102400", "--offset-bytes", "10908", "--open-end"},
			ciInputs{Samples: 8, Rate: 102400, Sampler: "geometric", OffsetBytes: ptr(10908.0), OpenEnd: true}}, // .NET's: a trial per byte
		{"sizes", []string{"--samples", "2", "--rate", "4096", "--sizes", "10,20"}, ciInputs{Samples: 2, Rate: 4096, Sampler: "geometric", Sizes: []float64{10, 20}}}, // .NET's ObjectSize
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.json")
			out, errOut, code := runCLI(t, append([]string{"ci", "--format", "json", "-o", path}, tt.args...)...)
			if code != 0 || out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %s", code, out, errOut)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var j ciJSON
			if err := json.Unmarshal(data, &j); err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(j.Inputs)
			want, _ := json.Marshal(tt.want)
			if string(got) != string(want) || j.Unit != "bytes" {
				t.Errorf("inputs %s unit %q, want %s bytes", got, j.Unit, want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
