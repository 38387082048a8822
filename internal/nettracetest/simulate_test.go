package nettracetest

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSampleFixedMatchesPerObject: skipping unsampled objects in bulk draws
// the same samples as trying every object in turn.
func TestSampleFixedMatchesPerObject(t *testing.T) {
	for _, z := range []uint64{8, 24, 1000, 85000, 300000} {
		type sample struct{ size, offset uint64 }
		var bulk, each []sample
		r1 := rand.New(rand.NewPCG(1, uint64(z)))
		r2 := rand.New(rand.NewPCG(1, uint64(z)))
		t1, t2 := geometric(r1), geometric(r2)
		sampleFixed(r1, &t1, z, 20000, func(s, o uint64) { bulk = append(bulk, sample{s, o}) })
		for range 20000 {
			sampleObject(r2, &t2, z, func(s, o uint64) { each = append(each, sample{s, o}) })
		}
		if len(bulk) != len(each) || t1 != t2 {
			t.Fatalf("z=%d: %d samples in bulk, %d one by one", z, len(bulk), len(each))
		}
		for i := range bulk {
			if bulk[i] != each[i] {
				t.Fatalf("z=%d: sample %d differs: %v vs %v", z, i, bulk[i], each[i])
			}
		}
	}
}

// TestSamplingLaw: an object of z bytes is sampled with probability
// 1 − (1 − p)^z, and its sampled offset follows the geometric law truncated
// to [0, z): P(offset < k | sampled) = (1 − q^k) / (1 − q^z).
func TestSamplingLaw(t *testing.T) {
	const n = 200000
	q := 1 - 1.0/SamplingRate
	for _, z := range []uint64{1000, 50000, 200000} {
		rng := rand.New(rand.NewPCG(7, z))
		trials := geometric(rng)
		sampled, below := 0, 0
		half := z / 2
		for range n {
			sampleObject(rng, &trials, z, func(_, o uint64) {
				sampled++
				if o < half {
					below++
				}
			})
		}
		pi := 1 - math.Pow(q, float64(z))
		if sd := math.Sqrt(n * pi * (1 - pi)); math.Abs(float64(sampled)-n*pi) > 4*sd {
			t.Errorf("z=%d: %d of %d sampled, want %.0f ± %.0f", z, sampled, n, n*pi, 4*sd)
		}
		ph := (1 - math.Pow(q, float64(half))) / pi
		if sd := math.Sqrt(float64(sampled) * ph * (1 - ph)); math.Abs(float64(below)-float64(sampled)*ph) > 4*sd {
			t.Errorf("z=%d: %d of %d offsets below z/2, want %.0f ± %.0f", z, below, sampled, float64(sampled)*ph, 4*sd)
		}
	}
}

// TestSimulateTruth: the truth adds up over types and runs.
func TestSimulateTruth(t *testing.T) {
	wl := Workload{Seed: 2, Threads: 2, Types: []TypeSpec{
		{Name: "A", Size: 24, Objects: 1000},
		{Name: "B", Size: 100, MaxSize: 200, Objects: 50},
	}}
	_, tr := Simulate(wl, Options{})
	if tr.Bytes["A"] != 2*1000*24 || tr.Objects["B"] != 100 {
		t.Errorf("truth %v %v", tr.Bytes, tr.Objects)
	}
	var sum float64
	for _, r := range tr.Runs {
		sum += r.Bytes
	}
	if sum != tr.TotalBytes || tr.TotalBytes != tr.Bytes["A"]+tr.Bytes["B"] {
		t.Errorf("runs sum %v, total %v", sum, tr.TotalBytes)
	}
	if b := tr.Bytes["B"]; b < 100*100 || b > 100*200 || math.Mod(b, 8) != 0 {
		t.Errorf("B bytes %v outside [10000, 20000] or not 8-aligned", b)
	}
}
