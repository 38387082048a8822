package pprof_test

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/heapest/heapest/parse"
)

// v8Profile is a heap profile as V8's writers make it: one sample per
// (count, size) of raw counts n scaled as V8's ScaleSample does,
// round(n·s), with [count, count·size] as values, under the sample types
// given (pprof-nodejs's objects/space, or @datadog/pprof's inuse_*), at
// the stack of a function in file.
func v8Profile(t *testing.T, types [2]string, file string, rate int64, samples [][2]int64) []byte {
	t.Helper()
	fn := &profile.Function{ID: 1, Name: "siteA", Filename: file}
	loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
	p := &profile.Profile{Period: rate, PeriodType: &profile.ValueType{Type: types[1], Unit: "bytes"},
		SampleType: []*profile.ValueType{{Type: types[0], Unit: "count"}, {Type: types[1], Unit: "bytes"}},
		Function:   []*profile.Function{fn}, Location: []*profile.Location{loc}}
	for _, ns := range samples {
		s := 1 / -math.Expm1(-float64(ns[1])/float64(rate))
		count := int64(math.Floor(float64(ns[0])*s + 0.5))
		p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{loc}, Value: []int64{count, count * ns[1]}})
	}
	return encode(t, p)
}

// TestV8HeapProfile: a V8 heap profile (Node.js) is told from the other
// producers of the same sample types by its JavaScript frames, and its raw
// counts invert exactly whatever the size, under either writer's types;
// without JavaScript frames the same types are read as before.
func TestV8HeapProfile(t *testing.T) {
	// (n sampled, object size): small objects, sizes near and far above
	// the period, one object.
	samples := [][2]int64{{1, 24}, {500, 24}, {37, 8048}, {3, 65536}, {9, 131072}, {2, 2 << 20}, {1, 1579539}}
	for _, tt := range []struct {
		name   string
		types  [2]string
		file   string
		format string
	}{
		{"pprof-nodejs", [2]string{"objects", "space"}, "/srv/app/server.js", "pprof-v8"},
		{"@datadog/pprof", [2]string{"inuse_objects", "inuse_space"}, "node:internal/modules/cjs/loader", "pprof-v8"},
		{"source-mapped TypeScript", [2]string{"inuse_objects", "inuse_space"}, "/srv/app/src/cache.ts", "pprof-v8"},
		{"objects/space, no JavaScript", [2]string{"objects", "space"}, "alloc.c", "pprof"},
		{"inuse_* alone, no JavaScript", [2]string{"inuse_objects", "inuse_space"}, "", "pprof"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := read(tt.name, bytes.NewReader(v8Profile(t, tt.types, tt.file, 131072, samples)), parse.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if p.Source.Format != tt.format {
				t.Fatalf("format %q, want %q (warnings %q)", p.Source.Format, tt.format, p.Warnings)
			}
			if tt.format != "pprof-v8" {
				return
			}
			if len(p.Warnings) != 0 || len(p.Records) != len(samples) {
				t.Fatalf("%d records, warnings %q", len(p.Records), p.Warnings)
			}
			for i, r := range p.Records {
				c := r.InUse
				if c.Approx || c.Samples != float64(samples[i][0]) || c.Size != float64(samples[i][1]) || r.Scheme != parse.Bernoulli {
					t.Errorf("sample %d (%d of %d B): %+v, scheme %v", i, samples[i][0], samples[i][1], c, r.Scheme)
				}
			}
		})
	}
	// A sample whose space is no whole number of objects of one size is
	// not V8's: its count is approximate, and a warning says so.
	data := v8Profile(t, [2]string{"objects", "space"}, "app.js", 131072, [][2]int64{{5, 24}})
	prof, err := profile.Parse(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	prof.Sample[0].Value[1]++
	p, err := read("odd", bytes.NewReader(encode(t, prof)), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Records[0].InUse.Approx || !strings.Contains(strings.Join(p.Warnings, "\n"), "1 of 1 samples are not V8's") {
		t.Errorf("odd sample %+v, warnings %q", p.Records[0].InUse, p.Warnings)
	}
}

// TestV8RealProfile: a real Node.js heap profile (@datadog/pprof; see
// testdata/README.md) is read as V8's, every sample's raw count inverts
// exactly, the estimates are V8's own (its scaled values), and the
// external memory @datadog/pprof measured and wrote as a sample is exact.
func TestV8RealProfile(t *testing.T) {
	p, err := readFile("testdata/node-datadog-heap.pb.gz", parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Source.Format != "pprof-v8" || len(p.Warnings) != 0 {
		t.Fatalf("format %q, warnings %q", p.Source.Format, p.Warnings)
	}
	var space, samples float64
	external := 0
	for _, r := range p.Records {
		if len(r.Stack) == 1 && r.Stack[0].Func == "(external)" {
			// @datadog/pprof's measured external memory: exact, no sample.
			external++
			if r.Scheme != parse.Exact || r.InUse.Objects != 0 || r.InUse.Bytes != 1579539 {
				t.Errorf("(external): %+v, scheme %v", r.InUse, r.Scheme)
			}
			space += r.InUse.Bytes
			continue
		}
		if r.Scheme != parse.Bernoulli || r.InUse.Approx || r.InUse.Samples < 1 || r.InUse.Samples != math.Round(r.InUse.Samples) {
			t.Errorf("record %+v: not an exact raw count", r.InUse)
		}
		space += r.InUse.Bytes
		samples += r.InUse.Samples
	}
	// go tool pprof -raw: the inuse_space column sums to 52,742,771.
	if space != 52742771 || samples < 300 || external != 1 {
		t.Errorf("space %v, %v raw samples", space, samples)
	}
}
