package compare

import (
	"cmp"
	"math"
	"slices"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/report"
)

// Diff is heapest diff's table model: the rows of two reports with the
// change of each, and the total.
//
// Many rows are many tests: the rows called changed are those
// Benjamini–Hochberg selects at false discovery rate α = 1 − confidence,
// and every row's intervals are at level 1 − R·α/m, for R rows selected of
// m tested (1 − α/m when none is): Benjamini and Yekutieli's (2005)
// false-coverage-rate adjustment, which makes "the interval on the change
// excludes no change" the same statement as "the row is selected". The
// total is not one of the m: its interval is at the confidence itself.
type Diff struct {
	Base, New  *report.Report
	Confidence float64
	// Tests is m, the rows tested; Discoveries R, those selected; Level
	// the confidence of the rows' intervals.
	Tests, Discoveries int
	Level              float64
	// Increased and Decreased split the Discoveries by the sign of their
	// change, over every row (not only those top keeps).
	Increased, Decreased int
	Rows                 []Row
	Total                Row
	// Omitted counts the rows cut by top.
	Omitted int
	// Overlap counts every row by the sides that have it.
	Overlap Overlap
}

// New compares two reports of the same value and grouping, each with
// every row, and keeps the top rows by the size of their change (0: all).
//
// Every pair of rows is tested, but only the rows kept are made: a pair is
// scored as its change and p-value (a --by stack diff has a million pairs,
// and a Row is 300 bytes).
func New(base, new *report.Report, m ci.Method, top int) (*Diff, error) {
	alpha := 1 - new.Confidence
	d := &Diff{Base: base, New: new, Confidence: new.Confidence}
	ps := pairUp(base, new)
	d.Overlap = overlapOf(ps)
	sc := make([]score, len(ps))
	var pvals []float64
	for i, p := range ps {
		r := p.pairRow(base, new)
		if err := r.Test(); err != nil {
			return nil, err
		}
		sc[i] = score{diff: r.Diff, q: math.NaN()}
		if r.Tested {
			sc[i].tested = len(pvals)
			pvals = append(pvals, r.P)
		} else {
			sc[i].tested = -1
		}
	}
	qs := ci.BenjaminiHochberg(pvals)
	for i := range sc {
		if t := sc[i].tested; t >= 0 {
			sc[i].q = qs[t]
			if qs[t] <= alpha {
				d.Discoveries++
				switch {
				case sc[i].diff > 0:
					d.Increased++
				case sc[i].diff < 0:
					d.Decreased++
				}
			}
		}
	}
	d.Tests = len(pvals)
	d.Level = 1 - alpha
	if d.Tests > 0 {
		d.Level = 1 - float64(max(d.Discoveries, 1))*alpha/float64(d.Tests)
	}
	d.Total = Total(base, new)
	if err := d.Total.Test(); err != nil {
		return nil, err
	}
	if err := d.Total.Intervals(m, alpha); err != nil {
		return nil, err
	}
	d.Total.Significant = d.Total.Tested && d.Total.P <= alpha
	// The level comes from every row's test; the intervals are computed
	// for the rows kept only (every row was checked by its test): on two
	// dumps of 45,000 functions they were half of a diff's time.
	kept := order(ps, sc, base, new)
	if top > 0 && len(kept) > top {
		d.Omitted = len(kept) - top
		kept = kept[:top]
	}
	d.Rows = make([]Row, len(kept))
	for i, k := range kept {
		r := &d.Rows[i]
		*r = ps[k].pairRow(base, new)
		if err := r.Test(); err != nil {
			return nil, err
		}
		r.Q = sc[k].q
		r.Significant = r.Tested && r.Q <= alpha
		// Keyless --by stack rows get their keys now, those kept only.
		r.Key = aggregate.KeyOf(r.Key, r.Stack)
		if err := r.Intervals(m, 1-d.Level); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// Direction is a sign of change, as heapest diff --fail-on names it.
type Direction int

// The directions; the zero Direction is none.
const (
	Increase Direction = iota + 1 // NEW above BASE
	Decrease                      // NEW below BASE
	Change                        // either
)

func (dir Direction) String() string {
	switch dir {
	case Increase:
		return "increase"
	case Decrease:
		return "decrease"
	case Change:
		return "change"
	}
	return ""
}

// Changed returns how many rows were called changed in direction dir, of
// every row tested. The total is not one of them.
func (d *Diff) Changed(dir Direction) int {
	switch dir {
	case Increase:
		return d.Increased
	case Decrease:
		return d.Decreased
	case Change:
		return d.Discoveries
	}
	return 0
}

// score is what ordering and correcting a pair's test need of it: its
// change, the index of its p-value among the tested (-1: untested), and
// its adjusted p-value.
type score struct {
	diff   float64
	tested int
	q      float64
}

// order returns the indices of ps by the size of their change, largest
// first (a change that is not a number last), then by key: a total
// order, so the rows come out the same whatever order they were paired in.
func order(ps []pair, sc []score, base, new *report.Report) []int32 {
	idx := make([]int32, len(ps))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(i, j int32) int {
		a, b := math.Abs(sc[i].diff), math.Abs(sc[j].diff)
		if an, bn := math.IsNaN(a), math.IsNaN(b); an != bn {
			return cmp.Compare(b2i(an), b2i(bn))
		} else if a != b && !an {
			return cmp.Compare(b, a)
		}
		ak, as := ps[i].key(base, new)
		bk, bs := ps[j].key(base, new)
		return aggregate.CompareStackKeys(ak, as, bk, bs)
	})
	return idx
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
