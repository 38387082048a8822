package unbias

import (
	"math"
	"testing"

	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/parse"
)

// Samples.Stats against the formulas written out independently: π(Z) =
// 1 − e^(−Z/R) with math.Exp, HT s·Z/π, Approach 2 s·(R−1) + u.
func TestSamplesStats(t *testing.T) {
	const R = 524288
	pi4k := 1 - math.Exp(-4096.0/R)
	pi1 := 1 - math.Exp(-1.0/R)
	p := 1 / 102400.0
	tests := []struct {
		name      string
		g         Samples
		v         Value
		est, vari float64
		mixed     bool
		offset    bool
	}{
		{"one size, bytes", Samples{Count: 3, Rate: R, Size: 4096}, AllocSpace, 3 * 4096 / pi4k, 3 * 4096 * 4096 * (1 - pi4k) / (pi4k * pi4k), false, false},
		{"one size, objects", Samples{Count: 3, Rate: R, Size: 4096}, InUseObjects, 3 / pi4k, 3 * (1 - pi4k) / (pi4k * pi4k), false, false},
		{"tiny", Samples{Count: 5, Rate: R}, InUseSpace, 5 / pi1, 5 * (1 - pi1) / (pi1 * pi1), false, false},
		// The .NET design's worked example: 8·102399 + 10908.
		{"offsets", Samples{Count: 8, Rate: 102400, Offset: 10908, HasOffset: true, OpenEnd: true}, AllocSpace, 830100, 8 * (1 - p) / (p * p), true, true},
		// With sizes, a trace record is HT and still carries its offset.
		{"size and offset", Samples{Count: 1, Rate: 102400, Size: 48, Offset: 20, HasOffset: true, OpenEnd: true}, AllocSpace,
			48 / (1 - math.Exp(-48.0/102400)), 48 * 48 * math.Exp(-48.0/102400) / math.Pow(1-math.Exp(-48.0/102400), 2), false, true},
		// jemalloc's trial per byte at lg_prof_sample:4.
		{"geometric", Samples{Count: 100, Rate: 16, Size: 32, Geometric: true}, AllocSpace,
			100 * 32 / (1 - math.Pow(15.0/16, 32)), 100 * 32 * 32 * math.Pow(15.0/16, 32) / math.Pow(1-math.Pow(15.0/16, 32), 2), false, false},
		// At R = 1 every allocation was recorded, whichever the sampler.
		{"period 1", Samples{Count: 10, Rate: 1, Size: 8}, AllocSpace, 80, 0, false, false},
		{"period 1, geometric", Samples{Count: 10, Rate: 1, Size: 8, Geometric: true}, AllocObjects, 10, 0, false, false},
		// Approach 2 is about bytes: an object value ignores the offset.
		{"offsets, objects", Samples{Count: 8, Rate: 102400, Size: 48, Offset: 10908, HasOffset: true}, AllocObjects,
			8 / (1 - math.Exp(-48.0/102400)), 8 * math.Exp(-48.0/102400) / math.Pow(1-math.Exp(-48.0/102400), 2), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := tt.g.Stats(tt.v)
			if !near6(st.Estimate, tt.est) || !near6(st.Var, tt.vari) || st.Samples != tt.g.Count || st.N != 1 || st.Rate != tt.g.Rate {
				t.Errorf("got estimate %v var %v samples %v N %d rate %v; want %v, %v, %v, 1, %v",
					st.Estimate, st.Var, st.Samples, st.N, st.Rate, tt.est, tt.vari, tt.g.Count, tt.g.Rate)
			}
			if st.Mixed != tt.mixed || st.HasOffset != tt.offset || (tt.offset && (st.Offset != tt.g.Offset || st.OpenEnd != tt.g.OpenEnd)) {
				t.Errorf("mixed %v offset %v (%v, open end %v); want mixed %v offset %v", st.Mixed, st.HasOffset, st.Offset, st.OpenEnd, tt.mixed, tt.offset)
			}
			if err := st.Validate(); err != nil {
				t.Error(err)
			}
		})
	}
}

// near6 compares to 1e-6 relative: the formulas above use Exp where the
// code uses Expm1, which differ in the last digits for Z ≪ R.
func near6(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(math.Abs(a), math.Abs(b)) }

// A one-size record is the calculator's group: Contribute and Samples.Stats
// give intervals that agree to the byte.
func TestRecordIsSamples(t *testing.T) {
	r := rec(parse.Bernoulli, 1<<19, parse.Counts{Objects: 20, Bytes: 960, Size: 48})
	c := Contribute(r, InUseSpace)
	g := Samples{Count: 20, Rate: 1 << 19, Size: 48}.Stats(InUseSpace)
	rc, err1 := ci.Interval(c.Stats, ci.Auto, 0.95)
	rg, err2 := ci.Interval(g, ci.Auto, 0.95)
	if err1 != nil || err2 != nil || rc.Lo != rg.Lo || rc.Hi != rg.Hi || rc.Estimate != rg.Estimate || rc.Method != rg.Method {
		t.Errorf("record %+v %v, samples %+v %v", rc, err1, rg, err2)
	}
}
