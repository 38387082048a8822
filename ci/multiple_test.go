package ci

import (
	"math"
	"testing"
)

// The adjusted p-values below were worked by hand from the procedures'
// definitions (Holm 1979; Benjamini and Hochberg 1995).
func TestHolm(t *testing.T) {
	p := []float64{0.01, 0.04, 0.03, 0.005}
	// sorted: 0.005 (×4 = 0.02), 0.01 (×3 = 0.03), 0.03 (×2 = 0.06), 0.04 (×1 → max(0.04, 0.06))
	want := []float64{0.03, 0.06, 0.06, 0.02}
	checkAdjusted(t, "Holm", Holm(p), want)
	checkAdjusted(t, "Holm capped", Holm([]float64{0.6, 0.9}), []float64{1, 1})
}

func TestBenjaminiHochberg(t *testing.T) {
	p := []float64{0.01, 0.04, 0.03, 0.005}
	// sorted: 0.005·4/1 = 0.02, 0.01·4/2 = 0.02, 0.03·4/3 = 0.04, 0.04·4/4 = 0.04
	want := []float64{0.02, 0.04, 0.04, 0.02}
	checkAdjusted(t, "BH", BenjaminiHochberg(p), want)
	// A large later p-value does not raise an earlier one (step-up).
	checkAdjusted(t, "BH step-up", BenjaminiHochberg([]float64{0.02, 0.021, 0.9}), []float64{0.0315, 0.0315, 0.9})
	if len(BenjaminiHochberg(nil)) != 0 || len(Holm(nil)) != 0 {
		t.Error("no tests should give no adjusted p-values")
	}
}

func checkAdjusted(t *testing.T, name string, got, want []float64) {
	t.Helper()
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("%s: got %v, want %v", name, got, want)
			return
		}
	}
}
