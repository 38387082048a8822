// Package compare pairs the rows of two reports, a baseline and a new
// profile, and computes per row the change between them: the interval on
// the ratio NEW/BASE and on the difference, and the p-value of "no
// change" (ci.RatioInterval, ci.DiffInterval, ci.RatioPValues). It is
// heapest diff's table model, with the Benjamini–Hochberg decision over
// its rows, and the rows heapest ci's baseline gate tests.
package compare

import (
	"hash/maphash"
	"math"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/report"
)

// Row is one group on both sides.
type Row struct {
	Key string
	// Stack is leaf first, for --by stack.
	Stack []string
	// Base and New are the group's statistics on each side (empty where
	// the group is absent).
	Base, New ci.Stats
	// Tested is false when a side has no honest interval: the row is then
	// shown but not tested, and its change has no interval.
	Tested bool
	// Ratio is NEW/BASE (+Inf for a row new in NEW), Lo and Hi its
	// interval; Diff is NEW − BASE, DiffLo and DiffHi its interval. The
	// intervals are at Diff.Level.
	Ratio, Lo, Hi        float64
	Diff, DiffLo, DiffHi float64
	// P is the two-sided p-value of "no change"; Q the Benjamini–Hochberg
	// adjusted one; Significant says Q ≤ 1 − confidence.
	P, Q        float64
	Significant bool
}

// Rows are the rows of a comparison, made one at a time when asked for:
// a --by stack comparison has a million of them, of 300 bytes each.
type Rows interface {
	Len() int
	// Row makes the i-th row, its change not yet computed.
	Row(i int) Row
}

// RowSlice is rows already made.
type RowSlice []Row

// Len is the number of rows.
func (rs RowSlice) Len() int { return len(rs) }

// Row returns the i-th row.
func (rs RowSlice) Row(i int) Row { return rs[i] }

// Join pairs the rows of two reports of the same value and grouping by
// key, leaving out rows with nothing of their own on either side (--by
// func rows that are only callers): base's rows in its order, then those
// only new has, in its. The reports should hold every row (Top 0). A
// --by stack row may come without its key (report.Options.KeylessStacks):
// it is paired by its stack as by the key it stands for, and keeps no key.
func Join(base, new *report.Report) Rows {
	return joined{base: base, new: new, pairs: pairUp(base, new)}
}

// joined is two reports' rows paired, each row made when asked for.
type joined struct {
	base, new *report.Report
	pairs     []pair
}

func (j joined) Len() int { return len(j.pairs) }

func (j joined) Row(i int) Row { return j.pairs[i].pairRow(j.base, j.new) }

// pair is a row of the comparison as the indices of its rows on each side
// (-1 where it has none): 8 bytes where a Row is 300, so that joining and
// ordering a --by stack comparison of a million rows moves little.
type pair struct{ base, new int32 }

// key is the key (or keyless stack) of p's row.
func (p pair) key(base, new *report.Report) (string, []string) {
	r := p.row(base, new)
	return r.Key, r.Stack
}

// row is one of p's report rows.
func (p pair) row(base, new *report.Report) *report.Row {
	if p.base >= 0 {
		return &base.Rows[p.base]
	}
	return &new.Rows[p.new]
}

// pairUp joins the rows of base and new by key, in the order first met.
// Keys are found by their hash; rows whose keys share a hash are chained.
func pairUp(base, new *report.Report) []pair {
	n := max(len(base.Rows), len(new.Rows))
	seed := maphash.MakeSeed()
	first := make(map[uint64]int32, n) // by the hash of the key: the first pair
	var next []int32                   // of each pair, the next with its hash (-1: none)
	ps := make([]pair, 0, n)
	var h maphash.Hash
	add := func(i int, r *report.Row, isNew bool) {
		if r.Stats.N == 0 {
			return
		}
		h.SetSeed(seed)
		aggregate.HashStackKey(&h, r.Key, r.Stack)
		hk := h.Sum64()
		j, ok := first[hk]
		if !ok {
			j = -1
		}
		for ; j >= 0; j = next[j] {
			k, s := ps[j].key(base, new)
			if aggregate.CompareStackKeys(k, s, r.Key, r.Stack) == 0 {
				break
			}
		}
		if j < 0 {
			j = int32(len(ps))
			prev, had := first[hk]
			if !had {
				prev = -1
			}
			first[hk] = j
			next = append(next, prev)
			ps = append(ps, pair{-1, -1})
		}
		if isNew {
			ps[j].new = int32(i)
		} else {
			ps[j].base = int32(i)
		}
	}
	for i := range base.Rows {
		add(i, &base.Rows[i], false)
	}
	for i := range new.Rows {
		add(i, &new.Rows[i], true)
	}
	return ps
}

// Overlap counts the rows of a comparison by the sides that have them.
type Overlap struct{ Shared, BaseOnly, NewOnly int }

// Disjoint reports whether both sides have rows and none is on both: two
// profiles of different programs, or of one named differently on each
// side (symbolized on one only), where every row is new or gone.
func (o Overlap) Disjoint() bool { return o.Shared == 0 && o.BaseOnly > 0 && o.NewOnly > 0 }

func overlapOf(ps []pair) Overlap {
	var o Overlap
	for _, p := range ps {
		switch {
		case p.base >= 0 && p.new >= 0:
			o.Shared++
		case p.base >= 0:
			o.BaseOnly++
		default:
			o.NewOnly++
		}
	}
	return o
}

// OverlapOf counts the rows rs pairs (Join's) by the sides that have them.
func OverlapOf(rs Rows) Overlap {
	if j, ok := rs.(joined); ok {
		return overlapOf(j.pairs)
	}
	var o Overlap
	for i := range rs.Len() {
		r := rs.Row(i)
		switch {
		case r.Base.N > 0 && r.New.N > 0:
			o.Shared++
		case r.Base.N > 0:
			o.BaseOnly++
		case r.New.N > 0:
			o.NewOnly++
		}
	}
	return o
}

// pairRow is p's row, its change not yet computed.
func (p pair) pairRow(base, new *report.Report) Row {
	var r Row
	r.Key, r.Stack = p.key(base, new)
	// A side without the row holds nothing seen, and up to one unseen
	// sample of its own period (ci's absent).
	r.Base.MaxWeight, r.New.MaxWeight = base.UnseenWeight(), new.UnseenWeight()
	if p.base >= 0 {
		r.Base = base.Rows[p.base].Stats
	}
	if p.new >= 0 {
		r.New = new.Rows[p.new].Stats
	}
	r.perProcess(base, new)
	return r
}

// PerProcess reports whether base and new hold different numbers of
// processes, and are then compared per process: each side is a sum, and
// one run more on a side would be a growth of a run's worth. Rows by
// source are processes themselves, and compared as they are.
func PerProcess(base, new *report.Report) bool {
	return base.Processes() != new.Processes() && new.By != aggregate.BySource
}

// perProcess makes r's sides each the mean of its processes, when they
// hold different numbers of them (PerProcess).
func (r *Row) perProcess(base, new *report.Report) {
	if PerProcess(base, new) {
		r.Base.Scale(1 / float64(base.Processes()))
		r.New.Scale(1 / float64(new.Processes()))
	}
}

// Total pairs the two reports' totals. Its Key is empty, as a report's
// total's is: no row's key stands for it.
func Total(base, new *report.Report) Row {
	r := Row{Base: base.Total.Stats, New: new.Total.Stats}
	r.perProcess(base, new)
	return r
}

// Estimates fills in the point estimates of the change.
func (r *Row) Estimates() {
	b, n := r.Base.Estimate, r.New.Estimate
	r.Diff = n - b
	switch {
	case b > 0:
		r.Ratio = n / b
	case n > 0:
		r.Ratio = math.Inf(1)
	default:
		r.Ratio = 1
	}
}

// Test computes the row's estimates and its two-sided p-value of no
// change. A row a side of which has no interval is left untested.
func (r *Row) Test() error {
	r.Estimates()
	inc, dec, err := ci.RatioPValues(r.Base, r.New, 1)
	if err == ci.ErrNoComparison {
		r.Tested, r.P, r.Q = false, math.NaN(), math.NaN()
		return nil
	}
	if err != nil {
		return err
	}
	r.Tested, r.P = true, min(1, 2*min(inc, dec))
	return nil
}

// Intervals computes a tested row's intervals on the ratio and the
// difference at level 1−alpha.
func (r *Row) Intervals(m ci.Method, alpha float64) error {
	if !r.Tested {
		return nil
	}
	var err error
	if r.Lo, r.Hi, err = ci.RatioInterval(r.Base, r.New, alpha); err != nil {
		return err
	}
	r.DiffLo, r.DiffHi, err = ci.DiffInterval(r.Base, r.New, m, alpha)
	return err
}
