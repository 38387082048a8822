package report

import (
	"math"
	"strings"
	"testing"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/unbias"
)

func profile(format string, inuse, alloc bool, recs ...parse.Record) *parse.Profile {
	return &parse.Profile{Source: parse.Source{Path: "p." + format, Format: format}, HasInUse: inuse, HasAlloc: alloc, Records: recs}
}

func rec(fn string, n float64) parse.Record {
	c := parse.Counts{Objects: n, Bytes: 64 * n}
	return parse.Record{Stack: []parse.Frame{{Addr: 1, Func: fn}, {Addr: 2, Func: "main"}},
		Scheme: parse.Bernoulli, Rate: 1 << 19, InUse: c, Alloc: c}
}

func TestBuild(t *testing.T) {
	p := profile("jemalloc", true, false, rec("a", 5), rec("b", 3), rec("c", 1))
	r, err := Build([]*parse.Profile{p}, Options{Value: unbias.InUseSpace, By: aggregate.ByFunc, Confidence: 0.9, Method: ci.Auto, Top: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != 2 || r.Omitted != 2 || r.Rows[0].Key != "a" || r.Rows[1].Key != "b" {
		t.Fatalf("rows %+v omitted %d", r.Rows, r.Omitted)
	}
	if r.Total.Flat.Samples != 9 || r.Sources[0].Samples != 9 || r.Total.Cum != nil {
		t.Errorf("total %+v, source samples %v", r.Total.Flat, r.Sources[0].Samples)
	}
	a := r.Rows[0]
	if a.Cum == nil || a.Flat.Method != "exact" || !(a.Flat.Lo < a.Flat.Estimate && a.Flat.Estimate < a.Flat.Hi) {
		t.Errorf("row a: %+v cum %+v", a.Flat, a.Cum)
	}
	// A function that is only a caller has an empty flat group.
	r, _ = Build([]*parse.Profile{p}, Options{Value: unbias.InUseSpace, By: aggregate.ByFunc, Confidence: 0.9})
	for _, row := range r.Rows {
		if row.Key == "main" && (row.Flat.Method != "-" || row.Cum.Samples != 9) {
			t.Errorf("main: flat %+v cum %+v", row.Flat, row.Cum)
		}
	}
}

func TestBuildErrors(t *testing.T) {
	noAlloc := profile("jemalloc", true, false, rec("a", 1))
	noInUse := profile("nettrace", false, true, rec("a", 1))
	for _, tt := range []struct {
		p    *parse.Profile
		opt  Options
		want string
	}{
		{noAlloc, Options{Value: unbias.AllocSpace}, "has no allocation (alloc_*) values"},
		{noInUse, Options{Value: unbias.InUseObjects}, "has no in-use (inuse_*) values"},
		{noAlloc, Options{Value: unbias.InUseSpace, Window: true, From: 5}, "--from/--to select a time window of a trace"},
		{noAlloc, Options{Value: unbias.InUseSpace, Confidence: 2}, "confidence"},
	} {
		if _, err := Build([]*parse.Profile{tt.p}, tt.opt); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("err %v, want %q", err, tt.want)
		}
	}
}

func TestDefaults(t *testing.T) {
	heap := profile("jemalloc", true, true)
	trace := profile("nettrace", false, true)
	if DefaultValue([]*parse.Profile{heap}) != unbias.InUseSpace || DefaultValue([]*parse.Profile{trace}) != unbias.AllocSpace {
		t.Error("DefaultValue")
	}
	if DefaultBy([]*parse.Profile{heap}) != aggregate.ByFunc || DefaultBy([]*parse.Profile{trace}) != aggregate.ByType {
		t.Error("DefaultBy")
	}
	if !HasValue([]*parse.Profile{heap, trace}, unbias.AllocSpace) || HasValue([]*parse.Profile{heap, trace}, unbias.InUseSpace) {
		t.Error("HasValue")
	}
}

// BuildPerStack gives one per-stack report per value the inputs have, the
// chosen one first, with every stack.
func TestBuildPerStack(t *testing.T) {
	p := profile("jemalloc", true, true, rec("a", 5), rec("b", 3))
	reps, err := BuildPerStack([]*parse.Profile{p}, Options{Value: unbias.AllocObjects, By: aggregate.ByFunc, Top: 1, Confidence: 0.95})
	if err != nil {
		t.Fatal(err)
	}
	want := []unbias.Value{unbias.AllocObjects, unbias.InUseSpace, unbias.InUseObjects, unbias.AllocSpace}
	if len(reps) != len(want) {
		t.Fatalf("%d reports", len(reps))
	}
	for i, r := range reps {
		if r.Value != want[i] || r.By != aggregate.ByStack || len(r.Rows) != 2 || r.Omitted != 0 {
			t.Errorf("report %d: value %v by %v, %d rows", i, r.Value, r.By, len(r.Rows))
		}
	}
}

// Splitting aggregation across CPUs gives the rows one pass gives.
func TestParallelAggregation(t *testing.T) {
	var recs []parse.Record
	for i := range 3 * parallelMin {
		recs = append(recs, rec(string(rune('a'+i%7)), float64(1+i%5)))
	}
	p := profile("jemalloc", true, false, recs...)
	opt := Options{Value: unbias.InUseSpace, By: aggregate.ByFunc, Confidence: 0.95}
	par, err := Build([]*parse.Profile{p}, opt)
	if err != nil {
		t.Fatal(err)
	}
	one := aggregate.New(opt.By, opt.Value, aggregate.Filter{})
	one.AddProfile(recs)
	want := map[string]float64{}
	for _, g := range one.Groups() {
		want[g.Key] = g.Cum.Estimate
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }
	if !near(par.Total.Flat.Estimate, one.Total().Estimate) || par.Total.Flat.Samples != one.Total().Samples {
		t.Errorf("total %v, one pass %v", par.Total.Flat, one.Total())
	}
	for _, r := range par.Rows {
		if !near(r.Cum.Estimate, want[r.Key]) {
			t.Errorf("%s: cum %v, one pass %v", r.Key, r.Cum.Estimate, want[r.Key])
		}
	}
}
