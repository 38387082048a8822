package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/unbias"
)

// input is a parsed profile with the records its parser would stream.
type input struct {
	p    *parse.Profile
	recs []parse.Record
}

func profile(format string, inuse, alloc bool, recs ...parse.Record) input {
	return input{&parse.Profile{Source: parse.Source{Path: "p." + format, Format: format}, HasInUse: inuse, HasAlloc: alloc}, recs}
}

// builder streams the inputs' records into a Builder.
func builder(t *testing.T, opt Options, ins ...input) (*Builder, error) {
	t.Helper()
	b := NewBuilder(opt)
	for _, in := range ins {
		read := func(sink parse.Sink, _ bool) (*parse.Profile, error) {
			for i := range in.recs {
				r := in.recs[i] // the sink may not keep what it is given
				r.Stack = append([]parse.Frame(nil), r.Stack...)
				sink.Record(&r)
				clear(r.Stack)
			}
			p := *in.p
			p.Records = len(in.recs)
			return &p, nil
		}
		if _, err := b.Add(read, nil, 0); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// buildReport is the report of the inputs.
func buildReport(t *testing.T, opt Options, ins ...input) (*Report, error) {
	t.Helper()
	b, err := builder(t, opt, ins...)
	if err != nil {
		return nil, err
	}
	return b.Report()
}

func rec(fn string, n float64) parse.Record {
	c := parse.Counts{Objects: n, Bytes: 64 * n, Size: 64}
	return parse.Record{Stack: []parse.Frame{{Addr: 1, Func: fn}, {Addr: 2, Func: "main"}},
		Scheme: parse.Bernoulli, Rate: 1 << 19, InUse: c, Alloc: c}
}

func TestBuild(t *testing.T) {
	p := profile("jemalloc", true, false, rec("a", 5), rec("b", 3), rec("c", 1))
	r, err := buildReport(t, Options{Value: unbias.InUseSpace, By: aggregate.ByFunc, Confidence: 0.9, Method: ci.Auto, Top: 2}, p)
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
	r, _ = buildReport(t, Options{Value: unbias.InUseSpace, By: aggregate.ByFunc, Confidence: 0.9}, p)
	for _, row := range r.Rows {
		if row.Key == "main" && (row.Flat.Method != "-" || row.Cum.Samples != 9) {
			t.Errorf("main: flat %+v cum %+v", row.Flat, row.Cum)
		}
	}
}

// EstimatesOnly gives the rows of the full report, with the same
// statistics and estimates but no interval.
func TestEstimatesOnly(t *testing.T) {
	p := profile("jemalloc", true, false, rec("a", 5), rec("b", 3), rec("c", 1))
	opt := Options{Value: unbias.InUseSpace, By: aggregate.ByFunc, Confidence: 0.9, Method: ci.Auto}
	full, err := buildReport(t, opt, p)
	if err != nil {
		t.Fatal(err)
	}
	opt.EstimatesOnly = true
	est, err := buildReport(t, opt, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(est.Rows) != len(full.Rows) {
		t.Fatalf("%d rows, want %d", len(est.Rows), len(full.Rows))
	}
	for i, r := range append(est.Rows, est.Total) {
		want := full.Total
		if i < len(full.Rows) {
			want = full.Rows[i]
		}
		if r.Key != want.Key || r.Stats != want.Stats || (r.CumStats == nil) != (want.CumStats == nil) || r.CumStats != nil && *r.CumStats != *want.CumStats || r.Flat.Estimate != r.Stats.Estimate {
			t.Errorf("row %q: %+v, want the statistics of %+v", r.Key, r, want)
		}
		if r.Stats.N > 0 && (r.Flat.Lo != r.Flat.Estimate || r.Flat.Hi != r.Flat.Estimate || r.Flat.Method != ci.MethodNone) {
			t.Errorf("row %q: %+v, want no interval", r.Key, r.Flat)
		}
	}
}

func TestBuildErrors(t *testing.T) {
	noAlloc := profile("jemalloc", true, false, rec("a", 1))
	noInUse := profile("nettrace", false, true, rec("a", 1))
	for _, tt := range []struct {
		p    input
		opt  Options
		want string
	}{
		{noAlloc, Options{Value: unbias.AllocSpace}, "has no allocation (alloc_*) values"},
		{noInUse, Options{Value: unbias.InUseObjects}, "has no in-use (inuse_*) values"},
		{noAlloc, Options{Value: unbias.InUseSpace, Window: true, From: 5}, "--from/--to select a time window of a trace"},
		{noAlloc, Options{Value: unbias.InUseSpace, Confidence: 2}, "confidence"},
		{profile("jfr", true, true, rec("a", 1)), Options{Value: unbias.AllocObjects, Confidence: 0.95}, "weigh bytes, not objects"},
	} {
		if _, err := buildReport(t, tt.opt, tt.p); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("err %v, want %q", err, tt.want)
		}
	}
}

func TestDefaults(t *testing.T) {
	heap := profile("jemalloc", true, true).p
	trace := profile("nettrace", false, true).p
	if DefaultValueFor([]*parse.Profile{heap}) != unbias.InUseSpace || DefaultValueFor([]*parse.Profile{trace}) != unbias.AllocSpace {
		t.Error("DefaultValueFor")
	}
	if DefaultByFor([]*parse.Profile{heap}) != aggregate.ByFunc || DefaultByFor([]*parse.Profile{trace}) != aggregate.ByType {
		t.Error("DefaultByFor")
	}
	// A JFR recording with old object samples has inuse values, but they
	// are a few kept objects: its default is what it estimates.
	jfr := profile("jfr", true, true).p
	if DefaultValueFor([]*parse.Profile{jfr}) != unbias.AllocSpace || !HasValue([]*parse.Profile{jfr}, unbias.InUseObjects) || HasValue([]*parse.Profile{jfr}, unbias.AllocObjects) {
		t.Error("DefaultValueFor or HasValue of a JFR recording")
	}
	// Through a Builder: the defaults are settled after reading.
	r, err := buildReport(t, Options{DefaultValue: true, DefaultBy: true, Confidence: 0.95}, profile("nettrace", false, true, rec("a", 2)))
	if err != nil || r.Value != unbias.AllocSpace || r.By != aggregate.ByType || r.Total.Flat.Samples != 2 {
		t.Errorf("defaults on a trace: %+v, %v", r, err)
	}
	if !HasValue([]*parse.Profile{heap, trace}, unbias.AllocSpace) || HasValue([]*parse.Profile{heap, trace}, unbias.InUseSpace) {
		t.Error("HasValue")
	}
}

// Stacks gives every stack (By and Top do not apply) with every value the
// inputs have, the chosen one first, largest first by it.
func TestStacks(t *testing.T) {
	p := profile("jemalloc", true, true, rec("a", 5), rec("b", 3))
	b, err := builder(t, Options{Value: unbias.AllocObjects, By: aggregate.ByFunc, Top: 1, Confidence: 0.95, AllValues: true}, p)
	if err != nil {
		t.Fatal(err)
	}
	st, err := b.Stacks()
	if err != nil {
		t.Fatal(err)
	}
	want := []unbias.Value{unbias.AllocObjects, unbias.InUseSpace, unbias.InUseObjects, unbias.AllocSpace}
	if !slices.Equal(st.Values, want) {
		t.Fatalf("values %v, want %v", st.Values, want)
	}
	var got []string
	err = st.Each(func(stack []uint32, _ string, stats []ci.Stats) error {
		var names []string
		for _, f := range stack {
			names = append(names, st.FuncName(f))
		}
		got = append(got, strings.Join(names, ";"))
		for i := range stats {
			if stats[i].N == 0 {
				t.Errorf("%v: no statistics for %s", names, st.Values[i])
			}
		}
		if names[0] == "a" && stats[0].Samples != 5 {
			t.Errorf("a: %v samples of alloc_objects, want 5", stats[0].Samples)
		}
		return nil
	})
	if err != nil || !slices.Equal(got, []string{"a;main", "b;main"}) {
		t.Errorf("stacks %v (%v), want a;main then b;main", got, err)
	}
}

// Reading inputs one by one into one table gives the rows reading them
// as one input gives: tables merge.
func TestInputsMerge(t *testing.T) {
	var recs []parse.Record
	for i := range 300 {
		recs = append(recs, rec(string(rune('a'+i%7)), float64(1+i%5)))
	}
	opt := Options{Value: unbias.InUseSpace, By: aggregate.ByFunc, Confidence: 0.95}
	one, err := buildReport(t, opt, profile("jemalloc", true, false, recs...))
	if err != nil {
		t.Fatal(err)
	}
	split, err := buildReport(t, opt, profile("jemalloc", true, false, recs[:100]...), profile("jemalloc", true, false, recs[100:]...))
	if err != nil {
		t.Fatal(err)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }
	if !near(split.Total.Flat.Estimate, one.Total.Flat.Estimate) || split.Total.Flat.Samples != one.Total.Flat.Samples {
		t.Errorf("total %v, one input %v", split.Total.Flat, one.Total.Flat)
	}
	if len(split.Sources) != 2 || split.Sources[0].Samples+split.Sources[1].Samples != one.Sources[0].Samples {
		t.Errorf("sources %+v", split.Sources)
	}
	want := map[string]ci.Result{}
	for _, r := range one.Rows {
		want[r.Key] = *r.Cum
	}
	for _, r := range split.Rows {
		if !near(r.Cum.Estimate, want[r.Key].Estimate) || !near(r.Cum.Hi, want[r.Key].Hi) {
			t.Errorf("%s: cum %v, one input %v", r.Key, r.Cum, want[r.Key])
		}
	}
}

// TestGapBounds checks where JFR gap bounds widen intervals: the rows of
// the two stacks a gap lies between, not the total nor the thread's row
// (the gap moves bytes within them).
func TestGapBounds(t *testing.T) {
	sample := func(fn string, w, spill, excess float64) parse.Record {
		return parse.Record{Stack: []parse.Frame{{Func: fn}}, Thread: "worker (tid 7)", Scheme: parse.Weighted,
			Alloc: parse.Counts{Bytes: w, Samples: 1}, Spill: spill, Excess: excess}
	}
	p := profile("jfr", false, true, sample("a", 1e6, 0, 0), sample("a", 1e6, 40e6, 0), sample("b", 41e6, 0, 40e6), sample("b", 1e6, 0, 0))
	plain := profile("jfr", false, true, sample("a", 1e6, 0, 0), sample("a", 1e6, 0, 0), sample("b", 41e6, 0, 0), sample("b", 1e6, 0, 0))
	rows := func(in input, by aggregate.By) *Report {
		r, err := buildReport(t, Options{Value: unbias.AllocSpace, By: by, Confidence: 0.95}, in)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	gap, noGap := rows(p, aggregate.ByFunc), rows(plain, aggregate.ByFunc)
	same := func(a, b ci.Result) bool { return a.Estimate == b.Estimate && a.Lo == b.Lo && a.Hi == b.Hi }
	if !same(gap.Total.Flat, noGap.Total.Flat) {
		t.Errorf("total widened: %+v vs %+v", gap.Total.Flat, noGap.Total.Flat)
	}
	byKey := func(r *Report) map[string]ci.Result {
		m := map[string]ci.Result{}
		for _, row := range r.Rows {
			m[row.Key] = row.Flat
		}
		return m
	}
	g, n := byKey(gap), byKey(noGap)
	if !(g["a"].Hi > n["a"].Hi+30e6) || g["a"].Lo != n["a"].Lo || !(g["b"].Lo < n["b"].Lo) || g["b"].Hi != n["b"].Hi {
		t.Errorf("a: %+v (without the gap %+v); b: %+v (%+v)", g["a"], n["a"], g["b"], n["b"])
	}
	th, thPlain := rows(p, aggregate.ByThread), rows(plain, aggregate.ByThread)
	if !same(th.Rows[0].Flat, thPlain.Rows[0].Flat) {
		t.Errorf("thread row widened: %+v vs %+v", th.Rows[0].Flat, thPlain.Rows[0].Flat)
	}
}

// A report's intervals (ci.Memo's, remembered) are the intervals
// ci.Interval gives, and the result of an empty group is a dash.
func TestIntervalsMemo(t *testing.T) {
	opt := Options{Confidence: 0.9, Method: ci.Auto}
	s := ci.Stats{N: 2, Estimate: 1 << 20, Var: 1 << 39, Samples: 2, MaxWeight: 1 << 19, P: 1, Unit: 64, Rate: 1 << 19}
	iv := newIntervals(opt)
	want, err := ci.Interval(s, opt.Method, opt.Confidence)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if got, err := iv.of(s); err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%+v (%v), want %+v", got, err, want)
		}
	}
	if got, _ := iv.of(ci.Stats{}); got.Method != "-" {
		t.Errorf("empty group: %+v", got)
	}
}

// TestKeyAbsent: a report by thread, type or size whose one row is the
// samples without one warns that the inputs record none; a report with other rows
// beside it, a cut one, or one by another key does not.
func TestKeyAbsent(t *testing.T) {
	g := func(keys ...string) []*aggregate.Group {
		var gs []*aggregate.Group
		for _, k := range keys {
			gs = append(gs, &aggregate.Group{Key: k})
		}
		return gs
	}
	for _, c := range []struct {
		by     aggregate.By
		groups []*aggregate.Group
		cut    int
		want   string
	}{
		{aggregate.ByType, g(aggregate.NoType), 0, "--by type: the inputs record no types, so every sample is under (no type)"},
		{aggregate.ByThread, g(aggregate.NoThread), 0, "--by thread: the inputs record no threads, so every sample is under (no thread)"},
		{aggregate.ByType, g("Foo", aggregate.NoType), 0, ""},
		{aggregate.ByType, g(aggregate.NoType), 3, ""},
		{aggregate.ByThread, g(aggregate.NoType), 0, ""},
		{aggregate.ByFunc, g(aggregate.NoType), 0, ""},
		{aggregate.ByType, nil, 0, ""},
		{aggregate.BySize, g(aggregate.MixedSize), 0, "--by size: no sample has one size of its own (a dump line of several sizes; JFR's weights, which are bytes, not an object's size), so every sample is under mixed"},
		{aggregate.BySize, g("1024", aggregate.MixedSize), 0, ""},
	} {
		if got := keyAbsent(c.by, c.groups, c.cut); got != c.want {
			t.Errorf("keyAbsent(%v, %d groups, cut %d) = %q, want %q", c.by, len(c.groups), c.cut, got, c.want)
		}
	}
}

// An alloc_* report of delta profiles and cumulative ones together says
// that a window may count twice; one of either kind alone, or in-use
// values, say nothing.
func TestMixedWindows(t *testing.T) {
	d, c := parse.Source{Path: "d.pb.gz", Delta: true}, parse.Source{Path: "c.pb.gz"}
	for _, tc := range []struct {
		v       unbias.Value
		sources []parse.Source
		want    string
	}{
		{unbias.AllocSpace, []parse.Source{d, c}, "alloc_space sums a delta profile (d.pb.gz) with a cumulative one:"},
		{unbias.AllocObjects, []parse.Source{d, d, c, c}, "alloc_objects sums 2 delta profiles (d.pb.gz, d.pb.gz) with 2 cumulative ones:"},
		{unbias.InUseSpace, []parse.Source{d, c}, ""},
		{unbias.AllocSpace, []parse.Source{d, d}, ""},
		{unbias.AllocSpace, []parse.Source{c, c}, ""},
	} {
		got := mixedWindows(tc.v, tc.sources)
		if tc.want == "" && got != "" || !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s of %d sources: %q, want it to start %q", tc.v, len(tc.sources), got, tc.want)
		}
	}
}

// Many Go profiles at a period other than the runtime's default carry a
// forced sample each, which their sum's intervals do not allow for: said
// of raw profiles and of merges of them alike (the inputs' summary).
func TestForcedSamplesNotice(t *testing.T) {
	goAt := func(lo, hi float64, n int) *parse.Merged {
		return &parse.Merged{Inputs: n, Formats: map[string]int{"pprof-go": n}, RateMin: lo, RateMax: hi}
	}
	for _, tc := range []struct {
		name string
		m    *parse.Merged
		want bool
	}{
		{"default period", goAt(524288, 524288, 50), false},
		{"few processes", goAt(1<<20, 1<<20, 9), false},
		{"a fleet at 1MiB", goAt(1<<20, 1<<20, 10), true},
		{"default and 1MiB", goAt(524288, 1<<20, 10), true},
		{"every allocation", goAt(1, 1, 50), false},
		{"with jemalloc", &parse.Merged{Formats: map[string]int{"pprof-go": 10, "jemalloc": 1}, RateMin: 1 << 20, RateMax: 1 << 20}, false},
		{"none", nil, false},
	} {
		if got := forcedSamples(tc.m) != ""; got != tc.want {
			t.Errorf("%s: notice %v, want %v", tc.name, got, tc.want)
		}
	}
}
