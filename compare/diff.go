package compare

import (
	"math"
	"sort"

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
	Rows               []Row
	Total              Row
	// Omitted counts the rows cut by top.
	Omitted int
}

// New compares two reports of the same value and grouping, each with
// every row, and keeps the top rows by the size of their change (0: all).
func New(base, new *report.Report, m ci.Method, top int) (*Diff, error) {
	alpha := 1 - new.Confidence
	d := &Diff{Base: base, New: new, Confidence: new.Confidence, Rows: Pairs(base, new)}
	var ps []float64
	var tested []int
	for i := range d.Rows {
		if err := d.Rows[i].Test(); err != nil {
			return nil, err
		}
		if d.Rows[i].Tested {
			ps = append(ps, d.Rows[i].P)
			tested = append(tested, i)
		}
	}
	qs := ci.BenjaminiHochberg(ps)
	for k, i := range tested {
		d.Rows[i].Q = qs[k]
		if qs[k] <= alpha {
			d.Rows[i].Significant = true
			d.Discoveries++
		}
	}
	d.Tests = len(tested)
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
	d.sortAndCut(top)
	for i := range d.Rows {
		if err := d.Rows[i].Intervals(m, 1-d.Level); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// sortAndCut orders the rows by the size of their change, largest
// first, then by key, and keeps top of them.
func (d *Diff) sortAndCut(top int) {
	sort.SliceStable(d.Rows, func(i, j int) bool {
		a, b := math.Abs(d.Rows[i].Diff), math.Abs(d.Rows[j].Diff)
		if a != b {
			return a > b
		}
		return d.Rows[i].keyLess(&d.Rows[j])
	})
	if top > 0 && len(d.Rows) > top {
		d.Omitted = len(d.Rows) - top
		d.Rows = d.Rows[:top]
	}
	// Keyless --by stack rows get their keys now, those kept only.
	for i := range d.Rows {
		d.Rows[i].Key = aggregate.KeyOf(d.Rows[i].Key, d.Rows[i].Stack)
	}
}
