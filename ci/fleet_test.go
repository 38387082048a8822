package ci

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestFleetIntervalWorkedExample(t *testing.T) {
	// Three sampled processes of ten, estimates 10, 20 and 30 with
	// within-process variance 6 in all: N/n·ΣŶ = 200; s² = 100;
	// v = 100·(1 − 0.3)·100/3 + (10/3)·6 = 2353.33…; t(2, 0.975) = 4.302653;
	// symmetric: no skewness shift.
	r, err := FleetInterval(Stats{N: 3, Estimate: 60, Var: 6, Samples: 9}, Fleet{Sum: 60, SumSq: 1400, SumCube: 36000, Sampled: 3, Size: 10}, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	half := 4.302652729749464 * math.Sqrt(100*0.7*100/3+10.0/3*6)
	if math.Abs(r.Estimate-200) > 1e-9 || math.Abs(r.Hi-(200+half)) > 1e-6 || r.Lo != 0 {
		t.Errorf("got %+v, want 200, [0, %v]", r, 200+half)
	}
	if _, err := FleetInterval(Stats{}, Fleet{Sampled: 1, Size: 10}, 0.95); err == nil {
		t.Error("one sampled process: want an error")
	}
}

// TestFleetIntervalCoverage samples fleets: N processes, a third of them
// holding a group of lognormal size in objects of 256 B, each process's
// total estimated from per-byte sampling at R = 512 KiB; n processes are
// drawn at random and the two-stage interval must cover the fleet's true
// total about 95% of the time.
func TestFleetIntervalCoverage(t *testing.T) {
	for _, c := range []struct {
		share, sigma, want float64
	}{
		// Measured floors, not the goal: moment-based intervals on a
		// skewed fleet fall short of 95% at n = 20–50 (docs/merge.md).
		{1, 0.8, 0.89},       // every process holds the group
		{2.0 / 3, 0.8, 0.88}, // most do
		{1.0 / 3, 0.8, 0.85}, // a third do
	} {
		fleetCoverage(t, c.share, c.sigma, c.want)
	}
}

func fleetCoverage(t *testing.T, share, sigma, want float64) {
	const (
		fleetN = 1000
		z      = 256.0
		rate   = 512 << 10
		reps   = 2000
	)
	rng := rand.New(rand.NewPCG(1, 2))
	objs := make([]float64, fleetN)
	truth := 0.0
	for i := range objs {
		if rng.Float64() < share {
			objs[i] = math.Round(math.Exp(rng.NormFloat64()*sigma + 10)) // ~22,000 objects, 5.6 MB
		}
		truth += objs[i] * z
	}
	pi := -math.Expm1(-z / rate)
	for _, n := range []int{20, 50} {
		hit := 0
		for range reps {
			var within Stats
			var f Fleet
			f.Sampled, f.Size = n, fleetN
			for _, i := range rng.Perm(fleetN)[:n] {
				s := binomial(rng, objs[i], pi)
				est := s * z / pi
				f.Sum += est
				f.SumSq += est * est
				f.SumCube += est * est * est
				within.Var += s * z * z * (1 - pi) / (pi * pi)
				within.Estimate += est
			}
			r, err := FleetInterval(within, f, 0.95)
			if err != nil {
				t.Fatal(err)
			}
			if r.Lo <= truth && truth <= r.Hi {
				hit++
			}
		}
		cov := float64(hit) / reps
		t.Logf("held by %.0f%% of processes, n=%d of N=%d: coverage %.3f over %d fleets", 100*share, n, fleetN, cov, reps)
		if cov < want {
			t.Errorf("held by %.0f%%, n=%d: coverage %.3f, want ≥ %.2f", 100*share, n, cov, want)
		}
	}
}

// binomial draws Binomial(n, p) for small p by its Poisson limit, exact
// enough here (p ≈ 5e-4).
func binomial(rng *rand.Rand, n, p float64) float64 {
	lambda := n * p
	k, l := 0.0, math.Exp(-lambda)
	for prod := rng.Float64(); prod > l; prod *= rng.Float64() {
		k++
	}
	return k
}
