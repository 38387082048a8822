package memray

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/unbias"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// render writes the records a parse sends, one per line, and the profile
// after them: what the golden files hold.
func render(t *testing.T, name string, data string, opt parse.Options) (string, error) {
	t.Helper()
	var b strings.Builder
	p, err := Parse(name, bufio.NewReader(strings.NewReader(data)), opt, parse.SinkFunc(func(r *parse.Record) {
		var frames []string
		for _, f := range r.Stack {
			frames = append(frames, f.Func)
		}
		fmt.Fprintf(&b, "%s rate=%g type=%q thread=%q objects=%g bytes=%g samples=%g enc=%d stack#%d=[%s]\n",
			r.Scheme, r.Rate, r.Type, r.Thread, r.InUse.Objects, r.InUse.Bytes, r.InUse.Samples, r.InUse.Enc, r.StackID, strings.Join(frames, " < "))
	}))
	if err != nil {
		return "", err
	}
	fmt.Fprintf(&b, "-- profile: format=%s rate=%g samples=%g detail=%q records=%d inuse=%v alloc=%v\n",
		p.Source.Format, p.Source.Rate, p.Source.Samples, p.Source.Detail, p.Records, p.HasInUse, p.HasAlloc)
	for _, w := range p.Warnings {
		fmt.Fprintf(&b, "-- warning: %s\n", w)
	}
	return b.String(), nil
}

// TestGolden parses the files in testdata (written from memray's documented
// columns and the cases of its own tests) and compares what comes out with
// the golden files; go test -update rewrites them.
func TestGolden(t *testing.T) {
	tests := []struct {
		file, golden string
		opt          parse.Options
	}{
		{"memray-unit-tests.csv", "memray-unit-tests.golden", parse.Options{}},
		{"transform-merged.csv", "transform-merged.golden", parse.Options{}},
		{"header-only.csv", "header-only.golden", parse.Options{}},
		{"sampled-4096.csv", "sampled-4096.golden", parse.Options{Rate: 4096}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := render(t, tc.file, string(data), tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tc.golden)
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("output differs from %s (go test -update rewrites it):\n%s", path, got)
			}
		})
	}
}

// TestBadRows checks that every kind of bad row is an error naming its line,
// and that --keep-going skips it with a warning naming the line.
func TestBadRows(t *testing.T) {
	const head = header + "\n"
	good := "MALLOC,1,1024,1,0x1,me;foo.py;12\n"
	tests := []struct {
		name string
		data string
		line int
		msg  string
	}{
		{"empty", "", 1, "empty file"},
		{"wrong header", "allocator,num_allocations,size,tid,thread,stack_trace\n", 1, "expected the memray CSV header"},
		{"negative count", head + good + "MALLOC,-1,1024,1,0x1,f;a.py;1\n", 3, "num_allocations"},
		{"size not a number", head + "MALLOC,1,lots,1,0x1,f;a.py;1\n", 2, "size"},
		{"bad tid", head + good + good + "MALLOC,1,8,-2,x,f;a.py;1\n", 4, "tid"},
		{"missing column", head + "MALLOC,1,1024,1,f;a.py;1\n", 2, "malformed CSV row"},
		{"frame without line", head + good + "MALLOC,1,8,1,0x1,f;a.py\n", 3, "want function;file;line"},
		{"line not a number", head + "MALLOC,1,8,1,0x1,f;a.py;x\n", 2, "not a number"},
		{"empty allocator", head + ",1,8,1,0x1,f;a.py;1\n", 2, "empty allocator"},
		{"unterminated quote", head + good + "MALLOC,1,8,1,0x1,\"f;a.py;1\n", 3, "malformed CSV row"},
		// A last row without its line ending was cut: "f;a.py;3" of ";30".
		{"cut last row", head + good + "MALLOC,1,8,1,0x1,f;a.py;3", 3, "truncated: last line has no line ending"},
		{"cut last row, CRLF", strings.ReplaceAll(head+good, "\n", "\r\n") + "MALLOC,1,8,1,0x1,", 3, "truncated: last line has no line ending"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render(t, "m.csv", tc.data, parse.Options{})
			var pe *parse.Error
			if !errors.As(err, &pe) || pe.File != "m.csv" || pe.Line != tc.line || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("got %v, want an error at m.csv:%d saying %q", err, tc.line, tc.msg)
			}
			if tc.line < 2 {
				return
			}
			out, err := render(t, "m.csv", tc.data, parse.Options{KeepGoing: true})
			if err != nil {
				t.Fatalf("--keep-going: %v", err)
			}
			if !strings.Contains(out, fmt.Sprintf("bad rows skipped (--keep-going): line %d:", tc.line)) {
				t.Errorf("--keep-going output lacks the skipped line %d:\n%s", tc.line, out)
			}
		})
	}
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		head string
		want bool
	}{
		{header + "\n", true},
		{header + "\r\nMALLOC,1,8,1,0x1,\r\n", true},
		{"\xef\xbb\xbf" + header + "\n", true},
		{header, true}, // a file of the header alone, without a newline
		{header + ",extra\n", false},
		{"allocator,num_allocations,size\n", false},
		{"heap_v2/524288\n  t*: 1: 8 [ 0: 0]\n", false},
		{"heap profile:   1:   8 [ 1: 8] @ heap_v2/524288\n", false},
		{"FLR\x00", false},
		{"", false},
	} {
		if got := Detect([]byte(tc.head)); got != tc.want {
			t.Errorf("Detect(%q) = %v, want %v", tc.head, got, tc.want)
		}
	}
}

// TestSampledInterval checks a sampled capture end to end through unbias
// and ci: a row of k samples at rate R gets the exact Poisson interval for
// k, times R, its lower end conditioned on the row's presence. The bounds
// are checked against the Poisson distribution itself:
// P(X ≥ k | X ≥ 1; lo/R) = α/2 and P(X ≤ k; hi/R) = α/2.
func TestSampledInterval(t *testing.T) {
	const R = 4096
	data, err := os.ReadFile("testdata/sampled-4096.csv")
	if err != nil {
		t.Fatal(err)
	}
	var stats []ci.Stats
	_, err = Parse("s.csv", bufio.NewReader(strings.NewReader(string(data))), parse.Options{Rate: R}, parse.SinkFunc(func(r *parse.Record) {
		stats = append(stats, unbias.Contribute(r, unbias.InUseSpace).Stats)
	}))
	if err != nil {
		t.Fatal(err)
	}
	conf := 0.95
	alpha := 1 - conf
	for _, s := range stats[:2] { // the rows of allocations smaller than R: k = size/R
		k := s.Estimate / R
		r, err := ci.Interval(s, ci.Auto, conf)
		if err != nil {
			t.Fatal(err)
		}
		// A row is there because it was sampled: the lower bound is
		// the zero-truncated Poisson's, P(X ≥ k | X ≥ 1; lo) = α/2 (and
		// 0 for one sample: the row may be that one allocation's).
		mu := r.Lo / R
		if got := (1 - poissonCDF(k-1, mu)) / -math.Expm1(-mu); k > 1 && math.Abs(got-alpha/2) > 1e-6 || k == 1 && r.Lo != 0 {
			t.Errorf("k=%v: lo %v, P(X ≥ k | X ≥ 1; lo) = %v, want %v", k, r.Lo, got, alpha/2)
		}
		if got := poissonCDF(k, r.Hi/R); math.Abs(got-alpha/2) > 1e-6 {
			t.Errorf("k=%v: P(X ≤ k; hi) = %v, want %v", k, got, alpha/2)
		}
	}
}

// poissonCDF is P(X ≤ k) for X ~ Poisson(mu), summed term by term.
func poissonCDF(k, mu float64) float64 {
	term, sum := math.Exp(-mu), 0.0
	for i := 0.0; i <= k; i++ {
		if i > 0 {
			term *= mu / i
		}
		sum += term
	}
	return sum
}
