package unbias

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/heapest/heapest/parse"
)

func rec(scheme parse.Scheme, rate float64, inuse parse.Counts) *parse.Record {
	return &parse.Record{Scheme: scheme, Rate: rate, InUse: inuse}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

func TestContribute(t *testing.T) {
	const R = 1 << 19
	p48 := 1 - math.Exp(-48.0/R)
	// jemalloc at lg_prof_sample 4 (R = 16): a trial per byte, and a
	// prof_unbias pair of 20 samples of 32 bytes, as jemalloc writes it.
	const R16 = 16
	g32 := 1 - math.Pow(1-1.0/R16, 32)
	c1, s1 := JemallocSampleWeights(32, 4)
	cIn, sIn := JemallocEncode(20*c1, 20*s1, 4)
	tests := []struct {
		name    string
		r       *parse.Record
		v       Value
		est     float64
		samples float64
		mixed   bool
		bound   bool
	}{
		// An average that is a size class (48 B) is no evidence of one
		// size: {32, 64} averages 48 too. The line is mixed.
		{"raw average a size class bytes", rec(parse.Bernoulli, R, parse.Counts{Objects: 20, Bytes: 960}), InUseSpace, 960 / p48, 20, true, false},
		{"raw average a size class objects", rec(parse.Bernoulli, R, parse.Counts{Objects: 20, Bytes: 960}), InUseObjects, 20 / p48, 20, true, false},
		{"raw one sample", rec(parse.Bernoulli, R, parse.Counts{Objects: 1, Bytes: 48}), InUseSpace, 48 / p48, 1, false, false},
		{"raw size given", rec(parse.Bernoulli, R, parse.Counts{Objects: 20, Bytes: 960, Size: 48}), InUseObjects, 20 / p48, 20, false, false},
		{"raw mixed sizes: jeprof average", rec(parse.Bernoulli, R, parse.Counts{Objects: 14, Bytes: 3145760}), InUseSpace,
			3145760 / (1 - math.Exp(-3145760.0/14/R)), 14, true, false},
		{"unbias single size: exact HT", rec(parse.Bernoulli, R, parse.Counts{Objects: 20, Bytes: 960, Enc: parse.JemallocUnbias}), InUseSpace, 960 / p48, 20, false, false},
		{"unbias mixed: decoded, count bound", rec(parse.Bernoulli, R, parse.Counts{Objects: 10, Bytes: 741, Enc: parse.JemallocUnbias}), InUseSpace,
			741 / (1 - math.Exp(-74.1/R)), 10, true, true},
		{"exact profile", rec(parse.Bernoulli, 1, parse.Counts{Objects: 3, Bytes: 300}), InUseSpace, 300, 3, false, false},
		{"scaled with size", rec(parse.Bernoulli, R, parse.Counts{Objects: 2e4, Bytes: 9.6e5, Enc: parse.Scaled, Samples: 2, Size: 48}), InUseSpace, 9.6e5, 2, false, false},
		{"geometric size given", rec(parse.Geometric, R16, parse.Counts{Objects: 100, Bytes: 3200, Size: 32}), InUseSpace, 3200 / g32, 100, false, false},
		{"geometric unbias single size", rec(parse.Geometric, R16, parse.Counts{Objects: float64(cIn), Bytes: float64(sIn), Enc: parse.JemallocUnbias}),
			InUseObjects, 20 / g32, 20, false, false},
		{"geometric raw mixed: average size", rec(parse.Geometric, R16, parse.Counts{Objects: 14, Bytes: 700}), InUseSpace,
			700 / (1 - math.Pow(1-1.0/R16, 50)), 14, true, false},
		// jeprof's 741/(1−exp(−74.1/R)) is jemalloc's sum; its mean size
		// 74.1 is nearest the class of 80 bytes, whose table weight is
		// round(80/(1−exp(−80/R))) for an HT weight of 80/π.
		{"geometric unbias mixed: jemalloc's sums, at the weight of their mean size's class",
			rec(parse.Geometric, R16, parse.Counts{Objects: 10, Bytes: 741, Enc: parse.JemallocUnbias}), InUseSpace,
			741 / -math.Expm1(-74.1/R16) / (math.Round(80/-math.Expm1(-80.0/R16)) * (1 - math.Pow(1-1.0/R16, 80)) / 80), 10, true, true},
		// lg_prof_sample:0: every allocation recorded, yet the pair is
		// encoded (65,536 objects of 8 bytes written as 65,514: 524,112).
		{"unbias pair at period 1: decoded, exact", rec(parse.Exact, 1, parse.Counts{Objects: 65514, Bytes: 524112, Enc: parse.JemallocUnbias}),
			InUseSpace, 524288, 65536, false, false},
		{"unbias pair at period 1, objects", rec(parse.Exact, 1, parse.Counts{Objects: 65514, Bytes: 524112, Enc: parse.JemallocUnbias}),
			InUseObjects, 65536, 65536, false, false},
		{"fixed stride: estimate only", rec(parse.FixedStride, 102400, parse.Counts{Objects: 0, Bytes: 102400, Enc: parse.Scaled, Samples: 1}), InUseSpace, 102400, 1, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Contribute(tt.r, tt.v)
			if !near(c.Estimate, tt.est) || c.Samples != tt.samples || c.Mixed != tt.mixed || c.SamplesBound != tt.bound || c.N != 1 {
				t.Errorf("got %+v; want estimate %v samples %v mixed %v bound %v", c, tt.est, tt.samples, tt.mixed, tt.bound)
			}
			if c.Var < 0 || math.IsNaN(c.Var) {
				t.Errorf("variance %v", c.Var)
			}
		})
	}
}

// The HT variance of one sample never exceeds R² (reference §3.6), so the
// bound used for mixed lines is never below a single-size line's variance.
func TestVarianceBound(t *testing.T) {
	const R = 1 << 16
	for z := 8.0; z < 1<<30; z *= 1.7 {
		c := single(1, z, 0, R, false, InUseSpace)
		if c.Var > R*R*(1+1e-12) || c.Var > R*c.Estimate*(1+1e-12) {
			t.Errorf("z=%v: var %v exceeds min(R², R·est)", z, c.Var)
		}
	}
}

func TestContributeNothing(t *testing.T) {
	r := rec(parse.Bernoulli, 1<<19, parse.Counts{})
	if c := Contribute(r, InUseSpace); c.N != 0 {
		t.Errorf("empty record contributed %+v", c)
	}
	r.HasOffset, r.Offset = true, 10
	r.Alloc = parse.Counts{Objects: 1, Bytes: 100, Size: 100}
	if c := Contribute(r, AllocSpace); !c.HasOffset || c.Offset != 10 || c.Rate != 1<<19 {
		t.Errorf("offset not carried: %+v", c)
	}
	if c := Contribute(r, AllocObjects); c.HasOffset {
		t.Errorf("offset carried for objects: %+v", c)
	}
}

// TestRawMixedBias draws lines of random sizes and checks that the HT sum
// of their samples lies between the average-size estimate and that plus
// its bias bound: the estimate is the least HT value (Jensen), the bound
// the most.
func TestRawMixedBias(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tt := range []struct {
		geo bool
		R   float64
	}{{false, 1 << 19}, {true, 1 << 19}, {true, 16}, {true, 256}} {
		geo, R := tt.geo, tt.R
		for i := range 20000 {
			n := 2 + rng.IntN(12)
			var b, ht float64
			for range n {
				z := math.Floor(math.Exp(rng.Float64() * math.Log(64<<20)))
				if geo {
					// jemalloc's lines: sizes are its usable sizes, 8 at least.
					z = float64(JemallocSizeClass(uint64(z)))
				}
				b += z
				ht += z / inclusion(z, R, geo)
			}
			_, est := averageSize(float64(n), b, R, geo)
			bias := rawMixedBias(float64(n), b, est, R, geo)
			if ht < est*(1-1e-12) || ht > (est+bias)*(1+1e-12) {
				t.Fatalf("geometric %v, R %v, draw %d: %d samples, %v bytes: HT %v outside [%v, %v]", geo, R, i, n, b, ht, est, est+bias)
			}
		}
	}
}

// TestGeometricInclusion runs jemalloc's sampler (prof_sample_new_event_wait:
// a geometric number of bytes to the next sample, the counter advanced by
// each allocation's size) over allocations of one size at a small period,
// and checks that the share sampled is 1 − (1−1/R)^Z, not 1 − exp(−Z/R):
// at R = 16 and Z = 32 they are 0.8732 and 0.8647, 28 standard errors
// apart over 400,000 allocations.
func TestGeometricInclusion(t *testing.T) {
	const R, Z, allocs = 16.0, 32.0, 400_000
	rng := rand.New(rand.NewPCG(5, 6))
	wait := func() float64 { return math.Floor(math.Log(1-rng.Float64())/math.Log1p(-1/R)) + 1 }
	left, sampled := wait(), 0
	for range allocs {
		if left <= Z {
			sampled++
			left = wait() // counted from the allocation's end, as jemalloc does
		} else {
			left -= Z
		}
	}
	got := float64(sampled) / allocs
	want, exp := inclusion(Z, R, true), inclusion(Z, R, false)
	se := math.Sqrt(want * (1 - want) / allocs)
	if math.Abs(got-want) > 4*se {
		t.Errorf("sampled share %.5f, want 1 − (1−1/R)^Z = %.5f ± %.5f (1 − exp(−Z/R) is %.5f)", got, want, 4*se, exp)
	}
	if math.Abs(want-(1-math.Pow(1-1/R, Z))) > 1e-15 {
		t.Errorf("inclusion(%v, %v, true) = %v, want 1 − (1−1/R)^Z = %v", Z, R, want, 1-math.Pow(1-1/R, Z))
	}
}

// A Memo gives what Contribute gives, record after record, whether the
// pair it remembers is read again (the values of one record), changes, or
// comes back under another rate.
func TestMemoContribute(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	var m Memo
	for i := 0; i < 5000; i++ {
		rate := float64(uint64(1) << (14 + rng.IntN(6)))
		z := JemallocSizeClass(uint64(1 + rng.IntN(1<<20)))
		sh, us := JemallocSampleWeights(z, uint(14+rng.IntN(6)))
		n := uint64(1 + rng.IntN(40))
		c, s := JemallocEncode(n*sh, n*us, 19)
		if rng.IntN(4) == 0 {
			s += 7 // a pair no single size class writes
		}
		r := rec(parse.Bernoulli, rate, parse.Counts{Objects: float64(c), Bytes: float64(s), Enc: parse.JemallocUnbias})
		for _, v := range []Value{InUseSpace, InUseObjects, InUseSpace} {
			if got, want := m.Contribute(r, v), Contribute(r, v); got != want {
				t.Fatalf("record %d (%v, %v at rate %v), %v: Memo gives %+v, Contribute %+v", i, c, s, rate, v, got, want)
			}
		}
	}
}

// A Memo's cache of sampled pairs gives what Contribute gives when pairs
// come back (a .NET trace's sizes, a dump's lines), when two pairs share
// its slot, and when a pair comes back with another rate, size or flag;
// whether the cache grew (pairs that repeat) or was dropped (pairs that
// do not).
func TestMemoPairCache(t *testing.T) {
	for _, tc := range []struct {
		pairs   int
		dropped bool
	}{{300, false}, {20000, true}} {
		rng := rand.New(rand.NewPCG(5, 7))
		pool := make([]parse.Counts, tc.pairs) // more pairs than the cache has slots
		for i := range pool {
			n := float64(1 + rng.IntN(4))
			z := float64(8 * (1 + rng.IntN(3000)))
			c := parse.Counts{Objects: n, Bytes: n * z, Size: z, Enc: parse.Raw}
			switch rng.IntN(4) {
			case 0:
				c.Size = 0 // mixed sizes
			case 1:
				c.Approx = true
			case 2:
				c.Enc, c.Samples = parse.Scaled, n
			}
			pool[i] = c
		}
		var m Memo
		for i := 0; i < 40000; i++ {
			c := pool[rng.IntN(len(pool))]
			rate := []float64{512 * 1024, 100 * 1024}[rng.IntN(2)]
			r := rec(parse.Bernoulli, rate, c)
			for _, v := range []Value{AllocSpace, AllocObjects, InUseSpace} {
				r.InUse, r.Alloc = c, c
				if got, want := m.Contribute(r, v), Contribute(r, v); got != want {
					t.Fatalf("%d pairs, record %d (%+v at rate %v), %v: Memo gives %+v, Contribute %+v", tc.pairs, i, c, rate, v, got, want)
				}
			}
		}
		for _, v := range []Value{AllocSpace, InUseSpace} {
			pc := &m.last[v]
			if pc.off != tc.dropped || !pc.off && len(pc.slots) != pairSlots {
				t.Errorf("%d pairs, %v: cache dropped %v, %d slots; want dropped %v", tc.pairs, v, pc.off, len(pc.slots), tc.dropped)
			}
		}
	}
}

// TestTcmallocClassesInclusion: a record sampled by tcmalloc's size
// classes has the inclusion probability of its class and the value of its
// size: malloc(65) weighs as an 80-byte allocation is sampled.
func TestTcmallocClassesInclusion(t *testing.T) {
	const R = 65536
	rec := parse.Record{Scheme: parse.Bernoulli, Rate: R,
		InUse: parse.Counts{Objects: 1, Bytes: 65, Samples: 1, Size: 65, Enc: parse.Raw, Classes: parse.TcmallocClasses}}
	got := Contribute(&rec, InUseSpace)
	if want := 65 / -math.Expm1(-80.0/R); math.Abs(got.Estimate-want) > 1e-9*want {
		t.Errorf("estimate %v, want 65/π(80) = %v", got.Estimate, want)
	}
	rec.InUse.Classes = parse.Recorded
	if got := Contribute(&rec, InUseSpace); math.Abs(got.Estimate-65/-math.Expm1(-65.0/R)) > 1e-6 {
		t.Errorf("recorded sizes: estimate %v, want 65/π(65)", got.Estimate)
	}
}

// TestJemallocMixedBounds sums lines of random mixed sizes as jemalloc
// does (its rounded table weights) at small periods, and checks that the
// HT sum of their samples under jemalloc's own sampler lies within the
// bounds jemallocMixed gives the line. (The pair jemalloc writes rounds
// these sums once more, a few samples' worth on short lines: the
// variance bound of a mixed line is that wide.)
func TestJemallocMixedBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	classes := []uint64{8, 16, 32, 48, 64, 80, 96, 112, 128, 160, 192, 256, 320, 448, 640, 1024, 4096, 20480}
	for _, lg := range []uint{1, 2, 3, 4, 6, 8, 10, 19} {
		rate := float64(uint64(1) << lg)
		for i := range 2000 {
			var shifted, unbiased uint64
			var ht float64
			for range 2 + rng.IntN(40) {
				z := classes[rng.IntN(len(classes))]
				c, b := JemallocSampleWeights(z, lg)
				shifted, unbiased = shifted+c, unbiased+b
				ht += float64(z) / inclusion(float64(z), rate, true)
			}
			_, est, lo, hi := jemallocMixed(float64(shifted)/8, float64(unbiased), rate)
			tol := 1e-12
			if lo == hi {
				tol = negligibleBound // dropped as negligible
			}
			if ht < lo*(1-tol) || ht > hi*(1+tol) || est < lo || est > hi {
				t.Fatalf("lg %d, line %d: HT %v, estimate %v, bounds [%v, %v]", lg, i, ht, est, lo, hi)
			}
		}
	}
}
