package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/report"
)

func single(n, z, r float64) ci.Stats {
	if n == 0 {
		return ci.Stats{}
	}
	pi := -math.Expm1(-z / r)
	return ci.Stats{N: 1, Estimate: n * z / pi, Var: n * z * z * (1 - pi) / (pi * pi), Samples: n,
		MaxWeight: z * (1 - pi) / pi, P: pi, Unit: z, Rate: r}
}

func rep(rows map[string]float64) *report.Report {
	r := &report.Report{Confidence: 0.95}
	var tot ci.Stats
	for k, n := range rows {
		st := single(n, 4000, 131072)
		res, _ := ci.Interval(st, ci.Auto, 0.95)
		r.Rows = append(r.Rows, report.Row{Key: k, Stats: st, Flat: res})
		tot.Merge(&st)
	}
	r.Total = report.Row{Key: "total", Stats: tot}
	return r
}

// randomSides are 20 rows a side, of 0 to 59 samples each.
func randomSides(rng *rand.Rand) (base, new map[string]float64) {
	base, new = map[string]float64{}, map[string]float64{}
	for i := range 20 {
		k := string(rune('a' + i))
		base[k] = float64(rng.IntN(60))
		new[k] = float64(rng.IntN(60))
	}
	return base, new
}

// mustNew is the diff of two sides' rows (rep), keeping top rows (0: all).
func mustNew(t *testing.T, base, new map[string]float64, top int) *Diff {
	t.Helper()
	d, err := New(rep(base), rep(new), ci.Auto, top)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDiffSelectionMatchesIntervals checks the property the diff's table
// rests on: a row is marked changed exactly when its interval, at the
// adjusted level, excludes no change.
func TestDiffSelectionMatchesIntervals(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 50 {
		base, new := randomSides(rng)
		d := mustNew(t, base, new, 0)
		sig := 0
		for _, r := range d.Rows {
			if !r.Tested {
				continue
			}
			excludes := r.Lo > 1 || r.Hi < 1
			if excludes != r.Significant {
				t.Errorf("trial %d row %s: [%v, %v] at %v, significant %v (p %v, q %v)", trial, r.Key, r.Lo, r.Hi, d.Level, r.Significant, r.P, r.Q)
			}
			if r.Significant {
				sig++
			}
		}
		if sig != d.Discoveries {
			t.Errorf("trial %d: %d significant rows, %d discoveries", trial, sig, d.Discoveries)
		}
	}
}

// The rows a top keeps are those of the whole diff, with the same
// intervals: the level comes from every row's test, not the kept ones'.
func TestDiffTopKeepsIntervals(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 20 {
		base, new := randomSides(rng)
		all, top := mustNew(t, base, new, 0), mustNew(t, base, new, 3)
		if top.Level != all.Level || top.Omitted != len(all.Rows)-3 {
			t.Errorf("trial %d: level %v, %d omitted; whole diff: level %v, %d rows", trial, top.Level, top.Omitted, all.Level, len(all.Rows))
		}
		for i, r := range top.Rows {
			if got, want := fmt.Sprintf("%+v", r), fmt.Sprintf("%+v", all.Rows[i]); got != want {
				t.Errorf("trial %d row %d:\n got %s\nwant %s", trial, i, got, want)
			}
		}
	}
}

func TestPairsJoinAndOrder(t *testing.T) {
	d, err := New(rep(map[string]float64{"a": 10, "b": 50}), rep(map[string]float64{"b": 52, "c": 200}), ci.Auto, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Rows) != 2 || d.Rows[0].Key != "c" || d.Omitted != 1 {
		t.Fatalf("rows %+v, omitted %d", d.Rows, d.Omitted)
	}
	if !math.IsInf(d.Rows[0].Ratio, 1) || d.Rows[0].Base.N != 0 {
		t.Errorf("a new row: ratio %v", d.Rows[0].Ratio)
	}
	if d.Tests != 3 {
		t.Errorf("%d tests, want 3", d.Tests)
	}
}

// Rows of --by stack without their keys (report.Options.KeylessStacks)
// pair, order and cut as the same rows with them, and the rows kept get
// their keys; stacks whose frames hold the key's ';' pair by key.
func TestKeylessStacksPairAsKeyed(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	frames := []string{"main", "a", "a;b", "b", "a.b", "(anon)", ""}
	var stacks [][]string
	seen := map[string]bool{}
	for len(stacks) < 40 {
		s := make([]string, 1+rng.IntN(4))
		for i := range s {
			s[i] = frames[rng.IntN(len(frames))]
		}
		if k := fmt.Sprint(s); !seen[k] {
			seen[k] = true
			stacks = append(stacks, s)
		}
	}
	side := func(keyed bool) *report.Report {
		r := &report.Report{Confidence: 0.95}
		for _, s := range stacks {
			if rng.IntN(3) == 0 {
				continue
			}
			st := single(float64(1+rng.IntN(5)), 4000, 131072) // ties, many
			row := report.Row{Stack: s, Stats: st}
			if keyed {
				row.Key = aggregate.StackKey(s)
			}
			r.Rows = append(r.Rows, row)
			r.Total.Stats.Merge(&st)
		}
		return r
	}
	for round := range 20 {
		seed := rng.Uint64()
		rng = rand.New(rand.NewPCG(seed, 1))
		base, new := side(true), side(true)
		rng = rand.New(rand.NewPCG(seed, 1))
		kbase, knew := side(false), side(false)
		want, err := New(base, new, ci.Auto, 10)
		if err != nil {
			t.Fatal(err)
		}
		got, err := New(kbase, knew, ci.Auto, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Rows) != len(want.Rows) || got.Omitted != want.Omitted || got.Tests != want.Tests {
			t.Fatalf("round %d: %d rows, %d omitted, %d tests; want %d, %d, %d", round,
				len(got.Rows), got.Omitted, got.Tests, len(want.Rows), want.Omitted, want.Tests)
		}
		for i := range want.Rows {
			g, w := got.Rows[i], want.Rows[i]
			if g.Key != w.Key || fmt.Sprint(g.Stack) != fmt.Sprint(w.Stack) || g.Base != w.Base || g.New != w.New || g.Q != w.Q {
				t.Fatalf("round %d: row %d: %q %q; want %q %q", round, i, g.Key, g.Stack, w.Key, w.Stack)
			}
		}
	}
}

// A diff's rows are the same whatever order each side's rows come in:
// they are ordered by change, then by key, a total order.
func TestDiffOrderFree(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	side := func(keys []string) *report.Report {
		r := &report.Report{Confidence: 0.95}
		for _, k := range keys {
			st := single(float64(1+len(k)%3), 4000, 131072) // ties, many
			r.Rows = append(r.Rows, report.Row{Key: k, Stats: st})
			r.Total.Stats.Merge(&st)
		}
		return r
	}
	var keys []string
	for i := range 60 {
		keys = append(keys, fmt.Sprintf("k%03d", i*7%60))
	}
	want, err := New(side(keys[:40]), side(keys[20:]), ci.Auto, 0)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 10 {
		b, n := slices.Clone(keys[:40]), slices.Clone(keys[20:])
		rng.Shuffle(len(b), func(i, j int) { b[i], b[j] = b[j], b[i] })
		rng.Shuffle(len(n), func(i, j int) { n[i], n[j] = n[j], n[i] })
		got, err := New(side(b), side(n), ci.Auto, 0)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := fmt.Sprintf("%+v", got.Rows), fmt.Sprintf("%+v", want.Rows); g != w {
			t.Fatalf("round %d: rows\n%s\nwant\n%s", round, g, w)
		}
	}
	for i := 1; i < len(want.Rows); i++ {
		a, b := &want.Rows[i-1], &want.Rows[i]
		if math.Abs(a.Diff) < math.Abs(b.Diff) || math.Abs(a.Diff) == math.Abs(b.Diff) && a.Key >= b.Key {
			t.Fatalf("rows %d and %d out of order: %q %g, %q %g", i-1, i, a.Key, a.Diff, b.Key, b.Diff)
		}
	}
}

// Join pairs rows by key, base's first in its order, then those only new
// has; rows with no samples are left out.
func TestJoin(t *testing.T) {
	row := func(k string, n float64) report.Row { return report.Row{Key: k, Stats: single(n, 4000, 131072)} }
	base := &report.Report{Rows: []report.Row{row("b", 1), row("a", 2), row("z", 0)}}
	new := &report.Report{Rows: []report.Row{row("c", 3), row("a", 4), row("y", 0)}}
	rows := Join(base, new)
	var got []string
	for i := range rows.Len() {
		r := rows.Row(i)
		got = append(got, fmt.Sprintf("%s:%g/%g", r.Key, r.Base.Samples, r.New.Samples))
	}
	if want := []string{"b:1/0", "a:2/4", "c:0/3"}; !slices.Equal(got, want) {
		t.Errorf("Join: %v, want %v", got, want)
	}
}

// Changed counts the rows called changed by the sign of their change, over
// every row, whatever top keeps: what heapest diff --fail-on fails on.
func TestChangedByDirection(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 30 {
		base, new := randomSides(rng)
		all, top := mustNew(t, base, new, 0), mustNew(t, base, new, 2)
		var up, down int
		for _, r := range all.Rows {
			switch {
			case r.Significant && r.Diff > 0:
				up++
			case r.Significant && r.Diff < 0:
				down++
			}
		}
		for _, d := range []*Diff{all, top} {
			for dir, want := range map[Direction]int{Increase: up, Decrease: down, Change: up + down, 0: 0} {
				if got := d.Changed(dir); got != want {
					t.Errorf("trial %d, %d rows kept: Changed(%q) = %d, want %d", trial, len(d.Rows), dir, got, want)
				}
			}
		}
	}
	d := mustNew(t, map[string]float64{"a": 50, "b": 50, "c": 5}, map[string]float64{"a": 5, "b": 52, "c": 50}, 0)
	if d.Changed(Increase) != 1 || d.Changed(Decrease) != 1 || d.Changed(Change) != 2 {
		t.Errorf("a shrank, c grew: increased %d, decreased %d, changed %d", d.Changed(Increase), d.Changed(Decrease), d.Changed(Change))
	}
}

// The overlap of two reports counts their rows by the sides that have
// them, whether from the pairs or the rows made; disjoint means both have
// rows and share none.
func TestOverlap(t *testing.T) {
	for _, tt := range []struct {
		base, new map[string]float64
		want      Overlap
		disjoint  bool
	}{
		{map[string]float64{"a": 3, "b": 4}, map[string]float64{"b": 5, "c": 1}, Overlap{Shared: 1, BaseOnly: 1, NewOnly: 1}, false},
		{map[string]float64{"a": 3}, map[string]float64{"c": 1, "d": 2}, Overlap{BaseOnly: 1, NewOnly: 2}, true},
		{map[string]float64{"a": 3}, map[string]float64{}, Overlap{BaseOnly: 1}, false},
		{map[string]float64{"a": 3, "z": 0}, map[string]float64{"z": 2}, Overlap{BaseOnly: 1, NewOnly: 1}, true}, // a row with nothing is no row
	} {
		rows := Join(rep(tt.base), rep(tt.new))
		made := make(RowSlice, rows.Len())
		for i := range made {
			made[i] = rows.Row(i)
		}
		d := mustNew(t, tt.base, tt.new, 1)
		for name, got := range map[string]Overlap{"Join": OverlapOf(rows), "rows": OverlapOf(made), "Diff": d.Overlap} {
			if got != tt.want || got.Disjoint() != tt.disjoint {
				t.Errorf("%v vs %v, %s: %+v (disjoint %v), want %+v", tt.base, tt.new, name, got, got.Disjoint(), tt.want)
			}
		}
	}
}

// TestPerProcess: sides of different numbers of processes are compared
// per process. Three processes of one program against one, each with the
// same samples of a row, show no change (as sums they grew threefold),
// and the ratio and p-value are those of comparing the means; sides of
// as many processes are compared as sums.
func TestPerProcess(t *testing.T) {
	one := rep(map[string]float64{"a": 20, "b": 5})
	three := rep(map[string]float64{"a": 60, "b": 15})
	three.Merged = &parse.Merged{Inputs: 3, Processes: 3}
	d, err := New(one, three, ci.Auto, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !PerProcess(one, three) || d.Discoveries != 0 {
		t.Fatalf("3 processes against 1: per process %v, %d rows changed", PerProcess(one, three), d.Discoveries)
	}
	for _, r := range append(d.Rows, d.Total) {
		if math.Abs(r.Ratio-1) > 1e-9 || math.Abs(r.New.Estimate-r.Base.Estimate) > 1e-6*r.Base.Estimate || r.P < 0.5 {
			t.Errorf("row %q: ratio %v, base %v, new %v, p %v", r.Key, r.Ratio, r.Base.Estimate, r.New.Estimate, r.P)
		}
	}
	// As many processes a side: sums, as before.
	one3 := rep(map[string]float64{"a": 20, "b": 5})
	one3.Merged = &parse.Merged{Inputs: 3, Processes: 3}
	d, err = New(one3, three, ci.Auto, 0)
	if err != nil {
		t.Fatal(err)
	}
	if PerProcess(one3, three) || math.Abs(d.Total.Ratio-3) > 1e-9 {
		t.Errorf("3 processes a side: per process %v, total ratio %v, want the sums' 3", PerProcess(one3, three), d.Total.Ratio)
	}
}
