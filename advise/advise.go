// Package advise is heapest's sampling-rate advisor: given the rows that
// matter, each split by allocation size, it finds the largest per-byte
// sampling period R at which every row's interval reaches a target
// relative half-width, and how many dumps at the current period would do
// the same. The intervals are heapest's own (ci.Interval on the statistics
// unbias.Samples builds, as report rows get them), evaluated at the sample
// counts a dump at R would have. docs/statistics.md derives it.
package advise

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mathext"

	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/unbias"
)

// DefaultAssurance is the share of dumps taken at the advised period
// whose row is to reach the target: the advice holds for a dump with
// fewer samples than expected, not only for the average one. It aims at
// 95% so that the simulation check (sim_test.go), which asks for 90%, is
// not at the mercy of its own sampling noise and of discrete counts.
const DefaultAssurance = 0.95

// DotnetRate is the mean sampling period of .NET's AllocationSampled
// events, fixed by the runtime (100 KiB).
const DotnetRate = 102400

// tinySize is the size a part of unknown sizes is taken to have: far below
// any period, so that each of its samples weighs the most it can (R) and
// the advice errs towards more samples.
const tinySize = 1

// normalFrom is the Poisson mean above which poissonLowerQuantile uses
// the normal approximation.
const normalFrom = 1e5

// maxLg bounds the periods searched: 2^50 bytes (1 PiB).
const maxLg = 50

// maxDumps bounds the dumps a merge may need before the advisor gives up.
const maxDumps = 1 << 30

// Part is the share of a row allocated at one size, in one dump.
type Part struct {
	// Size is the allocation size in bytes; 0 means the sizes are not
	// known (a jemalloc line mixing sizes), and the part is taken to be
	// of tiny allocations, the case that needs the most samples.
	Size float64
	// Bytes is the estimated bytes of the part.
	Bytes float64
}

// Row is one row of interest: its key and its allocations by size, per
// dump. Skip, when set, says why the row gets no advice.
type Row struct {
	Key   string
	Parts []Part
	Skip  string
}

// Target is the precision asked for.
type Target struct {
	// Precision is the relative half-width wanted: (hi − lo)/2 over the
	// estimate, the report's ± column.
	Precision  float64
	Confidence float64
	Method     ci.Method
	// Value is what the rows estimate (bytes or objects).
	Value unbias.Value
	// Assurance is the share of dumps that must reach the precision
	// (0: DefaultAssurance). It must lie in (0.5, 1).
	Assurance float64
}

// Check reports a target that cannot be met or makes no sense.
func (t Target) Check() error {
	switch {
	case !(t.Precision > 0) || math.IsInf(t.Precision, 0):
		return fmt.Errorf("precision %v: want a relative half-width above 0, such as 10%%", t.Precision)
	case !(t.Confidence > 0 && t.Confidence < 1):
		return fmt.Errorf("confidence %v: want a coverage strictly between 0 and 1", t.Confidence)
	case t.Assurance != 0 && !(t.Assurance > 0.5 && t.Assurance < 1):
		return fmt.Errorf("assurance %v: want a share of dumps strictly between 0.5 and 1", t.Assurance)
	}
	return nil
}

func (t Target) assurance() float64 {
	if t.Assurance == 0 {
		return DefaultAssurance
	}
	return t.Assurance
}

// HalfWidth is the relative half-width of the row's interval in a merge
// of dumps like it, each sampled with mean period rate, at the sample
// count that the target's assurance share of such merges reaches (see
// pessimistic). It is +Inf where that count is 0.
func (t Target) HalfWidth(r Row, rate float64, dumps int) (float64, error) {
	st := t.expected(r, rate, float64(dumps), 1)
	if st.Estimate <= 0 {
		return math.Inf(1), nil
	}
	scale := t.pessimistic(st)
	if scale == 0 {
		return math.Inf(1), nil
	}
	if scale < 1 {
		st = t.expected(r, rate, float64(dumps), scale)
	}
	res, err := ci.Interval(st, t.Method, t.Confidence)
	if err != nil {
		return 0, fmt.Errorf("%s at period %g: %w", r.Key, rate, err)
	}
	if res.Estimate <= 0 {
		return math.Inf(1), nil
	}
	return (res.Hi - res.Lo) / 2 / res.Estimate, nil
}

// expected is the statistics of the row's samples, per part count·π,
// scaled by scale: what a merge of dumps gets on average (scale 1).
func (t Target) expected(r Row, rate, dumps, scale float64) ci.Stats {
	var st ci.Stats
	for _, p := range r.Parts {
		z := p.Size
		if z <= 0 {
			z = tinySize
		}
		// Allocations are whole: a part's estimate of one sampled large
		// object (1.66 objects' worth at 1/π) would otherwise be a
		// fraction no period can count exactly, and no period would do.
		n := math.Round(p.Bytes / z)
		if n < 1 && p.Bytes > 0 {
			n = 1
		}
		n *= dumps
		s := n * -math.Expm1(-z/rate) * scale
		one := unbias.Samples{Count: s, Rate: rate, Size: z}.Stats(t.Value)
		st.Merge(&one)
	}
	// The width the method gives: what particular samples would hold
	// (Stats.Seen) is no expectation of it.
	st.Seen = 0
	return st
}

// pessimistic is the factor that takes every part's expected count down
// to what the assurance share of dumps reaches or exceeds. A weighted sum
// of Poisson counts with estimate y and variance v is as precise as
// a = y²/v plain counts (the gamma method's shape): the factor is k/a,
// k the lower (1 − assurance) quantile of Poisson(a). For one size this
// is the count's own quantile. 0 means k is 0.
func (t Target) pessimistic(st ci.Stats) float64 {
	if st.Var <= 0 {
		return 1
	}
	a := st.Estimate * st.Estimate / st.Var
	k := poissonLowerQuantile(a, 1-t.assurance())
	return math.Min(1, k/a)
}

// poissonLowerQuantile is the smallest k with P(X ≤ k) > q for X ~
// Poisson(a), q < 0.5: X ≥ k with probability at least 1 − q. Beyond
// normalFrom the normal approximation is used: its error there is far
// below a count, and the incomplete gamma function is slow.
func poissonLowerQuantile(a, q float64) float64 {
	if a > normalFrom {
		return math.Floor(a + math.Sqrt2*math.Erfinv(2*q-1)*math.Sqrt(a))
	}
	cdf := func(k float64) float64 { return mathext.GammaIncRegComp(k+1, a) }
	lo, hi := -1.0, math.Ceil(a)+1 // cdf(lo) ≤ q < cdf(hi): the median is below a+1
	for hi-lo > 1 {
		mid := math.Floor((lo + hi) / 2)
		if cdf(mid) > q {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// reaches reports whether the row reaches the target at rate in dumps.
func (t Target) reaches(r Row, rate float64, dumps int) (bool, error) {
	w, err := t.HalfWidth(r, rate, dumps)
	return w <= t.Precision, err
}

// Rate is the largest sampling period at which one dump's row reaches the
// target, found by bisection on log₂ R (the half-width grows with R). It
// is 1 (record every allocation) when no sampled period does.
func (t Target) Rate(r Row) (float64, error) {
	ok := func(lg float64) (bool, error) { return t.reaches(r, math.Exp2(lg), 1) }
	if top, err := ok(maxLg); err != nil || top {
		return math.Exp2(maxLg), err
	}
	if bottom, err := ok(0); err != nil || !bottom {
		return 1, err
	}
	lo, hi := 0.0, float64(maxLg)
	for hi-lo > 1e-3 {
		mid := (lo + hi) / 2
		good, err := ok(mid)
		if err != nil {
			return 0, err
		}
		if good {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Exp2(lo), nil
}

// Dumps is the fewest dumps sampled at rate whose merge reaches the
// target: the same workload in independent processes (dumps of one
// process over time do not add up, docs/statistics.md).
func (t Target) Dumps(r Row, rate float64) (int, error) {
	n := 1
	for {
		good, err := t.reaches(r, rate, n)
		if err != nil {
			return 0, err
		}
		if good {
			break
		}
		if n >= maxDumps {
			return 0, fmt.Errorf("%s: more than %d dumps at period %g would be needed", r.Key, maxDumps, rate)
		}
		n *= 2
	}
	lo := n / 2 // does not reach (0: nothing below 1 to try)
	for n-lo > 1 {
		mid := (lo + n) / 2
		good, err := t.reaches(r, rate, mid)
		if err != nil {
			return 0, err
		}
		if good {
			n = mid
		} else {
			lo = mid
		}
	}
	return n, nil
}
