package nettrace_test

import (
	"bytes"
	"fmt"
	"sort"
	"testing"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/parse"
	nt "github.com/heapest/heapest/internal/nettracetest"
	"github.com/heapest/heapest/report"
	"github.com/heapest/heapest/unbias"
)

// coverageWorkload mixes sample counts and sizes: tiny objects, variable
// arrays, large-object-heap objects, objects far above the sampling period,
// each with enough bytes that a type almost never goes unsampled
// (P(no sample) < 1e-3 for all).
func coverageWorkload(seed uint64) nt.Workload {
	return nt.Workload{Seed: seed, Threads: 3, Types: []nt.TypeSpec{
		{Name: "System.String", Size: 24, Objects: 15000},                             // ~10 samples
		{Name: "System.Byte[]", Size: 100, MaxSize: 12000, Objects: 600},              // ~35
		{Name: "System.Object[]", Size: 85000, Objects: 4},                            // ~8
		{Name: "System.Char[]", Size: 600000, Objects: 3},                             // ~9, π≈1
		{Name: "Dictionary`2[System.String,System.Int32]", Size: 80, Objects: 100000}, // ~230
	}}
}

// TestNettraceCoverage: simulated AllocationSampled traces (V4, V5, V6)
// through the whole report pipeline. Per type, the 95% interval must
// contain the true allocated bytes in at least 94% of the traces, and the
// point estimate must be unbiased.
func TestNettraceCoverage(t *testing.T) {
	traces := 1200
	if testing.Short() {
		traces = 200
	}
	versions := []nt.Version{nt.V4, nt.V5, nt.V6}
	hits := map[string]int{}
	n := map[string]int{}
	ratio := map[string]float64{}
	for i := range traces {
		data, truth := nt.Simulate(coverageWorkload(uint64(i)+1), nt.Options{Version: versions[i%3], PID: 1})
		p, err := parse.Read(fmt.Sprintf("sim%d.nettrace", i), bytes.NewReader(data), parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := report.Build([]*parse.Profile{p}, report.Options{
			Value: unbias.AllocSpace, By: aggregate.ByType, Confidence: 0.95, Method: ci.Auto})
		if err != nil {
			t.Fatal(err)
		}
		rows := map[string]report.Row{}
		for _, r := range rep.Rows {
			rows[r.Key] = r
		}
		for ty, want := range truth.Bytes {
			n[ty]++
			r, ok := rows[ty]
			if !ok {
				continue // not sampled: no row can cover it
			}
			checkApproach2(t, ty, r, float64(truth.Samples[ty]), truth.Offset[ty])
			ratio[ty] += r.Flat.Estimate / want
			if r.Flat.Lo <= want && want <= r.Flat.Hi {
				hits[ty]++
			}
		}
	}
	types := make([]string, 0, len(n))
	for ty := range n {
		types = append(types, ty)
	}
	sort.Strings(types)
	all, allN := 0, 0
	var low []string
	for _, ty := range types {
		cov := float64(hits[ty]) / float64(n[ty])
		mean := ratio[ty] / float64(n[ty])
		t.Logf("%-45s coverage %.3f (%d/%d), mean estimate/truth %.3f", ty, cov, hits[ty], n[ty], mean)
		all += hits[ty]
		allN += n[ty]
		if cov < 0.94 {
			low = append(low, fmt.Sprintf("%s %.1f%%", ty, 100*cov))
		}
		// The estimate's relative sd is at most ~1/√8 per trace; the mean
		// over ≥ 200 traces is within 3 standard errors of 1.
		if mean < 0.94 || mean > 1.06 {
			t.Errorf("%s: mean estimate/truth %.3f, want ≈ 1", ty, mean)
		}
	}
	t.Logf("all types: coverage %.3f over %d intervals", float64(all)/float64(allN), allN)
	if len(low) > 0 {
		t.Errorf("95%% intervals covered the truth in less than 94%% of %d traces: %v", traces, low)
	}
}

const p102400 = 1.0 / 102400

// checkApproach2 asserts that a row carries exactly the trace's sample
// count and offset sum, and that its lower bound is Approach 2's,
// Q(α/2; s, p) + u, the lower bound of `heapest ci --samples s
// --offset-bytes u --rate 102400`.
func checkApproach2(t *testing.T, ty string, r report.Row, s, u float64) {
	t.Helper()
	if r.Stats.Samples != s || r.Stats.Offset != u || !r.Stats.HasOffset || r.Stats.Rate != 102400 {
		t.Fatalf("%s: row stats %+v, want %v samples, offset %v, rate 102400", ty, r.Stats, s, u)
	}
	// The row's interval is Approach 2 with the design's compensation for
	// the bytes after the trace's last sample: what
	// heapest ci --samples s --offset-bytes u --rate 102400 --open-end prints.
	want := ci.OffsetWindowInterval(0, s, p102400, u, 0.05, false, false, true)
	if r.Flat.Lo != want.Lo || r.Flat.Hi != want.Hi || r.Flat.Method != want.Method {
		t.Fatalf("%s: interval %+v, want Approach 2 [%v, %v] (%s)", ty, r.Flat, want.Lo, want.Hi, want.Method)
	}
}
