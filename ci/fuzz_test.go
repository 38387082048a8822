package ci

import (
	"math"
	"testing"
)

// FuzzInterval feeds arbitrary statistics to every method: each call
// either returns an error or finite bounds with lo ≤ hi — never NaN, an
// infinity or a panic.
func FuzzInterval(f *testing.F) {
	f.Add(uint8(0), 0.95, 1e6, 4e11, 8.0, 524288.0, 0.001, 64.0, 524288.0, 0.0, 0.0, false, false, false)
	f.Add(uint8(1), 0.9, 819192.0, 1e10, 8.0, 102399.0, 0.0, 0.0, 102400.0, 10908.0, 0.0, true, true, false)
	f.Add(uint8(3), 0.5, 10.0, 0.0, 3.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, false, false, true)
	f.Add(uint8(4), 0.99, 5e7, 1e14, 3.0, 524288.0, 0.0, 0.0, 0.0, 0.0, 1.5e6, true, false, false)
	f.Add(uint8(3), 0.95, 5.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 10.0, true, false, false)
	f.Fuzz(func(t *testing.T, m uint8, conf, est, v, samples, wmax, p, unit, rate, offset, bias float64, mixed, hasOffset, complete bool) {
		s := Stats{N: 1, Estimate: est, Var: v, Samples: samples, MaxWeight: wmax, P: p, Unit: unit, Rate: rate,
			Offset: offset, Bias: bias, Mixed: mixed, HasOffset: hasOffset, Complete: complete}
		// Keep the sizes where a quantile search is cheap; validity, not
		// speed, is what is fuzzed.
		if samples > 1e7 {
			return
		}
		r, err := Interval(s, Method(m%5), conf)
		if err != nil {
			return
		}
		for _, x := range []float64{r.Estimate, r.Lo, r.Hi} {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("%+v method %d conf %v: %+v", s, m%5, conf, r)
			}
		}
		if r.Lo > r.Hi {
			t.Fatalf("%+v method %d conf %v: lo %v > hi %v", s, m%5, conf, r.Lo, r.Hi)
		}
	})
}
