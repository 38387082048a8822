package ci

import (
	"fmt"
	"math"
)

// The negative binomial here counts the failures Y before the s-th success
// in independent trials with success probability p. Its CDF is
//
//	P(Y ≤ y) = P(Bin(y+s, p) ≥ s),
//
// and that binomial tail is what this file computes: as a plain sum of
// binomial probabilities, each term obtained from its neighbour by the exact
// ratio, starting from one probability computed with Loader's saddle-point
// form (C. Loader, "Fast and accurate computation of binomial
// probabilities", 2000). Loader's form keeps full double precision for
// n up to 10¹⁵, where lgamma differences lose six digits — the loss that
// makes a plain regularised incomplete beta miss the .NET design table by
// about ten failures at s = 10,000.

// maxTerms bounds the binomial sums; the sums need about 40·√(s·q) terms,
// which stays far below this for s ≤ 10⁷.
const maxTerms = 5_000_000

// NegBinCDF returns P(Y ≤ y) for Y the number of failures before the s-th
// success with success probability p. s = 0 is the point mass at 0.
func NegBinCDF(y float64, s float64, p float64) (float64, error) {
	if err := checkNegBin(s, p); err != nil {
		return 0, err
	}
	if math.IsNaN(y) {
		return 0, fmt.Errorf("failures %v is not a number", y)
	}
	cdf, _ := negBinTails(math.Floor(y), s, p, 1-p)
	return cdf, nil
}

// NegBinSF returns P(Y > y), computed directly so that it keeps its
// relative precision in the upper tail.
func NegBinSF(y float64, s float64, p float64) (float64, error) {
	if err := checkNegBin(s, p); err != nil {
		return 0, err
	}
	if math.IsNaN(y) {
		return 0, fmt.Errorf("failures %v is not a number", y)
	}
	_, sf := negBinTails(math.Floor(y), s, p, 1-p)
	return sf, nil
}

// NegBinQuantile returns the smallest integer y with P(Y ≤ y) ≥ prob
// (+Inf for prob = 1 when p < 1). Probabilities above one half are handled
// through the upper tail, so the answer is exact to the integer at both
// ends while s·(1−p) ≤ 2·10⁴; beyond that it comes from a fourth-order
// Cornish–Fisher expansion and may be one off at a rounding boundary.
func NegBinQuantile(prob float64, s float64, p float64) (float64, error) {
	if err := checkNegBin(s, p); err != nil {
		return 0, err
	}
	if !(prob >= 0 && prob <= 1) {
		return 0, fmt.Errorf("probability %v outside [0,1]", prob)
	}
	if prob <= 0.5 {
		return negBinLowerQuantile(prob, s, p), nil
	}
	return negBinUpperQuantile(1-prob, s, p), nil
}

func checkNegBin(s, p float64) error {
	if !(s >= 0) || math.IsInf(s, 0) || s != math.Floor(s) {
		return fmt.Errorf("sample count %v is not a non-negative integer", s)
	}
	if s > 1e9 {
		return fmt.Errorf("sample count %v too large (at most 10⁹)", s)
	}
	if !(p > 0 && p <= 1) {
		return fmt.Errorf("probability %v outside (0,1]", p)
	}
	return nil
}

// negBinTails returns (P(Y ≤ y), P(Y > y)). The smaller of the two is
// computed by summation and has full relative precision.
func negBinTails(y, s, p, q float64) (cdf, sf float64) {
	if y < 0 {
		return 0, 1
	}
	if s == 0 || q == 0 || math.IsInf(y, 1) {
		return 1, 0
	}
	n := y + s
	k := s - 1 // P(Y > y) = P(Bin(n, p) ≤ s−1)
	if k < n*p {
		lo := binomLowerTail(k, n, p, q)
		return 1 - lo, lo
	}
	up := binomUpperTail(s, n, p, q)
	return up, 1 - up
}

// binomLowerTail returns P(Bin(n,p) ≤ k) for k below the mean, summing
// from k downwards while the terms matter.
func binomLowerTail(k, n, p, q float64) float64 {
	t := binomPMF(k, n, p, q)
	sum := t
	for j := k; j > 0 && t > sum*1e-17; j-- {
		t *= j * q / ((n - j + 1) * p)
		sum += t
		if k-j > maxTerms {
			break
		}
	}
	return sum
}

// binomUpperTail returns P(Bin(n,p) ≥ k) for k above the mean, summing
// from k upwards.
func binomUpperTail(k, n, p, q float64) float64 {
	t := binomPMF(k, n, p, q)
	sum := t
	for j := k; j < n && t > sum*1e-17; j++ {
		t *= (n - j) * p / ((j + 1) * q)
		sum += t
		if j-k > maxTerms {
			break
		}
	}
	return sum
}

// binomPMF is P(Bin(n,p) = k) for integers 0 ≤ k ≤ n (as floats), in
// Loader's form exp(−deviance) · √(n / (2π k (n−k))).
func binomPMF(k, n, p, q float64) float64 {
	switch {
	case k < 0 || k > n:
		return 0
	case k == 0:
		return math.Exp(n * logQ(p, q))
	case k == n:
		return math.Exp(n * math.Log(p))
	}
	m := n - k
	// The deviances need x − mean exactly: k − np and m − nq = np − k.
	d := k - n*p
	lc := stirlerr(n) - stirlerr(k) - stirlerr(m) - bd0(k, d) - bd0(m, -d)
	return math.Exp(lc) * math.Sqrt(n/(2*math.Pi*k*m))
}

// logQ is log(1−p) computed without cancellation for small p.
func logQ(p, q float64) float64 {
	if p < 0.5 {
		return math.Log1p(-p)
	}
	return math.Log(q)
}

// bd0 is the deviance term x·log(x/M) + M − x for M = x − d, written as
// x·g(d/x) with g(t) = −log(1−t) − t, whose series avoids the cancellation
// when x is close to M.
func bd0(x, d float64) float64 {
	t := d / x
	if math.Abs(t) < 0.1 {
		// g(t) = Σ_{j≥2} t^j / j.
		term := t * t
		sum := term / 2
		for j := 3.0; j < 40; j++ {
			term *= t
			add := term / j
			sum += add
			if math.Abs(add) < 1e-17*math.Abs(sum) {
				break
			}
		}
		return x * sum
	}
	return x * (-math.Log1p(-t) - t)
}

// stirlerr is log(n!) − log(√(2π n) (n/e)ⁿ), the error of Stirling's formula.
func stirlerr(n float64) float64 {
	if n > 15 {
		const (
			s0 = 1.0 / 12
			s1 = 1.0 / 360
			s2 = 1.0 / 1260
			s3 = 1.0 / 1680
			s4 = 1.0 / 1188
		)
		nn := 1 / (n * n)
		return (s0 - (s1-(s2-(s3-s4*nn)*nn)*nn)*nn) / n
	}
	lg, _ := math.Lgamma(n + 1)
	return lg - (n+0.5)*math.Log(n) + n - 0.5*math.Log(2*math.Pi)
}

// negBinPMF is P(Y = y) = p · P(Bin(y+s−1, p) = s−1).
func negBinPMF(y, s, p, q float64) float64 {
	if y < 0 {
		return 0
	}
	return p * binomPMF(s-1, y+s-1, p, q)
}

// exactLimit is the largest s·q for which quantiles are found by exact
// summation; above it the fourth-order Cornish–Fisher expansion is used,
// whose error there is far below one failure (see negbin_test.go).
const exactLimit = 2e4

// negBinLowerQuantile is the smallest y with P(Y ≤ y) ≥ a.
func negBinLowerQuantile(a, s, p float64) float64 {
	q := 1 - p
	if s == 0 || q == 0 || a <= 0 {
		return 0
	}
	guess := cornishFisher(a, s, p)
	if s*q > exactLimit {
		return math.Max(0, math.Ceil(guess-0.5))
	}
	return refineQuantile(guess, s, p, q, func(cdf, sf float64) float64 { return cdf - a })
}

// negBinUpperQuantile is the smallest y with P(Y > y) ≤ b.
func negBinUpperQuantile(b, s, p float64) float64 {
	q := 1 - p
	if s == 0 || q == 0 {
		return 0
	}
	if b <= 0 {
		return math.Inf(1)
	}
	guess := cornishFisher(1-b, s, p)
	if s*q > exactLimit {
		return math.Max(0, math.Ceil(guess-0.5))
	}
	return refineQuantile(guess, s, p, q, func(cdf, sf float64) float64 { return b - sf })
}

// refineQuantile finds the smallest integer y ≥ 0 with gap(y) ≥ 0, where
// gap increases with y and gap(y+1) − gap(y) = P(Y = y+1). It takes Newton
// steps on the exact CDF from guess, then walks the last few integers with
// the exact probability ratios.
func refineQuantile(guess, s, p, q float64, gap func(cdf, sf float64) float64) float64 {
	if math.IsNaN(guess) || math.IsInf(guess, 0) {
		guess = s * q / p
	}
	y := math.Max(0, math.Round(guess))
	lo, hi := -1.0, math.Inf(1) // gap(lo) < 0 ≤ gap(hi)
	for iter := 0; iter < 60; iter++ {
		cdf, sf := negBinTails(y, s, p, q)
		g := gap(cdf, sf)
		if g >= 0 {
			hi = y
		} else {
			lo = y
		}
		if hi-lo <= 1 {
			return hi
		}
		pmf := negBinPMF(y, s, p, q)
		if hi-lo <= 64 && pmf > 0 {
			return walk(y, g, pmf, lo, hi, s, q)
		}
		next := math.Round(y - g/pmf) // ±Inf or NaN when pmf underflows
		// Newton lands on the answer's neighbourhood; step at least one
		// integer towards the boundary so the bracket closes.
		if g >= 0 {
			next = math.Min(next, y-1)
		} else {
			next = math.Max(next, y+1)
		}

		if !(next > lo && next < hi) {
			next = stepInto(y, g, lo, hi)
		}
		y = next
	}
	return hi
}

// stepInto picks the next point when Newton's step leaves the bracket:
// bisection when both ends are known, else a doubling step outwards.
func stepInto(y, g, lo, hi float64) float64 {
	if !math.IsInf(hi, 1) && lo >= 0 {
		return math.Floor((lo + hi) / 2)
	}
	if g < 0 {
		return math.Max(y*2, y+64)
	}
	return math.Floor(math.Max(lo, 0) + (y-math.Max(lo, 0))/2)
}

// walk moves one integer at a time from y (where gap = g and P(Y=y) = pmf)
// to the boundary, using P(Y=y+1)/P(Y=y) = (y+s)q/(y+1).
func walk(y, g, pmf, lo, hi, s, q float64) float64 {
	for steps := 0; steps < 200; steps++ {
		if g >= 0 {
			if y == 0 {
				return 0
			}
			g -= pmf // gap(y−1)
			if g < 0 {
				return y
			}
			pmf *= y / ((y + s - 1) * q)
			y--
		} else {
			pmf *= (y + s) * q / (y + 1)
			y++
			g += pmf
			if g >= 0 {
				return y
			}
		}
	}
	if g >= 0 {
		return y
	}
	return hi
}
