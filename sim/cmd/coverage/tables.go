package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/sim"
)

func writeCSV(path string, results []sim.StudyResult) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write([]string{"scenario", "dump", "replicates", "scope", "method", "rows", "coverage", "truth_below_lo", "truth_above_hi",
		"mean_width_over_truth", "exact_rows", "mean_width_over_exact"})
	for _, r := range results {
		for _, sc := range []struct {
			scope   string
			tallies []sim.Tally
		}{{"rows+totals", r.Tallies}, {"totals", r.Totals}} {
			scope := sc.scope
			for _, t := range sc.tallies {
				w.Write([]string{r.Scenario, r.Encoding.String(), strconv.Itoa(r.Reps), scope, t.Method.String(), strconv.Itoa(t.Rows),
					fmt.Sprintf("%.5f", t.Coverage()), strconv.Itoa(t.Below), strconv.Itoa(t.Above),
					fmt.Sprintf("%.5f", t.MeanRelWidth()), strconv.Itoa(t.ExactRows), fmt.Sprintf("%.5f", t.MeanWidthVsExact())})
			}
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// cell is "coverage% · width" or "n/a".
func cell(t sim.Tally) string {
	if t.Rows == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%% · %.2f", 100*t.Coverage(), t.MeanRelWidth())
}

func coverageTable(results []sim.StudyResult, reps int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Coverage at nominal 95%% over %d replicates per row of the table, and the mean\n", reps)
	b.WriteString("interval width divided by the true value (after the dot). \"rows\" counts the\n")
	b.WriteString("(replicate, row) pairs scored: every row present in a dump plus each dump's total.\n")
	b.WriteString("auto's column names the methods it chose. exact and camp-paulson are scored only\n")
	b.WriteString("where they apply (one size and rate); n/a where they never do. \"auto misses\"\n")
	b.WriteString("splits auto's misses into truths below the interval and above it (each tail\n")
	b.WriteString("should stay near 2.5%).\n\n")
	b.WriteString("| scenario | dump | rows | auto | auto misses low / high | auto used | exact | camp-paulson | gamma | normal |\n")
	b.WriteString("|---|---|---:|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		t := r.Tallies
		fmt.Fprintf(&b, "| %s | %s | %d | **%s** | %s | %s | %s | %s | %s | %s |\n", r.Scenario, r.Encoding, t[0].Rows,
			cell(t[0]), tails(t[0]), used(r.AutoUsed), cell(t[1]), cell(t[2]), cell(t[3]), cell(t[4]))
	}
	worst, at := 1.0, ""
	for _, r := range results {
		if r.Tallies[0].Rows == 0 {
			continue // no interval claimed (n/a): nothing to cover
		}
		if c := r.Tallies[0].Coverage(); c < worst {
			worst, at = c, r.Scenario+", "+r.Encoding.String()
		}
	}
	fmt.Fprintf(&b, "\nLowest coverage of the default method (auto) over the scenarios where it gives intervals: **%.1f%%** (%s).\n", 100*worst, at)
	return b.String()
}

// tails is "low% / high%", the share of scored rows whose truth lay below
// the interval and above it.
func tails(t sim.Tally) string {
	if t.Rows == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f%% / %.2f%%", 100*float64(t.Below)/float64(t.Rows), 100*float64(t.Above)/float64(t.Rows))
}

// used lists auto's choices by share.
func used(m map[string]int) string {
	total := 0
	var keys []string
	for k, v := range m {
		total += v
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] })
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.0f%%", k, 100*float64(m[k])/float64(max(total, 1))))
	}
	return strings.Join(parts, ", ")
}

// totalsTable is the coverage of the dumps' totals alone: one per
// replicate, summing every row (and, for merges, every process).
func totalsTable(results []sim.StudyResult) string {
	var b strings.Builder
	b.WriteString("Coverage of the totals alone (one per replicate: the sum over every row, and over\n")
	b.WriteString("every process for merges), with the mean width over the truth.\n\n")
	b.WriteString("| scenario | dump | totals | auto | gamma | normal |\n|---|---|---:|---|---|---|\n")
	for _, r := range results {
		t := r.Totals
		fmt.Fprintf(&b, "| %s | %s | %d | **%s** | %s | %s |\n", r.Scenario, r.Encoding, t[0].Rows, cell(t[0]), cell(t[3]), cell(t[4]))
	}
	return b.String()
}

func widthTable(results []sim.StudyResult) string {
	var b strings.Builder
	b.WriteString("Mean interval width relative to `--method exact` (with its +1 window correction),\n")
	b.WriteString("on the rows where the exact interval applies (scenarios where it never applies are\n")
	b.WriteString("left out). auto's exact interval has no +1, so on rows of a few huge allocations\n")
	b.WriteString("(π ≈ 1) its width is close to 0 where `--method exact` adds a whole allocation.\n\n")
	b.WriteString("| scenario | dump | rows | auto | camp-paulson | gamma | normal |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		t := r.Tallies
		if t[0].ExactRows == 0 {
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %.3f | %.3f | %.3f | %.3f |\n", r.Scenario, r.Encoding, t[0].ExactRows,
			t[0].MeanWidthVsExact(), t[2].MeanWidthVsExact(), t[3].MeanWidthVsExact(), t[4].MeanWidthVsExact())
	}
	return b.String()
}

func scenarioList() string {
	var b strings.Builder
	b.WriteString("| scenario | workload (R = 512 KiB unless said) |\n|---|---|\n")
	for _, sc := range sim.Scenarios() {
		fmt.Fprintf(&b, "| %s | %s |\n", sc.Name, sc.Desc)
	}
	return b.String()
}

// campPaulsonTable measures the Camp–Paulson CDF error against the exact
// CDF on 4,000 points per case.
func campPaulsonTable() (string, error) {
	var b strings.Builder
	b.WriteString("| samples s | max \\|CP − exact\\| at p = 1/102400 | at p = 2⁻¹⁹ | at p = 0.01 |\n|---:|---:|---:|---:|\n")
	for _, s := range []float64{1, 2, 5, 10, 100, 1000, 10000} {
		fmt.Fprintf(&b, "| %.0f |", s)
		for _, p := range []float64{1.0 / 102400, 1.0 / (1 << 19), 0.01} {
			e, err := ci.CampPaulsonMaxError(s, p, 4000)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&b, " %.2g |", e)
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}
