package ci

import (
	"math"
	"sync"

	"gonum.org/v1/gonum/mathext"
)

// ExactInterval is the interval for N·unit when samples ~ Binomial(N, p)
// with N unknown: N_lo = s + Q(α/2; s, p), N_hi = s + 1 + Q(1−α/2; s+1, p),
// Q the negative-binomial quantile. The +1 is the .NET design's correction
// for a window that does not end on a sample. With approx the quantiles are
// Camp–Paulson's. p = 1 means every allocation was recorded.
func ExactInterval(est, samples, p, unit, alpha float64, approx bool) Result {
	s := math.Round(samples)
	r := Result{Estimate: est, Method: Exact.String()}
	if approx {
		r.Method = CampPaulson.String()
		r.Notes = []string{NoteCampPaulson}
	}
	if p >= 1 {
		r.Lo, r.Hi = s*unit, s*unit
		return r
	}
	lower, upper := negBinLowerQuantile, negBinUpperQuantile
	if approx {
		lower = campPaulsonQuantile
		upper = func(b, s, p float64) float64 { return campPaulsonQuantile(1-b, s, p) }
	}
	nLo := s
	if s > 0 {
		nLo += lower(alpha/2, s, p)
	}
	nHi := s + 1 + upper(alpha/2, s+1, p)
	r.Lo, r.Hi = nLo*unit, nHi*unit
	return r
}

// PresentExactInterval is the exact interval for a group known to have at
// least one sample — every row of a dump, since a stack with no sample is
// not written — and is what auto uses. The lower bound inverts the
// zero-truncated binomial: the smallest N with P(S ≥ s | S ≥ 1; N) > α/2.
// Without this, rows that usually do not appear at all (expected samples
// ≈ 0.1–0.3) are covered only ~90% of the times they do appear; for s ≥ 5
// or so it equals ExactInterval's. The upper bound is the largest N with
// P(S ≤ s; N) > α/2, N = s + Q(1−α/2; s+1): ExactInterval's without the
// .NET window correction (+1), which a heap dump has no window to need
// and which would add a whole allocation to rows of a few huge ones.
// Conditioning on s ≥ 1 only lowers the chance of missing above, so the
// upper bound stays valid (interval_test.go checks both exhaustively).
func PresentExactInterval(est, samples, p, unit, alpha float64) Result {
	s := math.Round(samples)
	if s < 1 {
		return ExactInterval(est, samples, p, unit, alpha, false)
	}
	r := Result{Estimate: est, Method: Exact.String()}
	if p >= 1 {
		r.Lo, r.Hi = s*unit, s*unit
		return r
	}
	r.Lo = (s + presentLowerQuantile(alpha/2, s, p)) * unit
	r.Hi = (s + negBinUpperQuantile(alpha/2, s+1, p)) * unit
	return r
}

// presentLowerQuantile is the smallest y with P(Y ≤ y) ≥ a·P(S ≥ 1; y+s),
// where P(S ≥ 1; N) = 1 − q^N: the lower bound N = y+s inverts the
// zero-truncated binomial. The plain quantile y₀ satisfies it (a ≥
// a·P(S ≥ 1)), and the condition holds from its smallest y on, so a
// bisection on [0, y₀] finds that y. (Iterating y ← Q(a·P(S ≥ 1; y+s))
// stopped one allocation high at times: its fixed point compares the
// CDF below y with the probability at y.)
func presentLowerQuantile(a, s, p float64) float64 {
	lq := math.Log1p(-p)
	y0 := negBinLowerQuantile(a, s, p)
	if s*(1-p) > exactLimit {
		// Quantiles there come from Cornish–Fisher, and P(S ≥ 1) is 1 to
		// double precision from s ≥ 2·10⁴ on: nothing to condition.
		return y0
	}
	holds := func(y float64) bool {
		cdf, _ := negBinTails(y, s, p, 1-p)
		return cdf >= a*-math.Expm1((y+s)*lq)
	}
	lo, hi := -1.0, y0 // holds(hi); lo is below every y that holds
	for hi-lo > 1 {
		mid := math.Floor((lo + hi) / 2)
		if mid <= lo || mid >= hi {
			break // beyond 2⁵³ doubles are no integers apart: hi is as near as any
		}
		if holds(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// OffsetInterval is the .NET design's Approach 2 for bytes allocated by
// samples samples with per-byte probability p and offset sum u:
// [Q(α/2; s, p) + u, Q(1−α/2; s, p) + u]. With no sample the upper bound is
// that of one sample (the window may end just before one).
func OffsetInterval(est, samples, p, u, alpha float64, approx bool) Result {
	return OffsetWindowInterval(est, samples, p, u, alpha, approx, false, false)
}

// OffsetWindowInterval is OffsetInterval for an observation window that does
// not start (openStart) or end (openEnd) on a sample: the design's
// compensation takes the lower bound at s−1 samples and the upper at s+1,
// since the unobserved bytes before the first and after the last sample of
// the window hold at most one more failure run each.
func OffsetWindowInterval(est, samples, p, u, alpha float64, approx, openStart, openEnd bool) Result {
	return offsetWindow(est, samples, p, u, alpha, approx, openStart, openEnd, false)
}

// PresentOffsetWindowInterval is OffsetWindowInterval for a group known to
// have at least one sample — every row of a trace, since a type or stack
// with no AllocationSampled event is not in it — and is what auto uses.
// As PresentExactInterval does, its lower bound inverts the zero-truncated
// distribution: without that, types that expect about 0.2 samples per
// trace were covered 91% of the times they appeared, every miss low. The
// condition takes the bytes up to the last sample as the trials (the
// fewest the group can have), which conditions least, so the bound errs
// low.
func PresentOffsetWindowInterval(est, samples, p, u, alpha float64, openStart, openEnd bool) Result {
	return offsetWindow(est, samples, p, u, alpha, false, openStart, openEnd, true)
}

func offsetWindow(est, samples, p, u, alpha float64, approx, openStart, openEnd, present bool) Result {
	s := math.Round(samples)
	r := Result{Estimate: est, Method: Exact.String()}
	lower, upper := negBinLowerQuantile, negBinUpperQuantile
	if approx {
		r.Method = CampPaulson.String()
		r.Notes = []string{NoteCampPaulson}
		lower = campPaulsonQuantile
		upper = func(b, s, p float64) float64 { return campPaulsonQuantile(1-b, s, p) }
	}
	sLo, sHi := s, s
	if openStart {
		sLo = s - 1
	}
	if openEnd || s == 0 {
		sHi = s + 1
	}
	if openStart {
		r.Notes = append(r.Notes, NoteOpenStart)
	}
	if openEnd {
		r.Notes = append(r.Notes, NoteOpenEnd)
	}
	r.Lo = u
	switch {
	case sLo > 0 && present:
		r.Lo = presentLowerQuantile(alpha/2, sLo, p) + u
	case sLo > 0:
		r.Lo = lower(alpha/2, sLo, p) + u
	}
	r.Hi = upper(alpha/2, sHi, p) + u
	return r
}

// OffsetEstimate is Approach 2's point estimate s·q/p + u.
func OffsetEstimate(samples, p, u float64) float64 {
	return samples*(1-p)/p + u
}

// GammaInterval is the Fay–Feuer (1997) interval for a weighted sum of
// Poisson counts with estimate y, variance estimate v and largest weight
// wMax: the lower bound is the α/2 quantile of a gamma with mean y and
// variance v, the upper the 1−α/2 quantile of one with mean y + wMax and
// variance v + wMax² (as if one more count of the largest weight had been
// seen). It is exact for a single Poisson count and conservative for
// mixtures.
func GammaInterval(y, v, wMax, alpha float64) Result {
	r := Result{Estimate: y, Method: Gamma.String()}
	switch {
	case y == 0:
		r.Lo = 0
	case v == 0:
		r.Lo = y
	default:
		r.Lo = gammaQuantile(y*y/v, v/y, alpha/2, false)
	}
	m, w := y+wMax, v+wMax*wMax
	if w == 0 {
		r.Hi = y
	} else {
		r.Hi = math.Max(y, gammaQuantile(m*m/w, w/m, alpha/2, true))
	}
	return r
}

// wilsonHilfertyShape is the shape above which gamma quantiles use the
// Wilson–Hilferty cube-root approximation.
const wilsonHilfertyShape = 1e4

// gammaQuantile is the lower (or, with upper, the upper) tail-prob
// quantile of a gamma distribution with the given shape and scale.
func gammaQuantile(shape, scale, tail float64, upper bool) float64 {
	if !(shape > 0) || !(scale > 0) {
		return 0 // a gamma of shape or scale 0 is the point mass at 0
	}
	if shape > wilsonHilfertyShape {
		// Wilson–Hilferty: relative error O(shape^(−3/2)), below 3·10⁻⁷
		// here, where the interval itself is a few percent wide; and many
		// times faster than inverting the incomplete gamma function.
		z := normalQuantile(tail)
		if upper {
			z = -z
		}
		c := 1 - 1/(9*shape) + z/(3*math.Sqrt(shape))
		return shape * c * c * c * scale
	}
	if upper {
		// The complement's inverse (a false-position search in gonum) is
		// several times slower; tails here are never so small that 1−tail
		// loses precision that matters.
		return gammaIncRegInv(shape, 1-tail) * scale
	}
	return gammaIncRegInv(shape, tail) * scale
}

// gammaIncRegInv is mathext.GammaIncRegInv, remembered: the shape of a
// group of one sample depends on its size alone, and a dump of hundreds
// of thousands of functions, most of a sample or two, asks for the same
// few shapes again and again (each inversion a false-position search of
// some microseconds). Remembered by the arguments' bits, the results are
// the same numbers.
func gammaIncRegInv(shape, p float64) float64 {
	k := [2]uint64{math.Float64bits(shape), math.Float64bits(p)}
	gammaInvMemo.Lock()
	x, ok := gammaInvMemo.m[k]
	gammaInvMemo.Unlock()
	if ok {
		return x
	}
	x = mathext.GammaIncRegInv(shape, p)
	gammaInvMemo.Lock()
	if gammaInvMemo.m == nil || len(gammaInvMemo.m) >= gammaInvMemoMax {
		gammaInvMemo.m = map[[2]uint64]float64{} // a bound, not an LRU: a fresh start is as good
	}
	gammaInvMemo.m[k] = x
	gammaInvMemo.Unlock()
	return x
}

// gammaInvMemo holds gammaIncRegInv's results, for any goroutine.
var gammaInvMemo struct {
	sync.Mutex
	m map[[2]uint64]float64
}

// gammaInvMemoMax bounds gammaInvMemo (some 2 MB).
const gammaInvMemoMax = 1 << 16
