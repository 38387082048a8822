package ci

import "slices"

// Memo computes intervals at one method and confidence, remembering those
// of statistics met before: a report or a comparison has thousands of
// rows of one or two samples of a few sizes, whose statistics repeat bit
// for bit, and an interval is an iterative inversion (tens of
// microseconds). The zero Memo is not ready: use NewMemo.
type Memo struct {
	method     Method
	confidence float64
	memo       map[Bits]Result
}

// memoContributions is the most contributions of statistics remembered:
// more are seldom met twice. memoSize is the most statistics remembered
// (some 20 MB of them).
const (
	memoContributions = 4
	memoSize          = 1 << 16
)

// NewMemo returns a Memo of Interval(·, m, confidence).
func NewMemo(m Method, confidence float64) *Memo {
	return &Memo{method: m, confidence: confidence, memo: map[Bits]Result{}}
}

// Interval is Interval(s, m, confidence), remembered.
func (mm *Memo) Interval(s Stats) (Result, error) {
	k := s.Bits()
	if r, ok := mm.memo[k]; ok {
		return r, nil
	}
	r, err := Interval(s, mm.method, mm.confidence)
	if err != nil || s.N > memoContributions || len(mm.memo) == memoSize {
		return r, err
	}
	r.Notes = slices.Clip(r.Notes) // shared: a note appended to one result copies them
	mm.memo[k] = r
	return r, nil
}

// DiffInterval is DiffInterval(base, new, m, alpha), its sides' intervals
// remembered when 1−alpha is mm's confidence.
func (mm *Memo) DiffInterval(base, new Stats, alpha float64) (lo, hi float64, err error) {
	if 1-alpha != mm.confidence {
		return DiffInterval(base, new, mm.method, alpha)
	}
	return diffInterval(base, new, alpha, mm.Interval)
}
