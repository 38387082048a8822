package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/unbias"
)

// forkDump is a jemalloc dump of a process whose one library is mapped at
// base: one stack of 4 KiB allocations, its line unbiased by jemalloc
// (prof_unbias: the header's totals differ from the stack's).
func forkDump(base uint64) string {
	return fmt.Sprintf(`heap_v2/4096
  t*: 301: 1232896 [0: 0]
  t0: 301: 1232896 [0: 0]
@ 0x%x 0x%x
  t*: 300: 1228800 [0: 0]
  t0: 300: 1228800 [0: 0]

MAPPED_LIBRARIES:
%x-%x r-xp 00000000 08:01 123 /nonexistent/libwork.so
`, base+0x1100, base+0x2200, base, base+0x10000)
}

// TestCorrelatedInputs: the dumps of k processes forked from one parent
// (one mapping, told apart by the pids in their names) may be one sample
// counted k times, and a merge of k copies of one dump gets exactly k
// times that dump's interval: its variance is k² that of one copy, not k
// (ci.Stats.Correlate). Dumps of k processes of their own are
// independent, and their merge keeps the independent interval.
func TestCorrelatedInputs(t *testing.T) {
	const k = 6
	report := func(bases []uint64) *Report {
		t.Helper()
		r, err := forkBuilder(t, bases).Report()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	one := report([]uint64{0x7f0000000000}).Total.Flat
	forked := make([]uint64, k)
	own := make([]uint64, k)
	for i := range k {
		forked[i] = 0x7f0000000000
		own[i] = 0x7f0000000000 + uint64(i)<<32
	}
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-9*want }

	r := report(forked)
	got := r.Total.Flat
	if !near(got.Estimate, k*one.Estimate) || !near(got.Lo, k*one.Lo) || !near(got.Hi, k*one.Hi) {
		t.Errorf("%d forked copies: %v – %v (estimate %v), want %d × one dump's %v – %v", k, got.Lo, got.Hi, got.Estimate, k, one.Lo, one.Hi)
	}
	if !hasNote(got.Notes, ci.NoteCorrelated) || len(r.Notes) != 1 || !strings.HasPrefix(r.Notes[0], "6 inputs share one process's identity (jeprof.1000.0.m0.heap,") {
		t.Errorf("notes %q, report notes %q: want the correlation said", got.Notes, r.Notes)
	}

	r = report(own)
	ind := r.Total.Flat
	if hasNote(ind.Notes, ci.NoteCorrelated) || len(r.Notes) != 0 {
		t.Errorf("independent processes: notes %q, report notes %q", ind.Notes, r.Notes)
	}
	if !near(ind.Estimate, got.Estimate) || !(ind.Hi-ind.Lo < (got.Hi-got.Lo)/2) {
		t.Errorf("independent processes: %v – %v, want the estimate %v with an interval under half of the correlated one's %v – %v", ind.Lo, ind.Hi, got.Estimate, got.Lo, got.Hi)
	}
}

var forkOptions = Options{Value: unbias.InUseSpace, By: aggregate.ByFunc, Confidence: 0.95, Method: ci.Gamma}

// forkBuilder is a Builder of one forkDump per base, under jemalloc's
// names with pids of their own.
func forkBuilder(t *testing.T, bases []uint64) *Builder {
	t.Helper()
	b := NewBuilder(forkOptions)
	for i, base := range bases {
		name := fmt.Sprintf("jeprof.%d.0.m0.heap", 1000+i)
		if _, _, err := b.AddReader(name, strings.NewReader(forkDump(base)), Input{}); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// TestCorrelatedOnce: the table's statistics are widened once, whichever
// read comes first; ReportBy works on a copy of the Builder that shares
// its table.
func TestCorrelatedOnce(t *testing.T) {
	bases := []uint64{0x7f0000000000, 0x7f0000000000, 0x7f0000000000}
	want, err := forkBuilder(t, bases).Report()
	if err != nil {
		t.Fatal(err)
	}
	b := forkBuilder(t, bases)
	for i := range 3 {
		by, err := b.ReportBy(aggregate.ByStack)
		if err != nil {
			t.Fatal(err)
		}
		r, err := b.Report()
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range []ci.Result{by.Total.Flat, r.Total.Flat} {
			if got.Lo != want.Total.Flat.Lo || got.Hi != want.Total.Flat.Hi {
				t.Fatalf("read %d: total %v – %v, want %v – %v", i, got.Lo, got.Hi, want.Total.Flat.Lo, want.Total.Flat.Hi)
			}
		}
	}
}

func hasNote(notes []string, n string) bool {
	for _, x := range notes {
		if x == n {
			return true
		}
	}
	return false
}

// TestCorrelatedFleet: with --fleet-size, forked inputs are said to be
// taken for processes drawn one by one, which a host drawn whole is not.
func TestCorrelatedFleet(t *testing.T) {
	opt := forkOptions
	opt.FleetSize = 60
	for _, c := range []struct {
		bases []uint64
		want  bool
	}{
		{[]uint64{0x7f0000000000, 0x7f0000000000}, true},
		{[]uint64{0x7f0000000000, 0x7f1000000000}, false},
	} {
		b := NewBuilder(opt)
		for i, base := range c.bases {
			if _, _, err := b.AddReader(fmt.Sprintf("jeprof.%d.0.m0.heap", 1000+i), strings.NewReader(forkDump(base)), Input{}); err != nil {
				t.Fatal(err)
			}
		}
		r, err := b.Report()
		if err != nil {
			t.Fatal(err)
		}
		got := slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "does not model that cluster") })
		if got != c.want {
			t.Errorf("bases %x: cluster note %v, want %v (notes %q)", c.bases, got, c.want, r.Notes)
		}
	}
}
