package ci

import (
	"fmt"
	"math"
)

// CampPaulsonCDF approximates the negative-binomial P(Y ≤ y) (failures
// before the s-th success, success probability p) by the Camp–Paulson
// normal approximation: through P(Y ≤ y) = P(F(2s, 2(y+1)) ≤ (y+1)p/(s·q))
// and Paulson's cube-root transform of the F distribution. It is cheap at
// any s; its error is measured against NegBinCDF in camppaulson_test.go and
// docs/statistics.md.
func CampPaulsonCDF(y, s, p float64) (float64, error) {
	if err := checkNegBin(s, p); err != nil {
		return 0, err
	}
	if math.IsNaN(y) {
		return 0, fmt.Errorf("failures %v is not a number", y)
	}
	return campPaulsonCDF(math.Floor(y), s, p), nil
}

func campPaulsonCDF(y, s, p float64) float64 {
	q := 1 - p
	switch {
	case y < 0:
		return 0
	case s == 0 || q == 0:
		return 1
	}
	f := (y + 1) * p / (s * q)
	a := 1 / (9 * s)
	b := 1 / (9 * (y + 1))
	c := math.Cbrt(f)
	z := ((1-b)*c - (1 - a)) / math.Sqrt(b*c*c+a)
	return normalCDF(z)
}

// CampPaulsonQuantile is the smallest integer y whose Camp–Paulson CDF
// reaches prob.
func CampPaulsonQuantile(prob, s, p float64) (float64, error) {
	if err := checkNegBin(s, p); err != nil {
		return 0, err
	}
	if !(prob >= 0 && prob < 1) {
		return 0, fmt.Errorf("probability %v outside [0,1)", prob)
	}
	return campPaulsonQuantile(prob, s, p), nil
}

func campPaulsonQuantile(prob, s, p float64) float64 {
	if s == 0 || p == 1 || campPaulsonCDF(0, s, p) >= prob {
		return 0
	}
	// Bracket from the Cornish–Fisher guess, then bisect on integers.
	sd := math.Sqrt(s*(1-p)) / p
	guess := math.Max(0, cornishFisher(prob, s, p))
	lo, hi := 0.0, math.Ceil(guess+sd+1)
	for campPaulsonCDF(hi, s, p) < prob {
		lo, hi = hi, 2*hi+sd
	}
	if l := math.Floor(guess - sd); l > lo && campPaulsonCDF(l, s, p) < prob {
		lo = l
	}
	for hi-lo > 1 { // invariant: CDF(lo) < prob ≤ CDF(hi)
		mid := math.Floor(lo + (hi-lo)/2)
		if mid <= lo || mid >= hi {
			break // beyond 2⁵³ doubles are no integers apart: hi is as near as any
		}
		if campPaulsonCDF(mid, s, p) >= prob {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// CampPaulsonMaxError is the largest |Camp–Paulson CDF − exact CDF| over
// points integer failure counts spread evenly between the exact 10⁻⁴ and
// 1−10⁻⁴ quantiles (and y = 0): the figure the .NET design quotes as
// ~0.01 at s = 1 and ~0.001 at s = 5 for p = 10⁻⁵.
func CampPaulsonMaxError(s, p float64, points int) (float64, error) {
	if err := checkNegBin(s, p); err != nil {
		return 0, err
	}
	if s == 0 || points < 2 {
		return 0, nil
	}
	lo := negBinLowerQuantile(1e-4, s, p)
	hi := negBinUpperQuantile(1e-4, s, p)
	worst := 0.0
	for i := 0; i <= points; i++ {
		y := math.Floor(lo + (hi-lo)*float64(i)/float64(points))
		if i == 0 {
			y = 0
		}
		exact, _ := negBinTails(y, s, p, 1-p)
		worst = math.Max(worst, math.Abs(campPaulsonCDF(y, s, p)-exact))
	}
	return worst, nil
}
