package sim

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/report"
	"github.com/heapest/heapest/unbias"
)

func TestBinomialByGaps(t *testing.T) {
	// Mean and variance of Binomial(n, π) over many draws, within 5
	// standard errors (a fixed seed makes the test deterministic).
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		n  int64
		pi float64
	}{{1_000_000, 1e-5}, {50, 0.5}, {3, 0.999}, {10, 1}} {
		const draws = 20000
		var sum, sq float64
		for range draws {
			k := float64(binomialByGaps(rng, c.n, c.pi))
			if k < 0 || k > float64(c.n) {
				t.Fatalf("n=%d π=%v: draw %v", c.n, c.pi, k)
			}
			sum += k
			sq += k * k
		}
		mean := sum / draws
		v := sq/draws - mean*mean
		wantMean := float64(c.n) * c.pi
		wantVar := wantMean * (1 - c.pi)
		if se := math.Sqrt(wantVar / draws); math.Abs(mean-wantMean) > 5*se+1e-12 {
			t.Errorf("n=%d π=%v: mean %v, want %v", c.n, c.pi, mean, wantMean)
		}
		if wantVar > 0 && math.Abs(v/wantVar-1) > 0.1 {
			t.Errorf("n=%d π=%v: variance %v, want %v", c.n, c.pi, v, wantVar)
		}
	}
}

// TestWriteDumpRoundTrip checks that heapest reads the simulated dumps as
// jemalloc wrote them: raw lines give back the sampled counts, and
// prof_unbias lines decode to the sum of the per-sample HT weights.
func TestWriteDumpRoundTrip(t *testing.T) {
	p := Process{LgRate: 19, Stacks: []Stack{
		{Allocs: []Alloc{{Size: 64, Count: 1}}},
		{Allocs: []Alloc{{Size: 4096, Count: 1}}},
		{Allocs: []Alloc{{Size: 32, Count: 1}, {Size: 8 << 20, Count: 1}}},
		{},
	}}
	samples := []Sampled{{64: 7}, {4096: 3}, {32: 2, 8 << 20: 1}, nil}
	for _, enc := range []Encoding{Raw, Unbias} {
		var buf bytes.Buffer
		if err := WriteDump(&buf, p.LgRate, samples, enc); err != nil {
			t.Fatal(err)
		}
		text := buf.String()
		b := report.NewBuilder(report.Options{Value: unbias.InUseSpace,
			By: aggregate.ByLeaf, Confidence: 0.95, Method: ci.Auto})
		if _, _, err := b.AddReader("sim.heap", &buf, report.Input{}); err != nil {
			t.Fatalf("%s: %v\n%s", enc, err, text)
		}
		rep, err := b.Report()
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Rows) != 3 {
			t.Fatalf("%s: %d rows, want 3 (the empty stack is not written)", enc, len(rep.Rows))
		}
		for _, row := range rep.Rows {
			i := rowIndex(4)[row.Key]
			want := 0.0
			for z, n := range samples[i] {
				_, us := unbias.JemallocSampleWeights(z, 19)
				want += float64(n) * float64(us)
			}
			single := len(samples[i]) == 1
			if single && row.Stats.Samples != float64(sumCounts(samples[i])) {
				t.Errorf("%s row %d: samples %v", enc, i, row.Stats.Samples)
			}
			// Single-size lines decode to the HT sum up to jemalloc's
			// rounding; the mixed raw line's average-size estimate is the
			// least HT value its samples allow, at most its bias bound
			// below.
			if !single && enc == Raw {
				if e := row.Stats.Estimate; want < e || want > e+row.Stats.Bias {
					t.Errorf("%s row %d: HT %v outside [%v, %v]", enc, i, want, e, e+row.Stats.Bias)
				}
			} else if math.Abs(row.Stats.Estimate-want) > 0.01*want {
				t.Errorf("%s row %d: estimate %v, HT %v", enc, i, row.Stats.Estimate, want)
			}
		}
	}
}

func sumCounts(s Sampled) int64 {
	var n int64
	for _, c := range s {
		n += c
	}
	return n
}

// TestCoverage runs every scenario of the study with a small replicate
// count. Seeds are fixed, so the outcome is deterministic; the bound still
// allows four standard errors below the 94.5% requirement so that a change
// of seed or of replicate count does not turn noise into a failure.
func TestCoverage(t *testing.T) {
	reps := 150
	if testing.Short() {
		reps = 12
	}
	for _, sc := range Scenarios() {
		for _, enc := range []Encoding{Raw, Unbias} {
			r, err := Run(sc, enc, Options{Reps: reps, Seed: 7, Confidence: 0.95, Value: unbias.InUseSpace})
			if err != nil {
				t.Fatal(err)
			}
			auto := r.Tallies[0]
			se := math.Sqrt(0.05 * 0.95 / float64(auto.Rows))
			if auto.Coverage() < 0.945-4*se {
				t.Errorf("%s/%s: auto covers %.3f over %d rows", sc.Name, enc, auto.Coverage(), auto.Rows)
			}
			if tot := r.Totals[0]; tot.Rows != reps || tot.Coverage() < 0.945-4*math.Sqrt(0.05*0.95/float64(reps)) {
				t.Errorf("%s/%s: auto covers %.3f of %d totals", sc.Name, enc, tot.Coverage(), tot.Rows)
			}
			t.Logf("%s/%s: auto %.3f normal %.3f (%d rows)", sc.Name, enc, auto.Coverage(), r.Tallies[4].Coverage(), auto.Rows)
			if sc.Name == "small-s3" {
				// The normal interval's under-coverage at few samples must
				// show (it is ~85% at 3 samples).
				if n := r.Tallies[4]; n.Coverage() > 0.92 {
					t.Errorf("%s/%s: normal covers %.3f, expected clear under-coverage", sc.Name, enc, n.Coverage())
				}
			}
		}
	}
}
