package ci

import (
	"math"
	"testing"
)

// TestCampPaulsonError measures the approximation's CDF error against the
// exact CDF and checks the .NET design's claims (~0.01 at s = 1, ~0.001 at
// s = 5 for p ≈ 10⁻⁵) and that it keeps shrinking with s.
func TestCampPaulsonError(t *testing.T) {
	const p = 1.0 / 102400
	cases := []struct{ s, max float64 }{
		{1, 0.013}, {2, 0.004}, {5, 0.0015}, {10, 0.0008}, {100, 0.0001}, {1000, 0.00002},
	}
	for _, c := range cases {
		e, err := CampPaulsonMaxError(c.s, p, 2000)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("s=%v: max |CP − exact| = %.2g", c.s, e)
		if e > c.max || e == 0 {
			t.Errorf("s=%v: error %v, want in (0, %v]", c.s, e, c.max)
		}
	}
}

func TestCampPaulsonQuantile(t *testing.T) {
	// The quantile is the smallest integer whose approximate CDF reaches
	// the level, and at large s it approaches the exact quantile.
	const p = 1.0 / 102400
	for _, s := range []float64{1, 8, 100, 10000} {
		for _, prob := range []float64{0.025, 0.975} {
			y, err := CampPaulsonQuantile(prob, s, p)
			if err != nil {
				t.Fatal(err)
			}
			if campPaulsonCDF(y, s, p) < prob || (y > 0 && campPaulsonCDF(y-1, s, p) >= prob) {
				t.Errorf("s=%v prob=%v: %v is not the boundary", s, prob, y)
			}
			exact, _ := NegBinQuantile(prob, s, p)
			if rel := math.Abs(y-exact) / exact; s >= 100 && rel > 1e-4 {
				t.Errorf("s=%v prob=%v: CP %v vs exact %v", s, prob, y, exact)
			}
		}
	}
}
