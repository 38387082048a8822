package sim

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/report"
	"github.com/heapest/heapest/unbias"
)

// Methods are the interval methods the study compares, Auto first.
var Methods = []ci.Method{ci.Auto, ci.Exact, ci.CampPaulson, ci.Gamma, ci.Normal}

// Tally is one method's record over a scenario's rows.
type Tally struct {
	Method ci.Method
	// Rows is the number of (replicate, row) pairs scored: rows present in
	// the dump, plus the total of each replicate; for exact and
	// camp-paulson only those where the method applies.
	Rows int
	// Covered counts the intervals that contained the truth; Below and
	// Above the misses on each side.
	Covered, Below, Above int
	// RelWidth sums (hi − lo)/truth.
	RelWidth float64
	// ExactRows counts rows where the exact interval applied, and
	// WidthVsExact sums this method's width over exact's on them.
	ExactRows    int
	WidthVsExact float64
}

// Coverage is the covered fraction.
func (t Tally) Coverage() float64 { return float64(t.Covered) / float64(max(t.Rows, 1)) }

// MeanRelWidth is the mean (hi − lo)/truth.
func (t Tally) MeanRelWidth() float64 { return t.RelWidth / float64(max(t.Rows, 1)) }

// MeanWidthVsExact is the mean width ratio to exact where exact applies,
// NaN when it never applied.
func (t Tally) MeanWidthVsExact() float64 {
	if t.ExactRows == 0 {
		return math.NaN()
	}
	return t.WidthVsExact / float64(t.ExactRows)
}

// StudyResult is a scenario's outcome for one dump encoding.
type StudyResult struct {
	Scenario string
	Encoding Encoding
	Reps     int
	Tallies  []Tally // in Methods order
	// Totals are the same tallies for the dumps' totals alone.
	Totals []Tally
	// AutoUsed counts which method auto chose.
	AutoUsed map[string]int
}

// Options control a study run.
type Options struct {
	Reps       int
	Seed       uint64
	Confidence float64
	Value      unbias.Value
	// Conditional scores object counts against the allocations of the
	// sizes that were sampled (per row, in any of the merged processes),
	// what heapest's object intervals claim to hold
	// (ci.MethodConditional), rather than against every allocation.
	Conditional bool
	// Workers is the parallelism (0: GOMAXPROCS).
	Workers int
}

// Run replicates the sampling of sc's workload opt.Reps times, sends each
// replicate's dumps through the report pipeline and tallies every
// method's intervals against the truth.
func Run(sc Scenario, enc Encoding, opt Options) (StudyResult, error) {
	w := sc.Workload()
	truth := w.Truth()
	res := StudyResult{Scenario: sc.Name, Encoding: enc, Reps: opt.Reps, AutoUsed: map[string]int{}}
	for _, m := range Methods {
		res.Tallies = append(res.Tallies, Tally{Method: m})
		res.Totals = append(res.Totals, Tally{Method: m})
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	for wk := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := newAccumulator()
			for rep := wk; rep < opt.Reps; rep += workers {
				rng := rand.New(rand.NewPCG(opt.Seed, uint64(rep)))
				if err := replicate(rng, w, truth, enc, opt, local); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("%s/%s replicate %d: %w", sc.Name, enc, rep, err)
					}
					mu.Unlock()
					return
				}
			}
			mu.Lock()
			local.mergeInto(&res)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return res, firstErr
}

// accumulator is one worker's tallies: every scored row, and totals alone.
type accumulator struct {
	t, totals []Tally
	used      map[string]int
}

func newAccumulator() *accumulator {
	a := &accumulator{used: map[string]int{}}
	for _, m := range Methods {
		a.t = append(a.t, Tally{Method: m})
		a.totals = append(a.totals, Tally{Method: m})
	}
	return a
}

func (a *accumulator) mergeInto(r *StudyResult) {
	mergeTallies(r.Tallies, a.t)
	mergeTallies(r.Totals, a.totals)
	for k, v := range a.used {
		r.AutoUsed[k] += v
	}
}

func mergeTallies(dst, src []Tally) {
	for i, t := range src {
		d := &dst[i]
		d.Rows += t.Rows
		d.Covered += t.Covered
		d.Below += t.Below
		d.Above += t.Above
		d.RelWidth += t.RelWidth
		d.ExactRows += t.ExactRows
		d.WidthVsExact += t.WidthVsExact
	}
}

// replicate samples every process, writes and parses its dump, builds the
// report by leaf (one row per stack) and scores each row and the total.
func replicate(rng *rand.Rand, w Workload, truth Truth, enc Encoding, opt Options, acc *accumulator) error {
	b := report.NewBuilder(report.Options{Value: opt.Value, By: aggregate.ByLeaf,
		Confidence: opt.Confidence, Method: ci.Auto})
	var buf bytes.Buffer
	hit := make([]map[uint64]bool, len(truth.Objects)) // sizes sampled per row, in any process
	for i, p := range w.Processes {
		buf.Reset()
		sampled := Sample(rng, p)
		markSampled(hit, sampled)
		if err := WriteDump(&buf, p.LgRate, sampled, enc); err != nil {
			return err
		}
		if _, _, err := b.AddReader(fmt.Sprintf("sim-%d.heap", i), &buf, report.Input{}); err != nil {
			return err
		}
	}
	rep, err := b.Report()
	if err != nil {
		return err
	}
	want := truth.Bytes
	wantTotal := truth.TotalBytes
	if !opt.Value.IsSpace() {
		want, wantTotal = truth.Objects, truth.TotalObjects
		if opt.Conditional {
			want, wantTotal = sampledObjects(w, hit)
		}
	}
	index := rowIndex(len(want))
	for _, row := range rep.Rows {
		i, ok := index[row.Key]
		if !ok {
			return fmt.Errorf("report row %q is no simulated stack", row.Key)
		}
		if err := acc.score(row.Stats, want[i], opt.Confidence, false); err != nil {
			return err
		}
	}
	if rep.Total.Stats.N > 0 {
		return acc.score(rep.Total.Stats, wantTotal, opt.Confidence, true)
	}
	return nil
}

// markSampled records, per row, the sizes that got a sample.
func markSampled(hit []map[uint64]bool, sampled []Sampled) {
	for i, smp := range sampled {
		for z, n := range smp {
			if n > 0 {
				if hit[i] == nil {
					hit[i] = map[uint64]bool{}
				}
				hit[i][z] = true
			}
		}
	}
}

// sampledObjects is what object intervals conditional on the sampled
// sizes claim to hold: per row, the allocations, in every process, of
// the sizes some sample of the row hit in any process (a merged row's HT
// sum estimates all of them, processes that drew no sample included);
// for the total, those of the sizes sampled in any row.
func sampledObjects(w Workload, hit []map[uint64]bool) ([]float64, float64) {
	seen := make([]float64, len(hit))
	anyRow := map[uint64]bool{}
	for _, h := range hit {
		for z := range h {
			anyRow[z] = true
		}
	}
	total := 0.0
	for _, p := range w.Processes {
		for i, st := range p.Stacks {
			for _, a := range st.Allocs {
				if hit[i][a.Size] {
					seen[i] += float64(a.Count)
				}
				if anyRow[a.Size] {
					total += float64(a.Count)
				}
			}
		}
	}
	return seen, total
}

func rowIndex(n int) map[string]int {
	m := make(map[string]int, n)
	for i := range n {
		m[RowKey(i)] = i
	}
	return m
}

// score computes every method's interval for one row (or total).
func (a *accumulator) score(s ci.Stats, truth, conf float64, total bool) error {
	exact, err := ci.Interval(s, ci.Exact, conf)
	if err != nil {
		return err
	}
	exactApplies := exact.Method == ci.Exact.String() && exact.Hi > exact.Lo
	for i, m := range Methods {
		r, err := ci.Interval(s, m, conf)
		if err != nil {
			return err
		}
		if m == ci.Auto {
			a.used[r.Method]++
		}
		if r.Method == ci.MethodNone {
			continue // no interval claimed: nothing to score
		}
		if (m == ci.Exact || m == ci.CampPaulson) && r.Method != m.String() && r.Method != ci.MethodConditional {
			continue // fell back to gamma: not this method's row
		}
		a.t[i].add(r, truth, exact, exactApplies)
		if total {
			a.totals[i].add(r, truth, exact, exactApplies)
		}
	}
	return nil
}

// add scores one interval against the truth.
func (t *Tally) add(r ci.Result, truth float64, exact ci.Result, exactApplies bool) {
	t.Rows++
	switch {
	case truth < r.Lo:
		t.Below++
	case truth > r.Hi:
		t.Above++
	default:
		t.Covered++
	}
	t.RelWidth += (r.Hi - r.Lo) / truth
	if exactApplies {
		t.ExactRows++
		t.WidthVsExact += (r.Hi - r.Lo) / (exact.Hi - exact.Lo)
	}
}
