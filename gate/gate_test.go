package gate

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/compare"
)

func TestParseRule(t *testing.T) {
	for _, c := range []struct {
		in    string
		total bool
		by    aggregate.By
		limit float64
	}{
		{"total<=2GiB", true, 0, 2 << 30},
		{"func=^rocksdb::<=50MiB", false, aggregate.ByFunc, 50 << 20},
		{"type=System.String<=10MB", false, aggregate.ByType, 10e6},
		{" leaf = x|y <= 4096 ", false, aggregate.ByLeaf, 4096},
		{"thread=worker-\\d+<=1KiB", false, aggregate.ByThread, 1024},
		{"source=host1<=0", false, aggregate.BySource, 0},
		{"func=a<=b<=1MiB", false, aggregate.ByFunc, 1 << 20}, // the last <= splits
	} {
		r, err := ParseRule(c.in)
		if err != nil || r.Total != c.total || r.Limit != c.limit || !c.total && r.By != c.by {
			t.Errorf("ParseRule(%q) = %+v, %v", c.in, r, err)
		}
	}
	for _, bad := range []string{"total<2GiB", "size=1<=2", "func=(<=1", "func<=1MiB", "total<=2Gx", "func=x<=-1"} {
		if _, err := ParseRule(bad); err == nil {
			t.Errorf("ParseRule(%q) accepted", bad)
		}
	}
}

// TestRuleFits: a byte unit fits byte values only, a count's suffix
// object values only (a size must write its unit in full); a bare number
// fits both.
func TestRuleFits(t *testing.T) {
	for _, c := range []struct {
		in           string
		space, count bool // fits bytes, objects
		limit        float64
	}{
		{"total<=2G", false, true, 2e9},
		{"func=x<=1.5k", false, true, 1500},
		{"func=x<=2MiB", true, false, 2 << 20},
		{"func=x<=2MB", true, false, 2e6},
		{"total<=4096", true, true, 4096},
		{"total<=0.5", true, false, 0.5}, // half an object is no count
	} {
		r, err := ParseRule(c.in)
		if err != nil || r.Limit != c.limit {
			t.Fatalf("ParseRule(%q) = %+v, %v", c.in, r, err)
		}
		if err := r.Fits(true, "inuse_space"); (err == nil) != c.space || err != nil && !strings.Contains(err.Error(), "write the unit in full") {
			t.Errorf("%q for bytes: %v", c.in, err)
		}
		if err := r.Fits(false, "inuse_objects"); (err == nil) != c.count || err != nil && !strings.Contains(err.Error(), "give a count, such as 2000 or 2k") && !strings.Contains(err.Error(), "a count is a whole number") {
			t.Errorf("%q for objects: %v", c.in, err)
		}
	}
}

func TestParseRulesNamesLine(t *testing.T) {
	_, err := ParseRules(strings.NewReader("# c\n\ntotal<=1GiB\nfunc=x<1\n"), "b.txt")
	if err == nil || !strings.HasPrefix(err.Error(), "b.txt:4: ") {
		t.Errorf("error %v, want one naming b.txt:4", err)
	}
}

// single is a row of n samples of z-byte objects at rate r.
func single(n, z, r float64) ci.Stats {
	pi := -math.Expm1(-z / r)
	return ci.Stats{N: 1, Estimate: n * z / pi, Var: n * z * z * (1 - pi) / (pi * pi), Samples: n,
		MaxWeight: z * (1 - pi) / pi, P: pi, Unit: z, Rate: r}
}

func TestBudgetVerdicts(t *testing.T) {
	st := single(50, 4000, 131072) // about 6.5 MB, ±28%
	opt := Options{Confidence: 0.95, Holm: true, Inputs: 1, Rate: 131072, Format: "jemalloc"}
	budget := func(limit float64) Budget { return Budget{Rule: Rule{Text: "b", Total: true, Limit: limit}, Stats: st} }
	res, err := Evaluate([]Budget{budget(2e6), budget(6e6), budget(20e6)}, nil, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	want := []Verdict{Fail, Inconclusive, Pass}
	for i, g := range res.Gates {
		if g.Verdict != want[i] {
			t.Errorf("limit %v: %s, want %s (interval %v–%v, p %v)", g.Limit, g.Verdict, want[i], g.Result.Lo, g.Result.Hi, g.PAdjusted)
		}
	}
	if h := res.Gates[1].Hint; !strings.Contains(h, "more dumps") || !strings.Contains(h, "lg_prof_sample") {
		t.Errorf("inconclusive hint %q", h)
	}
	if res.Passed() || res.Failed != 1 || res.Inconclusive != 1 || res.Tests != 3 {
		t.Errorf("passed %v, failed %d, inconclusive %d, tests %d", res.Passed(), res.Failed, res.Inconclusive, res.Tests)
	}
}

// TestHolmTurnsFailIntoInconclusive: a budget that fails alone is only
// inconclusive among many tests whose p-values push it past the level.
func TestHolmTurnsFailIntoInconclusive(t *testing.T) {
	st := single(50, 4000, 131072)
	r, _ := ci.Interval(st, ci.Auto, 0.95)
	limit := r.Lo * 0.999 // just below the lower bound: p just under 2.5%
	var bs []Budget
	for range 10 {
		bs = append(bs, Budget{Rule: Rule{Text: "b", Total: true, Limit: limit}, Stats: st})
	}
	alone, _ := Evaluate(bs[:1], nil, nil, Options{Confidence: 0.95, Holm: true})
	many, _ := Evaluate(bs, nil, nil, Options{Confidence: 0.95, Holm: true})
	if alone.Gates[0].Verdict != Fail || many.Gates[0].Verdict != Inconclusive {
		t.Errorf("alone %s, among 10 %s; want fail and inconclusive", alone.Gates[0].Verdict, many.Gates[0].Verdict)
	}
}

func TestBaselineVerdicts(t *testing.T) {
	rows := []compare.Row{
		{Key: "doubled", Base: single(80, 4000, 131072), New: single(160, 4000, 131072)},
		{Key: "same", Base: single(80, 4000, 131072), New: single(82, 4000, 131072)},
		{Key: "gone", Base: single(80, 4000, 131072)},
	}
	total := compare.Row{Key: "total", Base: single(160, 4000, 131072), New: single(242, 4000, 131072)}
	res, err := Evaluate(nil, compare.RowSlice(rows), &total, Options{Confidence: 0.95, Holm: true, Threshold: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Verdict{}
	for _, g := range res.Gates {
		got[g.Name] = g.Verdict
	}
	if got["baseline doubled"] != Fail || got["baseline total"] != Fail || len(got) != 2 {
		t.Errorf("verdicts %v", got)
	}
	if *res.Rows != (RowsSummary{Tested: 3, Failed: 1}) {
		t.Errorf("rows %+v, want 1 of 3 failed", *res.Rows)
	}
	if _, listed := got["baseline same"]; listed {
		t.Errorf("an unchanged row is listed: %v", got)
	}
	if res.Tests != 4 {
		t.Errorf("%d tests, want 4 (total and three rows)", res.Tests)
	}
	// The gates shown have their ratio's interval (computed for them
	// only).
	for _, g := range res.Gates {
		var r compare.Row
		switch g.Name {
		case "baseline doubled":
			r = rows[0]
		case "baseline total":
			r = total
		default:
			continue
		}
		lo, hi, _ := ci.RatioInterval(r.Base, r.New, 0.05)
		if g.Result.Lo != lo || g.Result.Hi != hi || !(lo > 0) {
			t.Errorf("%s: interval %g – %g, want %g – %g", g.Name, g.Result.Lo, g.Result.Hi, lo, hi)
		}
	}
}

// A --by stack row that came without its key (report.Options.KeylessStacks)
// is shown, when it fails, with the key and name of the same row with
// its key.
func TestKeylessStackGatesNamed(t *testing.T) {
	stack := []string{"malloc", "grow", "main"}
	eval := func(key string) *Result {
		rows := []compare.Row{
			{Key: key, Stack: stack, Base: single(80, 4000, 131072), New: single(160, 4000, 131072)},
			{Key: aggregate.StackKey([]string{"same"}), Stack: []string{"same"}, Base: single(80, 4000, 131072), New: single(82, 4000, 131072)},
		}
		total := compare.Row{Base: single(160, 4000, 131072), New: single(242, 4000, 131072)}
		res, err := Evaluate(nil, compare.RowSlice(rows), &total, Options{Confidence: 0.95, Holm: true, Threshold: 0.1})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	keyed, keyless := eval(aggregate.StackKey(stack)), eval("")
	if len(keyed.Gates) != 2 || len(keyless.Gates) != 2 {
		t.Fatalf("%d and %d gates, want 2 (total, the grown row)", len(keyed.Gates), len(keyless.Gates))
	}
	for i, g := range keyless.Gates {
		w := keyed.Gates[i]
		if g.Name != w.Name || g.Key != w.Key || g.Verdict != w.Verdict {
			t.Errorf("gate %d: %q key %q %s; want %q key %q %s", i, g.Name, g.Key, g.Verdict, w.Name, w.Key, w.Verdict)
		}
	}
	if *keyless.Rows != *keyed.Rows || *keyed.Rows != (RowsSummary{Tested: 2, Failed: 1}) {
		t.Errorf("rows %+v and %+v, want 1 of 2 failed", *keyless.Rows, *keyed.Rows)
	}
	if keyed.Failed != 2 {
		t.Errorf("%d gates failed, want 2: the total and the grown row", keyed.Failed)
	}
	if g := keyless.Gates[1]; g.Name != "baseline malloc < grow < main" || g.Key != "main;grow;malloc" {
		t.Errorf("grown row: %q key %q", g.Name, g.Key)
	}
}

// The gates shown are the same whatever order the rows come in: failed
// rows by p-value, ties by key.
func TestBaselineOrderFree(t *testing.T) {
	rows := []compare.Row{
		{Key: "b", Base: single(80, 4000, 131072), New: single(160, 4000, 131072)},
		{Key: "a", Base: single(80, 4000, 131072), New: single(160, 4000, 131072)},
		{Key: "c", Base: single(80, 4000, 131072), New: single(200, 4000, 131072)},
		{Key: "same", Base: single(80, 4000, 131072), New: single(82, 4000, 131072)},
	}
	total := compare.Row{Base: single(320, 4000, 131072), New: single(602, 4000, 131072)}
	names := func(rows []compare.Row) []string {
		res, err := Evaluate(nil, compare.RowSlice(rows), &total, Options{Confidence: 0.95, Holm: true, Threshold: 0.1})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, g := range res.Gates {
			out = append(out, fmt.Sprintf("%s %s %.6g-%.6g", g.Name, g.Verdict, g.Result.Lo, g.Result.Hi))
		}
		return out
	}
	want := names(rows)
	if !strings.HasPrefix(want[1], "baseline c ") || !strings.HasPrefix(want[2], "baseline a ") || !strings.HasPrefix(want[3], "baseline b ") {
		t.Fatalf("gates %q: want the total, then c, a, b", want)
	}
	rev := slices.Clone(rows)
	slices.Reverse(rev)
	if got := names(rev); !slices.Equal(got, want) {
		t.Errorf("rows reversed: gates\n%q\nwant\n%q", got, want)
	}
}

// TestMoreSamples: the hint's words for k times the samples. More dumps
// of processes forked from the parent of correlated inputs would join
// their group, which the intervals allow for as one sample counted once
// per input: the hint asks for other processes' dumps then.
func TestMoreSamples(t *testing.T) {
	for _, c := range []struct {
		k       float64
		opt     Options
		perSide bool
		want    string
	}{
		{2, Options{Inputs: 3, Format: "jemalloc", Rate: 4096}, false, "about 3 more dumps or a sampling period of 2.00KiB (lg_prof_sample 11)"},
		{2, Options{Inputs: 3, Format: "jemalloc", Rate: 4096, Correlated: 3}, false,
			"about 3 more dumps, of processes not forked from the parent these 3 share (forked siblings sample alike) or a sampling period of 2.00KiB (lg_prof_sample 11)"},
		{1.5, Options{Inputs: 1, Format: "pprof-go", Rate: 524288}, true, "about 1 more profile on each side or a sampling period of 341KiB (runtime.MemProfileRate = 349525)"},
		{1.5, Options{Inputs: 1, Format: "pprof-v8", Rate: 131072}, false,
			"about 1 more profile or a sampling period of 85.3KiB (the V8 heap profiler's sampling interval, intervalBytes = 87381)"},
		{2, Options{Inputs: 1, Format: "heapprofile", Rate: 524288}, false,
			"about 1 more profile or a sampling period of 256KiB (node --heap-prof-interval=262144)"},
		{4, Options{}, false, "about 4 times the samples"},
		{1e7, Options{Inputs: 2}, false, "far more than this run has"},
	} {
		if got := moreSamples(c.k, c.opt, c.perSide); got != c.want {
			t.Errorf("moreSamples(%v, %+v, %v) = %q, want %q", c.k, c.opt, c.perSide, got, c.want)
		}
	}
}

// A budgets file saved with a byte order mark and CRLF line ends (a
// Windows editor's UTF-8) reads as the same rules.
func TestParseRulesBOM(t *testing.T) {
	rules, err := ParseRules(strings.NewReader("\ufefftotal<=1GiB\r\nfunc=x<=2MiB\r\n"), "b.txt")
	if err != nil || len(rules) != 2 || !rules[0].Total || rules[1].Limit != 2<<20 {
		t.Errorf("rules %+v, error %v; want total<=1GiB and func=x<=2MiB", rules, err)
	}
}
