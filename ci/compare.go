package ci

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/mathext"
)

// Comparing two groups: a group's estimate is a weighted sum of Poisson
// counts, which Fay and Feuer (1997) approximate by a gamma distribution
// with the estimate's mean and variance, taking the upper end at one more
// count of the largest weight. The ratio of two independent such sums is
// then approximately F-distributed (Fay 1999, for ratios of directly
// standardized rates): with y the estimate, v its variance and w its
// largest weight,
//
//	θ_lo = y_new / (y_base + w_base) / F(1−γ; 2a_new, 2a*_base)
//	θ_hi = (y_new + w_new) / y_base · F(1−γ; 2a_base, 2a*_new)
//
// where a = y²/v and a* = (y+w)²/(v+w²). For plain Poisson counts (w = 1,
// v = y) this is the exact conditional interval of a rate ratio, so small
// counts are covered as the single-group intervals cover them. The
// difference gets Zou and Donner's MOVER interval from the groups' own
// intervals (so each side keeps its exact, Approach 2 or gamma method).

// ErrNoComparison is returned when a side has no honest interval (method
// none): no test of a change can rest on it.
var ErrNoComparison = errors.New("no interval on one side: the change cannot be tested")

// end is one group reduced to what the F interval needs, at one end of
// the interval: the estimate used there and its gamma shape (+Inf when
// the value is known exactly, 0 when it is exactly 0).
type end struct{ y, shape float64 }

// absent is the weight of the one count that side s, a group with no
// contribution, may still hold unseen: its own, where its side says one
// (Stats.MaxWeight of an empty group: that side's sampling period, see
// compare.Row), else the other side's largest weight, as a row that
// appears on one side of a comparison only may hold that much on the
// other. A side sampled at a longer period than the other misses more.
func absent(s, other Stats) float64 {
	if s.N == 0 && s.MaxWeight > 0 {
		return s.MaxWeight
	}
	return other.MaxWeight
}

// ends are a group's lower and upper ends, other the comparison's other
// side. A group with no contribution stands for a value that may still be
// there unseen: its upper end is one count of weight absent(s, other).
// With whole set, the upper end's extra count weighs at least one
// large allocation missed whole (Stats.LargeMissed): an allocation of many
// sampling periods is sampled almost surely, so its weight (1−π)/π·Z is
// tiny, yet when one is missed the value drops by all of Z at once, a
// jump the gamma approximation does not have (see missedLevel).
func ends(s, other Stats, whole bool) (lo, hi end) {
	if s.N == 0 {
		return end{0, 0}, end{absent(s, other), 1}
	}
	if s.Complete {
		return end{s.Estimate, math.Inf(1)}, end{s.Estimate, math.Inf(1)}
	}
	w := s.MaxWeight
	if whole {
		w = math.Max(w, s.wholeWeight())
	}
	lo.y = math.Max(0, s.Estimate-s.Excess) // Bias is upward only
	hi.y = s.Estimate + s.Bias + s.Spill + w
	lo.shape = shape(lo.y, s.Var)
	hi.shape = shape(hi.y, s.Var+w*w)
	return lo, hi
}

// missedLevel splits a one-sided level g for a bound that fails when s
// missed a large allocation whole: where the chance of that, at most
// s.LargeMissed, is below g, the bound without the whole allocation at
// level g − LargeMissed is valid too (Bonferroni), and it is the tighter
// one unless a large allocation is likely missed. ok is false when only
// the bound with the whole allocation applies.
func missedLevel(s Stats, g float64) (rest float64, ok bool) {
	if s.LargeMissed >= g {
		return 0, false
	}
	return g - s.LargeMissed, true
}

func shape(y, v float64) float64 {
	switch {
	case y == 0:
		return 0
	case v == 0:
		return math.Inf(1)
	}
	return y * y / v
}

// comparable checks that both sides have intervals.
func comparable(base, new Stats) error {
	if base.NoInterval || new.NoInterval {
		return ErrNoComparison
	}
	if err := base.Validate(); err != nil {
		return err
	}
	return new.Validate()
}

// RatioInterval is the two-sided 1−alpha interval on the ratio of NEW's
// value to BASE's (Fay's F interval, above). hi is +Inf when BASE may be
// zero.
func RatioInterval(base, new Stats, alpha float64) (lo, hi float64, err error) {
	if err := comparable(base, new); err != nil {
		return 0, 0, err
	}
	g := alpha / 2
	// The lower bound fails when BASE is low (it missed allocations), the
	// upper one when NEW is.
	lo = ratioLower(base, new, g, true)
	if rest, ok := missedLevel(base, g); ok {
		lo = math.Max(lo, ratioLower(base, new, rest, false))
	}
	hi = ratioUpper(base, new, g, true)
	if rest, ok := missedLevel(new, g); ok {
		hi = math.Min(hi, ratioUpper(base, new, rest, false))
	}
	return lo, hi, nil
}

// ratioLower is θ_lo = y_new/(y_base+w_base) · F(γ; 2a_new, 2a*_base),
// where the γ quantile of F(d1, d2) is 1 over the 1−γ quantile of
// F(d2, d1); whole is ends'.
func ratioLower(base, new Stats, g float64, whole bool) float64 {
	_, bHi := ends(base, new, whole)
	nLo, _ := ends(new, base, whole)
	if nLo.y == 0 {
		return 0
	}
	return ratio(nLo, bHi) / fUpper(g, 2*bHi.shape, 2*nLo.shape)
}

// ratioUpper is θ_hi = (y_new+w_new)/y_base · F(1−γ; 2a*_new, 2a_base),
// +Inf when BASE may be zero.
func ratioUpper(base, new Stats, g float64, whole bool) float64 {
	bLo, _ := ends(base, new, whole)
	_, nHi := ends(new, base, whole)
	if bLo.y == 0 {
		return math.Inf(1)
	}
	return ratio(nHi, bLo) * fUpper(g, 2*nHi.shape, 2*bLo.shape)
}

// ratio is num.y/den.y, +Inf where den may be 0 but num not.
func ratio(num, den end) float64 {
	switch {
	case num.y == 0:
		return 0
	case den.y == 0:
		return math.Inf(1)
	}
	return num.y / den.y
}

// RatioPValues are the one-sided p-values of "the ratio NEW/BASE is at
// most theta" (inc: small when NEW is significantly above theta·BASE) and
// of "it is at least theta" (dec), from the pivot RatioInterval inverts:
// RatioInterval's lower bound at 1−2γ exceeds theta exactly when inc < γ,
// its upper bound falls below theta exactly when dec < γ.
func RatioPValues(base, new Stats, theta float64) (inc, dec float64, err error) {
	if err := comparable(base, new); err != nil {
		return 1, 1, err
	}
	// As RatioInterval splits its levels (missedLevel): the test with the
	// whole allocation, or the one without it plus the chance it missed.
	inc = math.Min(ratioInc(base, new, theta, true), ratioInc(base, new, theta, false)+base.LargeMissed)
	dec = math.Min(ratioDec(base, new, theta, true), ratioDec(base, new, theta, false)+new.LargeMissed)
	return math.Min(inc, 1), math.Min(dec, 1), nil
}

// ratioInc is the p-value of "NEW/BASE ≤ theta" that ratioLower inverts;
// a NEW that may be 0 leaves nothing to reject with.
func ratioInc(base, new Stats, theta float64, whole bool) float64 {
	_, bHi := ends(base, new, whole)
	nLo, _ := ends(new, base, whole)
	if nLo.y == 0 {
		return 1
	}
	return fSurvival(ratio(nLo, bHi)/theta, 2*bHi.shape, 2*nLo.shape)
}

// ratioDec is the p-value of "NEW/BASE ≥ theta" that ratioUpper inverts.
func ratioDec(base, new Stats, theta float64, whole bool) float64 {
	bLo, _ := ends(base, new, whole)
	_, nHi := ends(new, base, whole)
	if bLo.y == 0 {
		return 1
	}
	return fSurvival(theta/ratio(nHi, bLo), 2*nHi.shape, 2*bLo.shape)
}

// DiffInterval is the two-sided 1−alpha interval on NEW − BASE: Zou and
// Donner's MOVER, which recovers the variance of each side from its own
// interval (method m) at the same level.
func DiffInterval(base, new Stats, m Method, alpha float64) (lo, hi float64, err error) {
	return diffInterval(base, new, alpha, func(s Stats) (Result, error) { return Interval(s, m, 1-alpha) })
}

// diffInterval is DiffInterval with the sides' intervals (of statistics
// with contributions) from interval.
func diffInterval(base, new Stats, alpha float64, interval func(Stats) (Result, error)) (lo, hi float64, err error) {
	if err := comparable(base, new); err != nil {
		return 0, 0, err
	}
	// MOVER reads each side's variance off its interval's half widths,
	// and a lower end raised to what the samples hold (Stats.Seen) is no
	// such width: the sides' own methods are used.
	base.Seen, new.Seen = 0, 0
	b, err := sideInterval(base, new, alpha, interval)
	if err != nil {
		return 0, 0, err
	}
	n, err := sideInterval(new, base, alpha, interval)
	if err != nil {
		return 0, 0, err
	}
	d := new.Estimate - base.Estimate
	lo = d - math.Hypot(new.Estimate-n.Lo, b.Hi-base.Estimate)
	hi = d + math.Hypot(n.Hi-new.Estimate, base.Estimate-b.Lo)
	return lo, hi, nil
}

// sideInterval is one side's own interval; a side with no contribution
// gets the interval of zero counts of weight absent(s, other).
func sideInterval(s, other Stats, alpha float64, interval func(Stats) (Result, error)) (Result, error) {
	if s.N == 0 {
		return GammaInterval(0, 0, absent(s, other), alpha), nil
	}
	return interval(s)
}

// DiffPValue is the one-sided p-value of "NEW − BASE ≤ d": the γ at which
// DiffInterval's lower bound at 1−2γ equals d. It is 1 when the estimated
// difference is not above d (p ≥ ½ there, and no test at a level below ½
// rejects).
func DiffPValue(base, new Stats, m Method, d float64) (float64, error) {
	if err := comparable(base, new); err != nil {
		return 1, err
	}
	if new.Estimate-base.Estimate <= d {
		return 1, nil
	}
	return invertLower(func(g float64) (float64, error) {
		lo, _, err := DiffInterval(base, new, m, 2*g)
		return lo, err
	}, d)
}

// AbovePValue is the one-sided p-value of "the group's value is at most
// limit": the γ at which the lower bound of Interval(s, m, 1−2γ) equals
// limit, so that the interval at confidence c lies above limit exactly
// when the p-value is below (1−c)/2. It is 1 when the estimate is not
// above limit.
func AbovePValue(s Stats, m Method, limit float64) (float64, error) {
	if s.NoInterval {
		return 1, ErrNoComparison
	}
	if s.N == 0 || s.Estimate <= limit {
		return 1, nil
	}
	return invertLower(func(g float64) (float64, error) {
		r, err := Interval(s, m, 1-2*g)
		return r.Lo, err
	}, limit)
}

// invertLower finds, by bisection in log γ (p-values span decades), the
// γ in [minP, ½] at which lower(γ), a lower confidence bound at one-sided
// level γ (falling as γ does), crosses d.
func invertLower(lower func(g float64) (float64, error), d float64) (float64, error) {
	gLo, gHi := minP, 0.5
	if lo, err := lower(gLo); err != nil || lo > d {
		return gLo, err
	}
	for range 200 {
		if gHi-gLo < 1e-9*gHi {
			break
		}
		g := math.Sqrt(gLo * gHi)
		lo, err := lower(g)
		if err != nil {
			return 1, err
		}
		if lo > d {
			gHi = g
		} else {
			gLo = g
		}
	}
	return gHi, nil
}

// minP is the smallest p-value DiffPValue resolves: intervals at
// confidence 1−2·minP are still below 1 in float64.
const minP = 1e-15

// fTail is the degrees of freedom above which an F (or chi-squared)
// distribution is taken in Paulson's cube-root normal approximation, as
// gamma quantiles take Wilson–Hilferty's above wilsonHilfertyShape.
const fTail = 2 * wilsonHilfertyShape

// fSurvival is P(F ≥ x) for F(d1, d2); either may be +Inf (the
// chi-squared limits).
func fSurvival(x, d1, d2 float64) float64 {
	switch {
	case x <= 0:
		return 1
	case math.IsInf(x, 1):
		return 0
	case math.IsInf(d1, 1) && math.IsInf(d2, 1):
		// Both values exact: F is the point mass at 1.
		if x <= 1 {
			return 1
		}
		return 0
	case d1 > fTail && d2 > fTail:
		return paulsonSurvival(x, d1, d2)
	case math.IsInf(d2, 1) || d2 > 1e7:
		// F(d1, ∞) = χ²(d1)/d1.
		return mathext.GammaIncRegComp(d1/2, d1*x/2)
	case math.IsInf(d1, 1) || d1 > 1e7:
		// F(∞, d2) = d2/χ²(d2): F ≥ x when χ²(d2) ≤ d2/x.
		return mathext.GammaIncReg(d2/2, d2/x/2)
	}
	// 1 − I(d1x/(d1x+d2); d1/2, d2/2), written as the complement's own
	// integral so that small p-values keep their digits.
	return mathext.RegIncBeta(d2/2, d1/2, d2/(d1*x+d2))
}

// paulsonSurvival is P(F ≥ x) by Paulson's (1942) normal approximation of
// the cube root of F, accurate to a few parts in 10⁷ at these degrees of
// freedom.
func paulsonSurvival(x, d1, d2 float64) float64 {
	c1, c2 := 2/(9*d1), 2/(9*d2)
	u := math.Cbrt(x)
	z := ((1-c2)*u - (1 - c1)) / math.Sqrt(c2*u*u+c1)
	return normalCDF(-z)
}

// fUpper is the x with P(F ≥ x) = t for F(d1, d2), found by bisection on
// fSurvival in log x, so that intervals and p-values invert each other
// exactly.
func fUpper(t, d1, d2 float64) float64 {
	if math.IsInf(d1, 1) && math.IsInf(d2, 1) {
		return 1 // both exact: the ratio of the estimates is the value
	}
	lo, hi := -745.0, 709.0 // log x within float64's range
	for range 100 {
		mid := (lo + hi) / 2
		if fSurvival(math.Exp(mid), d1, d2) > t {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo < 1e-12 {
			break
		}
	}
	return math.Exp((lo + hi) / 2)
}
