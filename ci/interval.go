package ci

// TEMPORARY: the interval methods are being written in this file by the ci
// work (issue 3); this placeholder only fixes the API the pipeline calls.

import (
	"fmt"
	"math"
)

// Method is an interval method.
type Method uint8

const (
	// Auto picks, per group, the best method valid for its statistics.
	Auto Method = iota
	// Exact is the negative-binomial interval (one inclusion probability),
	// or .NET Approach 2 for groups with sampled-byte offsets.
	Exact
	// CampPaulson is Exact with the Camp–Paulson approximation of the CDF.
	CampPaulson
	// Gamma is the Fay–Feuer interval for weighted sums of Poisson counts.
	Gamma
	// Normal is estimate ± z·√Var.
	Normal
)

// Result is an interval for one group.
type Result struct {
	Estimate, Lo, Hi float64
	// Samples is the raw sample count (or bound) the interval rests on.
	Samples float64
	// Method names the method actually used ("exact", "gamma", "none", ...).
	Method string
	// Notes are caveats for this result, printed as footnotes.
	Notes []string
}

// Interval computes the interval of s at the given confidence.
func Interval(s Stats, m Method, confidence float64) (Result, error) {
	if !(confidence > 0 && confidence < 1) {
		return Result{}, fmt.Errorf("confidence %v outside (0,1)", confidence)
	}
	z := 1.959963984540054
	sd := math.Sqrt(s.Var)
	return Result{Estimate: s.Estimate, Lo: math.Max(0, s.Estimate-z*sd), Hi: s.Estimate + z*sd, Samples: s.Samples, Method: "normal"}, nil
}
