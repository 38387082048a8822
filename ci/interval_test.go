package ci

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mathext"
)

const dotnetP = 1.0 / 102400

func TestOffsetIntervalWorkedExample(t *testing.T) {
	// The .NET design's example: C = 0.95, s = 8, u = 10,908.
	r := OffsetInterval(OffsetEstimate(8, dotnetP, 10908), 8, dotnetP, 10908, 0.05, false)
	if math.Abs(r.Lo-364574) > 1 || math.Abs(r.Hi-1487778) > 1 {
		t.Errorf("got [%v, %v], want [364574, 1487778] ±1", r.Lo, r.Hi)
	}
	if r.Method != "exact" {
		t.Errorf("method %q", r.Method)
	}
}

func TestExactIntervalBounds(t *testing.T) {
	// N_lo = s + Q(α/2; s), N_hi = s + 1 + Q(1−α/2; s+1): with the table's
	// rows for s = 8 and s + 1 = 9 (±1 for the table's rounding).
	r := ExactInterval(8/dotnetP, 8, dotnetP, 1, 0.05, false)
	if math.Abs(r.Lo-(8+353666)) > 1 || math.Abs(r.Hi-(9+1614137)) > 1 {
		t.Errorf("s=8: [%v, %v]", r.Lo, r.Hi)
	}
	// Unit scales counts to bytes.
	b := ExactInterval(8*64/dotnetP, 8, dotnetP, 64, 0.05, false)
	if b.Lo != 64*r.Lo || b.Hi != 64*r.Hi {
		t.Errorf("bytes [%v, %v] vs objects [%v, %v]", b.Lo, b.Hi, r.Lo, r.Hi)
	}
	// s = 0: lower 0, finite upper; p = 1: zero width.
	z := ExactInterval(0, 0, 0.01, 1, 0.05, false)
	if z.Lo != 0 || !(z.Hi > 0) || math.IsInf(z.Hi, 0) {
		t.Errorf("s=0: [%v, %v]", z.Lo, z.Hi)
	}
	c := ExactInterval(5, 5, 1, 1, 0.05, false)
	if c.Lo != 5 || c.Hi != 5 {
		t.Errorf("p=1: [%v, %v]", c.Lo, c.Hi)
	}
}

// scipyExact are negative-binomial quantiles from scipy 1.10.1, failures
// before the s-th success at π = 1 − exp(−z/2¹⁹), made with
//
//	from scipy.stats import nbinom; import math
//	pi = -math.expm1(-z/524288)
//	nbinom.ppf(0.025, s, pi), nbinom.ppf(0.975, s+1, pi)
//
// (scipy's ppf is the smallest y with CDF(y) ≥ q, heapest's convention).
var scipyExact = []struct {
	z, s, qLo, qHi float64 // qLo = Q(α/2; s), qHi = Q(1−α/2; s+1)
}{
	{64, 1, 207, 45642}, {64, 3, 5067, 71820}, {64, 10, 39279, 150648},
	{4096, 1, 3, 712}, {4096, 3, 78, 1120}, {4096, 10, 609, 2348},
	{524288, 1, 0, 5}, {524288, 3, 0, 7}, {524288, 10, 1, 14},
	{4194304, 1, 0, 0}, {4194304, 3, 0, 0}, {4194304, 10, 0, 0},
}

// TestExactIntervalScipy pins the exact interval's endpoints, in bytes,
// to scipy's quantiles with no tolerance: --method exact's N_hi = s + 1 +
// Q(1−α/2; s+1) (the .NET window's +1, a whole allocation where π ≈ 1)
// and auto's N_hi = s + Q(1−α/2; s+1), both with N_lo = s + Q(α/2; s) for
// --method exact. The .NET rows are checked the same way: scipy's
// nbinom.ppf(0.025, 8, 1/102400) = 353,667 and ppf(0.975, 9, ·) =
// 1,614,138, one above the design table's (its convention, see
// docs/statistics.md).
func TestExactIntervalScipy(t *testing.T) {
	for _, c := range scipyExact {
		pi := -math.Expm1(-c.z / 524288)
		r := ExactInterval(c.s*c.z/pi, c.s, pi, c.z, 0.05, false)
		if r.Lo != (c.s+c.qLo)*c.z || r.Hi != (c.s+1+c.qHi)*c.z {
			t.Errorf("exact z=%v s=%v: [%v, %v] B, want [%v, %v] (N from scipy)", c.z, c.s, r.Lo, r.Hi, (c.s+c.qLo)*c.z, (c.s+1+c.qHi)*c.z)
		}
		a := PresentExactInterval(c.s*c.z/pi, c.s, pi, c.z, 0.05)
		if a.Hi != (c.s+c.qHi)*c.z {
			t.Errorf("auto z=%v s=%v: upper %v B, want %v (N from scipy)", c.z, c.s, a.Hi, (c.s+c.qHi)*c.z)
		}
	}
	r := ExactInterval(8/dotnetP, 8, dotnetP, 1, 0.05, false)
	if r.Lo != 8+353667 || r.Hi != 9+1614138 {
		t.Errorf("s=8 at 1/102400: [%v, %v], want [%v, %v]", r.Lo, r.Hi, 8+353667, 9+1614138)
	}
}

// TestExactIntervalCoverage computes the exact interval's coverage for
// every true N by summing binomial probabilities: it must never fall
// below the nominal level (the Clopper–Pearson guarantee).
func TestExactIntervalCoverage(t *testing.T) {
	for _, p := range []float64{0.9, 0.3, 0.02} {
		q := 1 - p
		for n := 1.0; n <= 150; n++ {
			cover := 0.0
			for s := 0.0; s <= n; s++ {
				r := ExactInterval(s/p, s, p, 1, 0.05, false)
				if r.Lo <= n && n <= r.Hi {
					cover += binomPMF(s, n, p, q)
				}
			}
			if cover < 0.95-1e-12 {
				t.Errorf("p=%v N=%v: coverage %v", p, n, cover)
			}
		}
	}
}

func TestGammaIntervalGarwood(t *testing.T) {
	// One Poisson count with weight 1 is Garwood's interval; reference
	// values are the published χ²-based limits (e.g. Ulm 1990).
	cases := []struct{ n, lo, hi float64 }{
		{0, 0, 3.6889}, {1, 0.0253, 5.5716}, {10, 4.7954, 18.3904},
	}
	for _, c := range cases {
		r := GammaInterval(c.n, c.n, 1, 0.05)
		if math.Abs(r.Lo-c.lo) > 1e-4 || math.Abs(r.Hi-c.hi) > 1e-4 {
			t.Errorf("n=%v: [%v, %v], want [%v, %v]", c.n, r.Lo, r.Hi, c.lo, c.hi)
		}
	}
	// Zero variance (everything recorded): zero width.
	r := GammaInterval(7, 0, 0, 0.05)
	if r.Lo != 7 || r.Hi != 7 {
		t.Errorf("v=0: [%v, %v]", r.Lo, r.Hi)
	}
}

func TestNormalInterval(t *testing.T) {
	r := NormalInterval(100, 25, 0.05)
	if math.Abs(r.Lo-(100-1.959963984540054*5)) > 1e-9 || math.Abs(r.Hi-(100+1.959963984540054*5)) > 1e-9 {
		t.Errorf("[%v, %v]", r.Lo, r.Hi)
	}
	if r := NormalInterval(1, 100, 0.05); r.Lo != 0 {
		t.Errorf("lower bound %v not clipped at 0", r.Lo)
	}
}

// single returns the Stats the pipeline writes for n samples of size z at
// rate rate (bytes): it mirrors unbias.Samples.Stats for space values (which ci cannot
// import).
func single(n, z, rate float64) Stats {
	pi := -math.Expm1(-z / rate)
	s := Stats{N: 1, Estimate: n * z / pi, Var: n * z * z * (1 - pi) / (pi * pi), Samples: n,
		MaxWeight: z * (1 - pi) / pi, P: pi, Unit: z, Rate: rate}
	if z >= rate {
		s.LargeMissed = n * (1 - pi) / pi
		s.LargeMissedValue = z * s.LargeMissed
	}
	return s
}

func TestIntervalAuto(t *testing.T) {
	one := single(8, 64, 524288)
	mixed := one.Add(single(3, 4096, 524288))
	offset := Stats{N: 1, Estimate: OffsetEstimate(8, dotnetP, 10908), Var: 1, Samples: 8, Mixed: true,
		Rate: 102400, Offset: 10908, HasOffset: true}
	cases := []struct {
		name   string
		s      Stats
		method string
		note   string
	}{
		{"single size", one, "exact", ""},
		{"mixed sizes", mixed, "gamma", ""},
		{"offsets", offset, "exact", ""},
		{"no interval", Stats{N: 1, Estimate: 5, NoInterval: true}, "none", NoteNoInterval},
		{"complete", Stats{N: 1, Estimate: 5, P: 1, Unit: 1, Samples: 5, Complete: true}, "exact", ""},
		{"bound", Stats{N: 1, Estimate: 5e6, Var: 1e12, Samples: 3, SamplesBound: true, Mixed: true, MaxWeight: 5e5}, "gamma", NoteSamplesBound},
		{"weighted (JFR)", Stats{N: 2, Estimate: 3e6, Var: 5e12, Samples: 2, Mixed: true, MaxWeight: 2e6, Weighted: true}, "gamma", NoteWeighted},
	}
	for _, c := range cases {
		r, err := Interval(c.s, Auto, 0.95)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if r.Method != c.method {
			t.Errorf("%s: method %q, want %q", c.name, r.Method, c.method)
		}
		if c.note != "" && !strings.Contains(strings.Join(r.Notes, "\n"), c.note) {
			t.Errorf("%s: notes %q lack %q", c.name, r.Notes, c.note)
		}
		if !(r.Lo <= r.Estimate && r.Estimate <= r.Hi) || math.IsNaN(r.Lo+r.Hi) {
			t.Errorf("%s: [%v, %v] around %v", c.name, r.Lo, r.Hi, r.Estimate)
		}
	}
}

func TestIntervalExplicitMethods(t *testing.T) {
	s := single(20, 100, 524288)
	for _, m := range []Method{Exact, CampPaulson, Gamma, Normal} {
		r, err := Interval(s, m, 0.9)
		if err != nil {
			t.Fatal(err)
		}
		if r.Method != m.String() {
			t.Errorf("%v: used %q", m, r.Method)
		}
		if !(r.Lo < r.Estimate && r.Estimate < r.Hi) {
			t.Errorf("%v: [%v, %v] around %v", m, r.Lo, r.Hi, r.Estimate)
		}
	}
	// Exact on mixed sizes falls back to gamma and says so.
	r, _ := Interval(s.Add(single(2, 1e6, 524288)), Exact, 0.95)
	if r.Method != "gamma" || len(r.Notes) == 0 {
		t.Errorf("mixed exact: %q %q", r.Method, r.Notes)
	}
}

func TestIntervalInvalid(t *testing.T) {
	good := single(3, 64, 524288)
	bad := map[string]Stats{}
	b := good
	b.Var = -1
	bad["negative variance"] = b
	b = good
	b.Samples = -2
	bad["negative samples"] = b
	b = good
	b.Estimate = math.NaN()
	bad["NaN estimate"] = b
	b = good
	b.P = 1.5
	bad["p > 1"] = b
	b = good
	b.P = 0
	bad["p = 0"] = b
	b = good
	b.Rate = -1
	bad["negative rate"] = b
	b = good
	b.HasOffset, b.Rate = true, 0
	bad["offsets without a rate"] = b
	for name, s := range bad {
		if _, err := Interval(s, Auto, 0.95); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	for _, c := range []float64{0, 1, -0.5, 1.5, math.NaN()} {
		if _, err := Interval(good, Auto, c); err == nil {
			t.Errorf("confidence %v: no error", c)
		}
	}
}

// TestPresentExactIntervalCoverage computes, for every true N, the
// chance that the present-row interval misses N below and above,
// conditional on the row appearing (s ≥ 1), by summing binomial
// probabilities: each tail must stay at or below α/2, where the plain
// exact interval's lower tail does not.
func TestPresentExactIntervalCoverage(t *testing.T) {
	plainWorst := 0.0
	for _, c := range []struct{ p, maxN, step, maxS float64 }{
		{0.5, 120, 1, 120}, {0.05, 400, 1, 80}, {0.002, 3000, 7, 60}, {0.3, 200, 1, 200},
	} {
		p, q := c.p, 1-c.p
		for n := 1.0; n <= c.maxN; n += c.step {
			low, high, plainLow := 0.0, 0.0, 0.0
			for s := 1.0; s <= math.Min(n, c.maxS); s++ {
				w := binomPMF(s, n, p, q)
				r := PresentExactInterval(s/p, s, p, 1, 0.05)
				if r.Lo > n {
					low += w
				}
				if r.Hi < n {
					high += w
				}
				if r := ExactInterval(s/p, s, p, 1, 0.05, false); r.Lo > n {
					plainLow += w
				}
			}
			seen := -math.Expm1(n * math.Log1p(-p))
			if low/seen > 0.025+1e-9 || high/seen > 0.025+1e-9 {
				t.Errorf("p=%v N=%v: conditional misses %.4f below, %.4f above (each must be ≤ 0.025)", p, n, low/seen, high/seen)
			}
			plainWorst = math.Max(plainWorst, plainLow/seen)
		}
	}
	if plainWorst < 0.05 {
		t.Errorf("plain exact interval's worst conditional lower miss %v: the test no longer shows the selection effect", plainWorst)
	}
	// One sample: the row may be that one allocation.
	if r := PresentExactInterval(64/0.001, 1, 0.001, 64, 0.05); r.Lo != 64 {
		t.Errorf("s=1: lower bound %v, want one allocation (64)", r.Lo)
	}
}

// TestPresentLowerQuantileSmallest checks the bisection against a plain
// scan from 0: the answer must be the smallest y that satisfies the
// condition, not one above it.
func TestPresentLowerQuantileSmallest(t *testing.T) {
	for _, p := range []float64{0.9, 0.5, 0.2, 0.05, 0.01, 0.001} {
		for s := 1.0; s <= 40; s++ {
			for _, a := range []float64{0.025, 0.005, 0.05, 0.1} {
				want := 0.0
				for ; ; want++ {
					cdf, _ := negBinTails(want, s, p, 1-p)
					if cdf >= a*-math.Expm1((want+s)*math.Log1p(-p)) {
						break
					}
				}
				if got := presentLowerQuantile(a, s, p); got != want {
					t.Fatalf("p=%v s=%v a=%v: %v, want %v", p, s, a, got, want)
				}
			}
		}
	}
}

func TestIntervalBiasWidens(t *testing.T) {
	s := Stats{N: 1, Estimate: 10e6, Var: 4e11, Samples: 9, MaxWeight: 524288, Mixed: true, Rate: 524288}
	plain, _ := Interval(s, Auto, 0.95)
	s.Bias = 9 * 524288
	wide, err := Interval(s, Auto, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	// The estimate is the least HT value the samples allow: only the
	// upper end widens.
	if !(wide.Lo == plain.Lo && wide.Hi > plain.Hi) || wide.Estimate != plain.Estimate {
		t.Errorf("plain %+v, widened %+v", plain, wide)
	}
	if !strings.Contains(strings.Join(wide.Notes, " "), NoteBias) {
		t.Errorf("notes %q", wide.Notes)
	}
	s.Bias = -1
	if _, err := Interval(s, Auto, 0.95); err == nil {
		t.Error("negative bias bound accepted")
	}
}

func TestGammaQuantileUpper(t *testing.T) {
	// The upper quantile through the lower inverse matches gonum's
	// complement inverse.
	for _, shape := range []float64{0.05, 1, 3.5, 40, 900, 9000} {
		for _, tail := range []float64{0.025, 0.005, 1e-6} {
			got := gammaQuantile(shape, 1, tail, true)
			want := mathext.GammaIncRegCompInv(shape, tail)
			if rel := math.Abs(got-want) / want; rel > 1e-9 {
				t.Errorf("shape %v tail %v: %v vs %v", shape, tail, got, want)
			}
		}
	}
}

func TestGammaQuantileWilsonHilferty(t *testing.T) {
	// Just above the switch, the approximation agrees with the inverse
	// incomplete gamma function to 3·10⁻⁷.
	for _, shape := range []float64{wilsonHilfertyShape * 1.01, 1e5} {
		for _, upper := range []bool{false, true} {
			approx := gammaQuantile(shape, 2, 0.025, upper)
			want := 2 * mathext.GammaIncRegInv(shape, 0.025)
			if upper {
				want = 2 * mathext.GammaIncRegCompInv(shape, 0.025)
			}
			if rel := math.Abs(approx-want) / want; rel > 3e-7 {
				t.Errorf("shape %v upper %v: %v vs %v (rel %.2g)", shape, upper, approx, want, rel)
			}
		}
	}
}

func TestIntervalOverflowIsAnError(t *testing.T) {
	s := Stats{N: 1, Estimate: 1.7e308, Var: 1, Mixed: true, Bias: 1.7e308}
	if r, err := Interval(s, Gamma, 0.95); err == nil {
		t.Errorf("no error, got %+v", r)
	}
}

func TestOffsetWindowInterval(t *testing.T) {
	// An open end takes the upper bound at s+1 samples, an open start the
	// lower at s−1: with the .NET table, s = 8 open at both ends spans the
	// rows for 7 and 9 samples (±1 for the table's rounding).
	r := OffsetWindowInterval(0, 8, dotnetP, 100, 0.05, false, true, true)
	if math.Abs(r.Lo-(288185+100)) > 1 || math.Abs(r.Hi-(1614137+100)) > 1 {
		t.Errorf("[%v, %v]", r.Lo, r.Hi)
	}
	if len(r.Notes) != 2 {
		t.Errorf("notes %q", r.Notes)
	}
	// One sample with an open start: the lower bound is u alone.
	if r := OffsetWindowInterval(0, 1, dotnetP, 100, 0.05, false, true, false); r.Lo != 100 {
		t.Errorf("s=1 open start: lower %v", r.Lo)
	}
}

// TestIntervalShifted checks estimates that may lie off the HT estimate
// both ways: JFR's gap bounds (Spill up, Excess down) and a jemalloc line
// of mixed sizes read from jemalloc's weights (Bias up, Excess down). The
// upper bound is the method's at the estimate plus Spill and Bias, the
// lower at the estimate less Excess, the estimate is unchanged, and only
// the dump line's range is footnoted.
func TestIntervalShifted(t *testing.T) {
	tests := []struct {
		name                string
		weighted            bool
		spill, bias, excess float64
		note                bool
	}{
		{"JFR gaps", true, 50e6, 0, 4e6, false},
		{"jemalloc weights", false, 0, 3e5, 2e5, true},
		{"jemalloc weights above HT only", false, 0, 0, 2e5, true},
	}
	conf := 0.95
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := Stats{N: 3, Estimate: 10e6, Var: 4e12, Samples: 3, Mixed: true, MaxWeight: 2e6, Weighted: tt.weighted}
			plain, err := Interval(base, Auto, conf)
			if err != nil {
				t.Fatal(err)
			}
			s := base
			s.Spill, s.Bias, s.Excess = tt.spill, tt.bias, tt.excess
			r, err := Interval(s, Auto, conf)
			if err != nil {
				t.Fatal(err)
			}
			// The method's interval (auto: gamma, with a present row's
			// lower bound) at the shifted estimates.
			at := func(y float64) Result {
				b := base
				b.Estimate = y
				r, err := Interval(b, Auto, conf)
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			up, down := at(base.Estimate+s.Spill+s.Bias), at(base.Estimate-s.Excess)
			if r.Estimate != base.Estimate || r.Hi != up.Hi || r.Lo != down.Lo || !(r.Lo < plain.Lo && r.Hi >= plain.Hi) {
				t.Errorf("shifted %+v; want [%v, %v] around %v (plain [%v, %v])", r, down.Lo, up.Hi, base.Estimate, plain.Lo, plain.Hi)
			}
			if noted := slices.Contains(r.Notes, NoteBias); noted != tt.note {
				t.Errorf("notes %q: NoteBias %v, want %v", r.Notes, noted, tt.note)
			}
		})
	}
	if _, err := Interval(Stats{N: 1, Estimate: 1, Spill: -1}, Auto, 0.95); err == nil {
		t.Error("a negative spill is accepted")
	}
}

// TestIntervalHoldsEstimate checks that an interval holds its estimate
// where the exact count's interval would not (one allocation of five
// periods: N = 1 almost surely, the estimate Z/π just above Z), and says
// why it is narrow.
func TestIntervalHoldsEstimate(t *testing.T) {
	for _, n := range []float64{1, 3, 40} {
		s := single(n, 80<<10, 16<<10)
		for _, m := range []Method{Auto, Exact, CampPaulson} {
			r, err := Interval(s, m, 0.95)
			if err != nil {
				t.Fatal(err)
			}
			if r.Lo > r.Estimate || r.Hi < r.Estimate {
				t.Errorf("%d × 80 KiB, %v: estimate %v outside [%v, %v]", int(n), m, r.Estimate, r.Lo, r.Hi)
			}
			if n == 1 && m == Auto && !slices.Contains(r.Notes, NoteContains) {
				t.Errorf("1 × 80 KiB, %v: notes %q lack why the interval is narrow", m, r.Notes)
			}
		}
	}
}

// TestLargeMissedCoverage: a row that mixes allocations many periods
// large with small ones gets the gamma interval, whose variance is nearly
// all the small ones': its upper end must still allow for a large
// allocation missed whole, which happens with probability about L =
// Σ (1−π)/π. With 200 to 3,000 × 1 MiB at R = 128 KiB (L ≈ 0.07 to 1)
// beside 64 B allocations worth 4R, the bound misses high at most 0.3% of
// the time; one that ignored L (the floor at R alone) missed 3.5–4.3%.
// Each tail must stay within 2.5% plus four standard errors (20,000 draws
// from a fixed seed: the test is deterministic).
func TestLargeMissedCoverage(t *testing.T) {
	const rate, big, small = 131072.0, 1 << 20, 64.0
	rng := rand.New(rand.NewPCG(10, 1))
	for _, n := range []int{30, 200, 1000, 3000} {
		piBig, piSmall := -math.Expm1(-big/rate), -math.Expm1(-small/rate)
		nSmall := 4 * rate / small
		truth := float64(n)*big + nSmall*small
		const draws = 20000
		below, above := 0, 0
		for range draws {
			// Successes among trials by exponential gaps (the count of a
			// Bernoulli process): missed large ones, sampled small ones.
			count := func(trials, p float64) float64 {
				k := 0.0
				for x := math.Floor(rng.ExpFloat64() / -math.Log1p(-p)); x < trials; x += 1 + math.Floor(rng.ExpFloat64()/-math.Log1p(-p)) {
					k++
				}
				return k
			}
			kBig, kSmall := float64(n)-count(float64(n), 1-piBig), count(nSmall, piSmall)
			var s Stats
			for _, g := range []struct{ k, z float64 }{{kBig, big}, {kSmall, small}} {
				if g.k > 0 {
					one := single(g.k, g.z, rate)
					one.MaxWeight = math.Max(one.MaxWeight, rate) // unbias.Samples.Stats floors it at R
					s.Merge(&one)
				}
			}
			r, err := Interval(s, Auto, 0.95)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case truth < r.Lo:
				below++
			case truth > r.Hi:
				above++
			}
		}
		ceil := 0.025 + 4*math.Sqrt(0.025*0.975/draws)
		lo, hi := float64(below)/draws, float64(above)/draws
		t.Logf("%d × 1 MiB + 4R of 64 B at 128 KiB: truth below %.4f, above %.4f", n, lo, hi)
		if lo > ceil || hi > ceil {
			t.Errorf("%d × 1 MiB + 4R of 64 B at 128 KiB: truth below the interval %.4f, above %.4f of the time (each must be ≤ %.4f)", n, lo, hi, ceil)
		}
	}
}

// TestAllowUnseen: statistics summed over inputs of periods up to R allow
// one unseen sample of weight R in their upper end, even where their own
// samples recorded every allocation; the lower end stays what the samples
// hold, and empty or unsampled statistics are unchanged.
func TestAllowUnseen(t *testing.T) {
	const R = 16 << 20
	whole := Stats{N: 1, Estimate: 1 << 20, Samples: 1024, P: 1, Unit: 1024, Complete: true}
	s := whole
	s.AllowUnseen(R)
	r, err := Interval(s, Auto, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if r.Lo != whole.Estimate || r.Hi < whole.Estimate+R {
		t.Errorf("whole at its own period, allowed R unseen: [%g, %g], want lower end %g and upper end above %g", r.Lo, r.Hi, whole.Estimate, whole.Estimate+float64(R))
	}
	for _, tc := range []struct {
		name string
		s    Stats
		rate float64
	}{
		{"empty", Stats{}, R},
		{"rate 1", whole, 1},
		{"no interval", Stats{N: 1, Estimate: 5, NoInterval: true}, R},
	} {
		got := tc.s
		got.AllowUnseen(tc.rate)
		if got != tc.s {
			t.Errorf("%s: AllowUnseen(%g) changed %+v to %+v", tc.name, tc.rate, tc.s, got)
		}
	}
	// 16 samples of 512 KiB at a period of 512 KiB (π = 1 − 1/e).
	const z, n = 512 << 10, 16
	pi := -math.Expm1(-1)
	sampled := Stats{N: 1, Estimate: n * z / pi, Var: n * z * z * (1 - pi) / (pi * pi), Samples: n, P: pi, Unit: z, MaxWeight: z}
	before, _ := Interval(sampled, Auto, 0.95)
	sampled.AllowUnseen(R)
	after, _ := Interval(sampled, Auto, 0.95)
	if after.Hi <= before.Hi || after.Lo != before.Lo {
		t.Errorf("sampled at 512 KiB, allowed 16 MiB unseen: [%g, %g] from [%g, %g], want only the upper end higher", after.Lo, after.Hi, before.Lo, before.Hi)
	}
}

// TestRepeat: Repeat(k) is the statistics merged with themselves k times.
func TestRepeat(t *testing.T) {
	s := Stats{N: 2, Estimate: 3e6, Var: 4e11, Samples: 5, MaxWeight: 524288, P: 0.1, Unit: 4096, Rate: 524288,
		Offset: 3, Bias: 7, Spill: 1, Excess: 2, LargeMissed: 0.5, LargeMissedValue: 9, Seen: 11, Approx: true}
	want := s
	for range 3 {
		want.Merge(&s)
	}
	got := s
	got.Repeat(4)
	if got != want {
		t.Errorf("Repeat(4) = %+v, want %+v", got, want)
	}
}

// TestAllowUnseenCount: a count of one size, sampled at R, allows one more
// sample from an input of a longer period R′ that had none: (1−π′)/π′
// allocations of that size, π′ its inclusion probability at R′. Counts
// of mixed sizes or periods say no size and stay as they are.
func TestAllowUnseenCount(t *testing.T) {
	const z, R, R2 = 64.0, 512 << 10, 16 << 20
	p := -math.Expm1(-z / R)
	s := Stats{N: 1, Estimate: 18 / p, Var: 18 * (1 - p) / (p * p), Samples: 18, P: p, Unit: 1, Rate: R, MaxWeight: (1 - p) / p, Conditional: true}
	s.AllowUnseenCount(R2)
	p2 := -math.Expm1(-z / R2)
	if want := (1 - p2) / p2; math.Abs(s.MaxWeight-want) > 1e-6*want {
		t.Errorf("MaxWeight %g, want (1−π′)/π′ = %g", s.MaxWeight, want)
	}
	for _, m := range []Stats{
		{N: 2, Estimate: 5e5, Var: 7e10, Samples: 31, MaxWeight: 8191, Mixed: true, MixedRate: true},
		{N: 1, Estimate: 10, Samples: 10, P: 1, Unit: 1, Complete: true},
		s, // already at R2's weight: a shorter period adds nothing
	} {
		got := m
		got.AllowUnseenCount(R)
		if got != m {
			t.Errorf("AllowUnseenCount(%d) changed %+v to %+v", R, m, got)
		}
	}
}

// The note of an upper bound raised for unseen sizes says the periods at
// the level asked for: ln(2/α), 3.7 at 95%, not at every level.
func TestNoteHiddenLevel(t *testing.T) {
	for _, c := range []struct {
		alpha float64
		want  string
	}{
		{0.05, "so up to 3.7 sampling periods of them at 95%"},
		{0.01, "so up to 5.3 sampling periods of them at 99%"},
		{0.1, "so up to 3.0 sampling periods of them at 90%"},
		{0.001, "so up to 7.6 sampling periods of them at 99.9%"},
	} {
		if got := NoteHidden(c.alpha); !strings.HasSuffix(got, c.want) {
			t.Errorf("alpha %g: %q, want it to end %q", c.alpha, got, c.want)
		}
	}
}

// TestHugePeriodsEnd: the integer bisections end where quantiles pass
// 2⁵³, past which doubles are no integers apart (a 150-byte profile with
// a period of 2⁵⁵ bytes hung report before), and their bounds still
// bracket the estimate.
func TestHugePeriodsEnd(t *testing.T) {
	for _, e := range []float64{50, 53, 55, 60, 62} {
		rate := math.Exp2(e)
		p := -math.Expm1(-8 / rate) // 8-byte objects
		done := make(chan Result, 2)
		go func() {
			done <- PresentExactInterval(10*8/p, 10, p, 8, 0.05)
			lo, _ := CampPaulsonQuantile(0.025, 10, p)
			done <- Result{Estimate: 10 / p, Lo: lo, Hi: 10 / p}
		}()
		for range 2 {
			select {
			case r := <-done:
				if !(r.Lo > 0 && r.Lo < r.Estimate && r.Estimate <= r.Hi) {
					t.Errorf("period 2^%v: interval %v – %v of %v", e, r.Lo, r.Hi, r.Estimate)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("period 2^%v: no interval after 20 s", e)
			}
		}
	}
}
