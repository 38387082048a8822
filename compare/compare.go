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
	"sort"

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

// Pairs joins the rows of two reports of the same value and grouping by
// key, in key order, leaving out rows with nothing of their own on either
// side (--by func rows that are only callers). The reports should hold
// every row (Top 0). A --by stack row may come without its key
// (report.Options.KeylessStacks): it is paired and ordered by its stack
// as by the key it stands for, and keeps no key.
func Pairs(base, new *report.Report) []Row {
	seed := maphash.MakeSeed()
	byKey := make(map[uint64][]int, max(len(base.Rows), len(new.Rows))) // by the hash of the key: rows
	rows := make([]Row, 0, max(len(base.Rows), len(new.Rows)))
	var h maphash.Hash
	add := func(r *report.Row, isNew bool) {
		if r.Stats.N == 0 {
			return
		}
		h.SetSeed(seed)
		aggregate.HashStackKey(&h, r.Key, r.Stack)
		hk := h.Sum64()
		i := -1
		for _, j := range byKey[hk] {
			if aggregate.CompareStackKeys(rows[j].Key, rows[j].Stack, r.Key, r.Stack) == 0 {
				i = j
				break
			}
		}
		if i < 0 {
			i = len(rows)
			byKey[hk] = append(byKey[hk], i)
			rows = append(rows, Row{Key: r.Key, Stack: r.Stack})
		}
		if isNew {
			rows[i].New = r.Stats
		} else {
			rows[i].Base = r.Stats
		}
	}
	for i := range base.Rows {
		add(&base.Rows[i], false)
	}
	for i := range new.Rows {
		add(&new.Rows[i], true)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].keyLess(&rows[j]) })
	return rows
}

// keyLess orders rows by key, a keyless row's being its stack's.
func (r *Row) keyLess(o *Row) bool {
	return aggregate.CompareStackKeys(r.Key, r.Stack, o.Key, o.Stack) < 0
}

// Total pairs the two reports' totals. Its Key is empty, as a report's
// total's is: no row's key stands for it.
func Total(base, new *report.Report) Row {
	return Row{Base: base.Total.Stats, New: new.Total.Stats}
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
