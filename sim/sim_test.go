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

// coverageReps gives every scenario at least ~800 scored rows per
// encoding (the sparsest, "huge", has 4 rows a replicate).
const coverageReps = 200

// powerRows is the fewest rows at which a coverage of 90% falls below
// sensitiveFloor with probability ≥ 0.99 while 95% stays four standard
// errors above it.
const powerRows = 732

// sensitiveFloor is the coverage below which n rows fail a scenario: at
// n ≥ powerRows a true coverage of 90% falls below it with probability
// ≥ 0.99 (one-sided, 2.33 standard errors).
func sensitiveFloor(n int) float64 { return 0.90 + 2.33*math.Sqrt(0.09/float64(n)) }

// tailCeiling is the miss rate on one side above which n rows fail: 2.5%
// plus four standard errors.
func tailCeiling(n int) float64 { return 0.025 + 4*math.Sqrt(0.025*0.975/float64(n)) }

// pooled sums auto's tallies over scenarios, for the checks whose power
// needs more rows than one scenario has.
type pooled struct{ rows, totals Tally }

// checkStudy holds one scenario's auto intervals to the floors above.
func checkStudy(t *testing.T, name string, r StudyResult, pool *pooled) {
	t.Helper()
	auto := r.Tallies[0]
	if auto.Rows < powerRows {
		t.Fatalf("%s: %d rows scored, fewer than the %d the test needs to notice 90%% coverage", name, auto.Rows, powerRows)
	}
	if c := auto.Coverage(); c < sensitiveFloor(auto.Rows) {
		t.Errorf("%s: auto covers %.4f over %d rows (floor %.4f)", name, c, auto.Rows, sensitiveFloor(auto.Rows))
	}
	below, above := float64(auto.Below)/float64(auto.Rows), float64(auto.Above)/float64(auto.Rows)
	if ceil := tailCeiling(auto.Rows); below > ceil || above > ceil {
		t.Errorf("%s: auto misses %.4f below and %.4f above over %d rows (each must be ≤ %.4f)", name, below, above, auto.Rows, ceil)
	}
	tot := r.Totals[0]
	if tot.Rows > 0 && tot.Coverage() < 0.945-4*math.Sqrt(0.05*0.95/float64(tot.Rows)) {
		t.Errorf("%s: auto covers %.3f of %d totals", name, tot.Coverage(), tot.Rows)
	}
	for _, x := range []struct{ dst, src *Tally }{{&pool.rows, &auto}, {&pool.totals, &tot}} {
		x.dst.Rows += x.src.Rows
		x.dst.Covered += x.src.Covered
		x.dst.Below += x.src.Below
		x.dst.Above += x.src.Above
	}
	t.Logf("%s: auto %.4f (below %.4f, above %.4f) over %d rows, totals %.3f; normal %.3f", name, auto.Coverage(), below, above,
		auto.Rows, tot.Coverage(), r.Tallies[4].Coverage())
}

// checkPooled holds the pooled tallies to the sensitive floors: the
// totals of all scenarios together, and each tail of all rows.
func checkPooled(t *testing.T, what string, pool pooled) {
	t.Helper()
	if c, n := pool.totals.Coverage(), pool.totals.Rows; n >= powerRows && c < sensitiveFloor(n) || n < powerRows && c < 0.945-4*math.Sqrt(0.05*0.95/float64(max(n, 1))) {
		t.Errorf("%s: totals of all scenarios covered %.4f over %d", what, c, n)
	}
	n := pool.rows.Rows
	below, above := float64(pool.rows.Below)/float64(n), float64(pool.rows.Above)/float64(n)
	if ceil := tailCeiling(n); below > ceil || above > ceil {
		t.Errorf("%s: all rows missed %.4f below and %.4f above over %d (each must be ≤ %.4f)", what, below, above, n, ceil)
	}
	t.Logf("%s: all rows %.4f (below %.4f, above %.4f) over %d; totals %.4f over %d", what, pool.rows.Coverage(), below, above, n,
		pool.totals.Coverage(), pool.totals.Rows)
}

// TestCoverage runs every scenario of the study, bytes, both dump
// encodings. Seeds are fixed, so the outcome is deterministic; the floors
// are set so that a drop of coverage from 95% to 90% fails with
// probability ≥ 0.99 (per scenario for rows, pooled for totals), and each
// tail is checked on its own.
func TestCoverage(t *testing.T) {
	if testing.Short() {
		t.Skip("short: the coverage study takes half a minute")
	}
	var pool pooled
	for _, sc := range Scenarios() {
		for _, enc := range []Encoding{Raw, Unbias} {
			r, err := Run(sc, enc, Options{Reps: coverageReps, Seed: 7, Confidence: 0.95, Value: unbias.InUseSpace})
			if err != nil {
				t.Fatal(err)
			}
			checkStudy(t, sc.Name+"/"+enc.String(), r, &pool)
			if sc.Name == "small-s3" {
				// The normal interval's under-coverage at few samples must
				// show (it is ~85% at 3 samples).
				if n := r.Tallies[4]; n.Coverage() > 0.92 {
					t.Errorf("%s/%s: normal covers %.3f, expected clear under-coverage", sc.Name, enc, n.Coverage())
				}
			}
		}
	}
	checkPooled(t, "bytes", pool)
}

// TestObjectCoverage: object counts are intervals on the allocations of
// the sampled sizes (ci.MethodConditional); scored against those, in the
// scenarios where rows have an object interval at all (single sizes per
// dump line: prof_unbias lines, or raw lines of one sample).
func TestObjectCoverage(t *testing.T) {
	if testing.Short() {
		t.Skip("short: the coverage study takes half a minute")
	}
	var pool pooled
	for _, sc := range Scenarios() {
		switch sc.Name {
		case "small-s1", "small-s0.2", "small-s3", "near-R", "huge", "hidden-0.5R", "size-class-avg", "two-rate-merge":
		case "hidden-2R":
			// A known limit, measured here and in docs/statistics.md: a
			// prof_unbias line of 64 B and 4 MiB samples can encode
			// exactly as one size (4 × 64 B + 3 × 4 MiB as 28 × 448 B),
			// and its count then rests on the wrong size.
			r, err := Run(sc, Unbias, Options{Reps: coverageReps, Seed: 9, Confidence: 0.95, Value: unbias.InUseObjects, Conditional: true})
			if err != nil {
				t.Fatal(err)
			}
			a := r.Tallies[0]
			t.Logf("%s/objects (known limit): auto %.4f (below %.4f) over %d rows", sc.Name, a.Coverage(), float64(a.Below)/float64(a.Rows), a.Rows)
			if a.Above > 0 || a.Rows == 0 {
				t.Errorf("%s/objects: %d rows, %d missed above: only the mis-sized rows may miss, and they miss low", sc.Name, a.Rows, a.Above)
			}
			continue
		default:
			continue
		}
		r, err := Run(sc, Unbias, Options{Reps: coverageReps, Seed: 9, Confidence: 0.95,
			Value: unbias.InUseObjects, Conditional: true})
		if err != nil {
			t.Fatal(err)
		}
		if r.AutoUsed[ci.MethodConditional] == 0 {
			t.Errorf("%s: no object row was marked conditional (%v)", sc.Name, r.AutoUsed)
		}
		checkStudy(t, sc.Name+"/objects", r, &pool)
	}
	checkPooled(t, "objects", pool)
}
