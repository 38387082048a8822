package advise

import (
	"math"
	"strings"
	"testing"

	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/unbias"
)

var bytes10 = Target{Precision: 0.1, Confidence: 0.95, Value: unbias.InUseSpace}

func TestKnobsFor(t *testing.T) {
	for _, tc := range []struct {
		rate   float64
		lg     int
		whole  int64
		perGiB float64
	}{
		{524288, 19, 524288, 2048},
		{524287.9, 18, 524287, (1 << 30) / 524287.9},
		{40000, 15, 40000, (1 << 30) / 40000.0},
		{1, 0, 1, 1 << 30},
		{0.5, 0, 1, 1 << 30}, // below one byte: every allocation
	} {
		k := KnobsFor(tc.rate)
		if k.JemallocLg != tc.lg || k.GoMemProfileRate != tc.whole || k.TcmallocSample != tc.whole || k.SamplesPerGiB != tc.perGiB {
			t.Errorf("KnobsFor(%v) = %+v, want lg %d, whole %d, %v per GiB", tc.rate, k, tc.lg, tc.whole, tc.perGiB)
		}
		if k.JemallocRate() > math.Max(tc.rate, 1) {
			t.Errorf("KnobsFor(%v): jemalloc's 2^%d is above the period", tc.rate, k.JemallocLg)
		}
	}
}

// TestPoissonLowerQuantile checks the quantile against sums of the
// probability mass function, and the normal branch's continuity.
func TestPoissonLowerQuantile(t *testing.T) {
	for _, a := range []float64{0.05, 0.5, 3, 10, 99.5, 400, 5000} {
		for _, q := range []float64{0.05, 0.1, 0.3} {
			want, cdf := 0.0, 0.0
			for k := 0.0; ; k++ {
				lg, _ := math.Lgamma(k + 1)
				cdf += math.Exp(k*math.Log(a) - a - lg)
				if cdf > q {
					want = k
					break
				}
			}
			if got := poissonLowerQuantile(a, q); got != want {
				t.Errorf("poissonLowerQuantile(%v, %v) = %v, want %v", a, q, got, want)
			}
		}
	}
	below, above := poissonLowerQuantile(normalFrom, 0.05), poissonLowerQuantile(normalFrom+1, 0.05)
	if d := above - below; d < 0 || d > 2 {
		t.Errorf("quantile jumps by %v across the normal approximation's threshold", d)
	}
}

func TestTargetCheck(t *testing.T) {
	for _, tc := range []struct {
		t    Target
		want string
	}{
		{bytes10, ""},
		{Target{Precision: 0, Confidence: 0.95}, "precision 0"},
		{Target{Precision: math.Inf(1), Confidence: 0.95}, "precision +Inf"},
		{Target{Precision: 0.1, Confidence: 1}, "confidence 1"},
		{Target{Precision: 0.1, Confidence: 0.95, Assurance: 0.5}, "assurance 0.5"},
	} {
		err := tc.t.Check()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Check(%+v) = %v, want %q", tc.t, err, tc.want)
		}
	}
}

// TestRateOneSize checks the bisection against the closed form for tiny
// allocations: the count is Poisson(B/R), and the exact interval's
// relative half-width at its lower 5% quantile k is the target.
func TestRateOneSize(t *testing.T) {
	row := Row{Key: "r", Parts: []Part{{16, 64 << 20}}}
	rate, err := bytes10.Rate(row)
	if err != nil {
		t.Fatal(err)
	}
	m := 64 << 20 / rate // expected samples, π ≈ 16/R
	k := poissonLowerQuantile(m, 0.05)
	// 1.96/√k is the normal-approximate relative half-width at k samples.
	if w := 1.96 / math.Sqrt(k); math.Abs(w-0.1) > 0.005 {
		t.Errorf("Rate = %.0f: %.0f expected samples, %v at the 5%% quantile, ±%.3f, want about ±0.100", rate, m, k, w)
	}
	w, err := bytes10.HalfWidth(row, rate, 1)
	if err != nil || w > 0.1 || w < 0.099 {
		t.Errorf("HalfWidth at the advised rate = %v (%v), want just within 0.1", w, err)
	}
	w2, _ := bytes10.HalfWidth(row, rate*1.01, 1)
	if w2 <= 0.1 {
		t.Errorf("HalfWidth 1%% above the advised rate = %v, still within 0.1: not the largest", w2)
	}
}

func TestRateGrowsWithTheRow(t *testing.T) {
	prev := 0.0
	for _, mib := range []float64{1, 4, 16, 64} {
		row := Row{Key: "r", Parts: []Part{{64, mib * (1 << 20)}, {1 << 20, mib * (1 << 20)}}}
		rate, err := bytes10.Rate(row)
		if err != nil {
			t.Fatal(err)
		}
		if rate <= prev {
			t.Errorf("%v MiB: rate %.0f, not above %.0f for a smaller row", mib, rate, prev)
		}
		prev = rate
	}
}

func TestRateEdges(t *testing.T) {
	for _, tc := range []struct {
		name     string
		row      Row
		min, max float64
	}{
		{"nothing allocated: record everything", Row{Key: "r", Parts: []Part{{64, 0}}}, 1, 1},
		// One object is known to ±10% only if it is sampled almost
		// surely: π(64 B) ≥ 95% needs R ≤ 64/ln 20 ≈ 21 B.
		{"one 64 B object", Row{Key: "r", Parts: []Part{{64, 64}}}, 2, 21.4},
		{"petabytes of 1 GiB objects: any period", Row{Key: "r", Parts: []Part{{1 << 30, 1 << 60}}}, 1 << 50, 1 << 50},
		// One sampled 944 KiB object at R = 1 MiB is estimated at 1.66
		// objects' worth: still one object, known to ±10% once sampled
		// almost surely (π ≥ 95%: R ≤ 944 KiB/ln 20 ≈ 315 KiB, less the
		// allowance for sizes no sample hit). It asked for R = 1 B.
		{"one large object's scaled estimate", Row{Key: "r", Parts: []Part{{966656, 1605134}}}, 16 << 10, 315 << 10},
	} {
		got, err := bytes10.Rate(tc.row)
		if err != nil || got < tc.min || got > tc.max {
			t.Errorf("%s: Rate = %v (%v), want %v to %v", tc.name, got, err, tc.min, tc.max)
		}
	}
}

func TestDumps(t *testing.T) {
	row := Row{Key: "r", Parts: []Part{{64, 10 << 20}}}
	rate, err := bytes10.Rate(row)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rate     float64
		min, max int
	}{
		{rate, 1, 1},
		{rate / 2, 1, 1},
		// Twice the period, twice the dumps (a few more: the
		// assurance's margin shrinks more slowly than the count grows).
		{2 * rate, 2, 3},
		{16 * rate, 15, 17},
	} {
		n, err := bytes10.Dumps(row, tc.rate)
		if err != nil || n < tc.min || n > tc.max {
			t.Errorf("Dumps at %.0f = %d (%v), want %d to %d", tc.rate, n, err, tc.min, tc.max)
		}
		if ok, _ := bytes10.reaches(row, tc.rate, n); !ok {
			t.Errorf("Dumps at %.0f = %d does not reach the target", tc.rate, n)
		}
		if ok, _ := bytes10.reaches(row, tc.rate, n-1); n > 1 && ok {
			t.Errorf("Dumps at %.0f = %d, but %d already reach the target", tc.rate, n, n-1)
		}
	}
}

func TestPartsOf(t *testing.T) {
	st := func(est float64) ci.Stats { return ci.Stats{N: 1, Estimate: est, Samples: 3} }
	for _, tc := range []struct {
		name  string
		mix   map[float64]ci.Stats
		v     unbias.Value
		dumps int
		want  []Part
		skip  string
	}{
		{"bytes by size, per dump, in size order", map[float64]ci.Stats{4096: st(8192), 64: st(640)}, unbias.InUseSpace, 2,
			[]Part{{64, 320}, {4096, 4096}}, ""},
		{"objects become bytes", map[float64]ci.Stats{32: st(100)}, unbias.InUseObjects, 1, []Part{{32, 3200}}, ""},
		{"unknown sizes are kept for bytes", map[float64]ci.Stats{0: st(1000)}, unbias.InUseSpace, 1, []Part{{0, 1000}}, ""},
		{"unknown sizes: no object interval", map[float64]ci.Stats{0: st(10)}, unbias.InUseObjects, 1, nil, "object counts"},
		{"JFR", map[float64]ci.Stats{0: {N: 1, Estimate: 5, Weighted: true}}, unbias.AllocSpace, 1, nil, "throttle"},
		{"exact", map[float64]ci.Stats{8: {N: 1, Estimate: 5, Complete: true}}, unbias.InUseSpace, 1, nil, "already exact"},
	} {
		parts, skip := PartsOf(tc.mix, tc.v, tc.dumps)
		if !strings.Contains(skip, tc.skip) || tc.skip == "" && skip != "" {
			t.Errorf("%s: skip %q, want %q", tc.name, skip, tc.skip)
		}
		if len(parts) != len(tc.want) {
			t.Errorf("%s: parts %v, want %v", tc.name, parts, tc.want)
			continue
		}
		for i := range parts {
			if parts[i] != tc.want[i] {
				t.Errorf("%s: parts %v, want %v", tc.name, parts, tc.want)
			}
		}
	}
}

func TestAdvise(t *testing.T) {
	small := Row{Key: "small", Parts: []Part{{64, 1 << 20}}}
	big := Row{Key: "big", Parts: []Part{{64, 16 << 20}}}
	skipped := Row{Key: "jfr", Skip: "JFR"}
	p, err := Advise([]Row{big, small, skipped}, 512<<10, bytes10)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Rows) != 3 || p.Rows[2].Skip != "JFR" || p.Rows[2].Rate != 0 {
		t.Fatalf("rows = %+v", p.Rows)
	}
	if p.Rate != p.Rows[1].Rate || p.Rows[1].Rate >= p.Rows[0].Rate {
		t.Errorf("plan rate %.0f, want the smaller row's %.0f (< %.0f)", p.Rate, p.Rows[1].Rate, p.Rows[0].Rate)
	}
	if p.Dumps != p.Rows[1].Dumps || p.Dumps <= p.Rows[0].Dumps {
		t.Errorf("plan dumps %d, want the smaller row's %d (> %d)", p.Dumps, p.Rows[1].Dumps, p.Rows[0].Dumps)
	}
	if p.Knobs != KnobsFor(p.Rate) || p.CurrentKnobs.JemallocLg != 19 || p.Target.Assurance != DefaultAssurance {
		t.Errorf("knobs %+v, current %+v, assurance %v", p.Knobs, p.CurrentKnobs, p.Target.Assurance)
	}
	if d, _ := bytes10.Dumps(small, DotnetRate); p.DotnetDumps != d {
		t.Errorf(".NET dumps %d, want %d", p.DotnetDumps, d)
	}
	if _, err := Advise(nil, 0, Target{}); err == nil {
		t.Error("Advise with no precision: no error")
	}
}
