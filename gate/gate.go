package gate

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/compare"
	"github.com/heapest/heapest/internal/units"
	"github.com/heapest/heapest/report"
)

// Kind is what a gate checks.
type Kind string

// The kinds of gate.
const (
	KindBudget   Kind = "budget"
	KindBaseline Kind = "baseline"
)

// Verdict is a gate's outcome.
type Verdict string

// The verdicts. Inconclusive gates pass, with a warning saying what
// would decide them; NoInterval gates rest on data with no honest
// interval and are not tested: they pass too, and are counted apart
// (Result.Untested) so that no output calls them tested.
const (
	Pass         Verdict = "pass"
	Fail         Verdict = "fail"
	Inconclusive Verdict = "inconclusive"
	NoInterval   Verdict = "no-interval"
)

// Gate is one gate's outcome.
type Gate struct {
	// Name says what the gate is ("total<=2GiB", "baseline site_a",
	// "baseline total"); Key is the budget as written or the row's key
	// (empty for the baseline's total).
	Name  string
	Kind  Kind
	Key   string
	Stack []string
	// Total says the gate is on the whole profile (a total<= budget, the
	// baseline's total), not on one row: a row's key or name may well be
	// "total" too, a function's.
	Total bool
	// Limit is a budget's bytes or objects, or the baseline's ratio limit
	// 1 + threshold.
	Limit float64
	// Result is a budget's value with its interval, or a baseline row's
	// ratio NEW/BASE with its interval, at the confidence.
	Result ci.Result
	// Base, New and Diff are a baseline row's estimates and change, with
	// the change's interval.
	Base, New, Diff, DiffLo, DiffHi float64
	// P is the test's one-sided p-value, PAdjusted Holm's (or P without
	// correction); NaN for gates that are not tests.
	P, PAdjusted float64
	Verdict      Verdict
	// Hint says, for an inconclusive gate, what would decide it.
	Hint string
	// Unmatched says no sample fell in what a budget names: a pattern
	// that matches nothing (misspelled, say) passes on its bound alone.
	Unmatched bool
	// Processes is, for a budget, how many processes its Result is the
	// mean of (Budget.Processes; 0 or 1: one's value).
	Processes int
	// row is the index of a baseline row's comparison among the rows
	// (-1: none, or its interval is in), whose ratio interval is computed
	// only for a gate shown (intervalOf).
	row int
}

// Options are how gates are decided.
type Options struct {
	Confidence float64
	Method     ci.Method
	// Holm corrects for the number of tests; without it each is at the
	// one-sided level (1 − Confidence)/2 alone.
	Holm bool
	// Threshold is the relative increase a baseline row may have (0.1:
	// 10%), MinChange the absolute one (0: none).
	Threshold, MinChange float64
	// Inputs are the profiles merged on the new side (0: unknown, as for
	// rows an engine merged), Rate the sampling
	// period they share (0: none or mixed), Format the input format they
	// share ("" when mixed): what an inconclusive gate's hint suggests, in
	// the producer's own setting where heapest knows it.
	Inputs int
	Rate   float64
	Format string
	// Correlated is the most inputs of either side whose samples may be
	// correlated (report.Report.Correlated; 0 or 1: none): more dumps
	// help only from processes that do not sample as these do.
	Correlated int
}

// Budget is a rule with the statistics of the cells it names.
type Budget struct {
	Rule  Rule
	Stats ci.Stats
	// Processes is how many processes Stats sums (0 or 1: one). A budget
	// bounds one process's value, so with several it bounds their mean;
	// more profiles then make the mean surer, as an inconclusive gate's
	// hint says, instead of raising the sum.
	Processes int
}

// Result is every gate's outcome.
type Result struct {
	Options Options
	// Gates are the budgets, then the baseline's total and every baseline
	// row that failed or is inconclusive.
	Gates []Gate
	// Rows sums up the baseline's rows (nil without a baseline). It is
	// not a gate: the rows that failed are gates of their own.
	Rows *RowsSummary
	// Tests counts the tests Holm corrects for; Failed, Inconclusive and
	// Untested the gates with the verdicts fail, inconclusive and
	// no-interval.
	Tests, Failed, Inconclusive, Untested int
}

// RowsSummary is how many of the baseline's rows were tested and how
// many of them failed (grew significantly by more than the threshold and
// the minimum change).
type RowsSummary struct {
	Tested, Failed int
}

// Passed reports whether no gate failed.
func (r *Result) Passed() bool { return r.Failed == 0 }

// Evaluate decides the budgets and, when rows is not nil, the baseline
// comparison of rows (compare.Join) and of the total. Each row is made
// when tested, and again when its gate is shown.
func Evaluate(budgets []Budget, rows compare.Rows, total *compare.Row, opt Options) (*Result, error) {
	res := &Result{Options: opt}
	alpha := 1 - opt.Confidence
	var tests []*Gate
	for _, b := range budgets {
		g, err := budgetGate(b, opt)
		if err != nil {
			return nil, err
		}
		res.Gates = append(res.Gates, g)
	}
	var rowGates []Gate
	if rows != nil {
		// Rows' sides often have statistics another row has had (one or
		// two samples of a few sizes): their intervals are remembered.
		memo := ci.NewMemo(opt.Method, 1-alpha)
		rowGates = make([]Gate, 0, rows.Len()+1) // the total's first
		for i := -1; i < rows.Len(); i++ {
			row := *total
			if i >= 0 {
				row = rows.Row(i)
			}
			g, err := baselineGate(&row, i, opt, alpha, memo)
			if err != nil {
				g.named()
				return nil, fmt.Errorf("%s: %w", g.Name, err)
			}
			rowGates = append(rowGates, g)
		}
	}
	for i := range res.Gates {
		if !math.IsNaN(res.Gates[i].P) {
			tests = append(tests, &res.Gates[i])
		}
	}
	for i := range rowGates {
		if !math.IsNaN(rowGates[i].P) {
			tests = append(tests, &rowGates[i])
		}
	}
	res.Tests = len(tests)
	adjust(tests, opt.Holm)
	for i := range res.Gates {
		decideBudget(&res.Gates[i], opt, alpha)
	}
	if rows != nil {
		shown, summary := decideBaseline(rowGates, rows, opt, alpha)
		res.Gates, res.Rows = append(res.Gates, shown...), summary
	}
	for _, g := range res.Gates {
		switch g.Verdict {
		case Fail:
			res.Failed++
		case Inconclusive:
			res.Inconclusive++
		case NoInterval:
			res.Untested++
		}
	}
	return res, nil
}

// adjust sets each test's adjusted p-value.
func adjust(tests []*Gate, holm bool) {
	ps := make([]float64, len(tests))
	for i, g := range tests {
		ps[i] = g.P
	}
	if holm {
		ps = ci.Holm(ps)
	}
	for i, g := range tests {
		g.PAdjusted = ps[i]
	}
}

// budgetGate computes a budget's interval and p-value: on the sum of the
// new side's processes, tested against the limit times their number, and
// given per process (the mean, its interval), as the limit is.
func budgetGate(b Budget, opt Options) (Gate, error) {
	g := Gate{Name: b.Rule.Text, Kind: KindBudget, Key: b.Rule.Text, Total: b.Rule.Total, Limit: b.Rule.Limit, P: math.NaN(), PAdjusted: math.NaN(),
		Processes: b.Processes}
	n := float64(max(b.Processes, 1))
	if b.Stats.NoInterval {
		g.Verdict = NoInterval
		g.Result = ci.Result{Estimate: b.Stats.Estimate / n, Method: ci.MethodNone, Notes: []string{ci.NoteNoInterval}}
		return g, nil
	}
	var err error
	if g.Result, err = ci.Interval(b.Stats, opt.Method, opt.Confidence); err != nil {
		return g, fmt.Errorf("budget %s: %w", b.Rule.Text, err)
	}
	if b.Stats.N == 0 {
		g.Result.Method = "-"
	}
	if g.P, err = ci.AbovePValue(b.Stats, opt.Method, b.Rule.Limit*n); err != nil {
		return g, fmt.Errorf("budget %s: %w", b.Rule.Text, err)
	}
	g.Result.Estimate, g.Result.Lo, g.Result.Hi = g.Result.Estimate/n, g.Result.Lo/n, g.Result.Hi/n
	return g, nil
}

// decideBudget gives a budget its verdict: fail when the test rejects
// after the correction; inconclusive when the interval reaches above the
// limit but the test does not reject; pass otherwise.
func decideBudget(g *Gate, opt Options, alpha float64) {
	if g.Verdict == NoInterval {
		return
	}
	r := g.Result
	// No sample in what the budget names: its bytes are bounded above
	// only (report.NoSample), or nothing is there (no period to bound
	// them with, an exact profile).
	none := r.Method == "-" || r.Estimate == 0 && r.Samples == 0
	g.Unmatched = none
	switch {
	case g.PAdjusted <= alpha/2:
		g.Verdict = Fail
	case r.Hi > g.Limit:
		g.Verdict = Inconclusive
		g.Hint = budgetHint(g, opt, alpha)
		if none {
			g.Hint = nothingMatched + "; " + g.Hint
		}
	default:
		g.Verdict = Pass
		if none {
			g.Hint = nothingMatched
		}
	}
}

// Warning is what standard error says of the gate ("" for nothing): an
// inconclusive gate's hint; a gate that passes untested, and which side
// of its limit its estimate is on (one far above passes all the same);
// a budget whose pattern matched nothing, which a misspelling would pass
// forever, with a footnote only.
func (g *Gate) Warning() string {
	unmatched := g.Unmatched && !g.Total
	switch {
	case unmatched && g.Verdict == Inconclusive:
		// A misspelled pattern is likelier than too few samples.
		return fmt.Sprintf("gate %s: nothing matched: check its pattern; if it is right, %s", g.Name, strings.TrimPrefix(g.Hint, nothingMatched+"; "))
	case g.Verdict == Inconclusive:
		return fmt.Sprintf("gate %s: %s", g.Name, g.Hint)
	case g.Verdict == NoInterval:
		w := fmt.Sprintf("gate %s passes untested: %s", g.Name, ci.NoteNoInterval)
		switch {
		case math.IsNaN(g.Result.Estimate):
			return w
		case g.Result.Estimate > g.Limit:
			return w + "; its estimate is above the limit"
		}
		return w + "; its estimate is within the limit"
	case unmatched:
		return fmt.Sprintf("gate %s: %s, so it passes with no sample to test; check its pattern", g.Name, nothingMatched)
	}
	return ""
}

// nothingMatched starts the hint of a budget no sample fell in.
const nothingMatched = "nothing matched"

// budgetHint says how many more samples would decide a budget whose
// interval straddles its limit: an interval's half width shrinks as the
// square root of the samples, so k times the samples bring the side
// that reaches across the limit back to it. When the interval alone
// clears the limit but the correction does not, k comes from the
// p-values instead.
func budgetHint(g *Gate, opt Options, alpha float64) string {
	r, l := g.Result, g.Limit
	var k float64
	switch {
	case r.Lo > l:
		k = holmFactor(g, alpha)
	case r.Samples == 0 && r.Estimate == 0:
		// No sample: the bound R·ln(2/α) on bytes no sample hit falls as
		// the samples' period does, not as a square root.
		k = r.Hi / l
	case r.Estimate > l:
		k = sq((r.Estimate - r.Lo) / (r.Estimate - l))
	case r.Estimate < l:
		k = sq((r.Hi - r.Estimate) / (l - r.Estimate))
	default:
		return "inconclusive: the estimate equals the budget; no number of samples decides it"
	}
	return "inconclusive: more samples needed, " + moreSamples(k, opt, false)
}

// holmFactor is how many times the samples would bring a test's p-value,
// which clears the level alone but not after the correction, to the
// corrected level.
func holmFactor(g *Gate, alpha float64) float64 {
	return ci.SampleFactor(g.P, alpha/2*g.P/g.PAdjusted)
}

func sq(x float64) float64 { return x * x }

// ratioFactor is how many times the samples would bring the lower end of
// a ratio's interval up to its limit: on the log scale, where the
// interval's half width shrinks as the square root of the samples.
func ratioFactor(g *Gate) float64 {
	r := g.Result
	if !(r.Lo > 0) {
		return math.Inf(1)
	}
	return sq(math.Log(r.Estimate/r.Lo) / math.Log(r.Estimate/g.Limit))
}

// moreSamples says k times the samples in words: more dumps, or a
// shorter sampling period.
func moreSamples(k float64, opt Options, perSide bool) string {
	if k > 1e6 || math.IsNaN(k) {
		return "far more than this run has"
	}
	k = math.Max(k, 1)
	var s string
	if opt.Inputs > 0 {
		more := max(int(math.Ceil(float64(opt.Inputs)*(k-1))), 1)
		what := "profile"
		if opt.Format == "jemalloc" {
			what = "dump"
		}
		s = fmt.Sprintf("about %d more %s%s", more, what, plural(more))
		if opt.Correlated > 1 {
			// The intervals allow for the largest group of correlated
			// inputs; dumps that join it make it larger, not surer.
			s += fmt.Sprintf(", of processes not forked from the parent these %d share (forked siblings sample alike)", opt.Correlated)
		}
	} else {
		// Rows an engine merged: how many profiles they hold is unknown.
		s = fmt.Sprintf("about %.3g times the samples", k)
	}
	if perSide {
		s += " on each side"
	}
	if opt.Rate > 0 {
		r := opt.Rate / k
		s += fmt.Sprintf(" or a sampling period of %s", units.Format(r, true))
		switch opt.Format {
		case "jemalloc":
			s += fmt.Sprintf(" (lg_prof_sample %d)", int(math.Floor(math.Log2(r))))
		case "pprof-go":
			s += fmt.Sprintf(" (runtime.MemProfileRate = %d)", int(math.Floor(r)))
		case "heapprofile":
			s += fmt.Sprintf(" (node --heap-prof-interval=%d)", int(math.Floor(r)))
		case "pprof-v8":
			s += fmt.Sprintf(" (the V8 heap profiler's sampling interval, intervalBytes = %d)", int(math.Floor(r)))
		}
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// baselineGate computes a baseline row's ratio, difference and p-value
// of "grew by no more than the threshold (and the minimum change)": the
// larger of the two tests' p-values, which rejects only when both do
// (an intersection–union test, valid at the level of each). i is the
// row's index among the rows, -1 for the totals' (compare.Total), which
// has no key.
func baselineGate(row *compare.Row, i int, opt Options, alpha float64, memo *ci.Memo) (Gate, error) {
	total := i < 0
	row.Estimates()
	g := Gate{Kind: KindBaseline, Key: row.Key, Stack: row.Stack, Total: total,
		Limit: 1 + opt.Threshold, Base: row.Base.Estimate, New: row.New.Estimate, Diff: row.Diff,
		P: math.NaN(), PAdjusted: math.NaN(), row: -1}
	if total {
		g.Name = "baseline total"
	}
	g.Result = ci.Result{Estimate: row.Ratio, Samples: row.New.Samples, Method: "F"}
	inc, _, err := ci.RatioPValues(row.Base, row.New, g.Limit)
	if err == ci.ErrNoComparison {
		g.Verdict, g.Result.Method, g.Result.Notes = NoInterval, ci.MethodNone, []string{ci.NoteNoInterval}
		return g, nil
	}
	if err != nil {
		return g, err
	}
	// The ratio's interval (F quantiles, each a bisection) is wanted for
	// the gates shown only: the total, and the rows that fail or are
	// inconclusive. Computed for every row, it was half of comparing two
	// dumps of 24,000 functions. (It fails only where the p-value did.)
	if total {
		g.intervalOf(*row, alpha)
	} else {
		g.row = i
	}
	if g.DiffLo, g.DiffHi, err = memo.DiffInterval(row.Base, row.New, alpha); err != nil {
		return g, err
	}
	g.P = inc
	if opt.MinChange > 0 && inc <= alpha/2 {
		// Only worth the bisection where the ratio test alone rejects at
		// the uncorrected level: elsewhere max(inc, ·) is inc already
		// above every level the correction can use.
		pd, err := ci.DiffPValue(row.Base, row.New, opt.Method, opt.MinChange)
		if err != nil {
			return g, err
		}
		g.P = math.Max(inc, pd)
	}
	return g, nil
}

// intervalOf fills a baseline row's ratio interval from its row.
func (g *Gate) intervalOf(row compare.Row, alpha float64) {
	// Its statistics passed RatioPValues, which checks what RatioInterval
	// does: it cannot fail here.
	g.Result.Lo, g.Result.Hi, _ = ci.RatioInterval(row.Base, row.New, alpha)
	g.row = -1
}

// decideBaseline gives each baseline row its verdict and returns the
// gates to show, the total and every failed or inconclusive row (by
// p-value), and a summary of all rows. A row fails when its test rejects
// after the correction, and is inconclusive when it rejects only alone.
func decideBaseline(rows []Gate, src compare.Rows, opt Options, alpha float64) ([]Gate, *RowsSummary) {
	var shown []Gate
	failed, tested := 0, 0
	for i := range rows {
		g := &rows[i]
		switch {
		case math.IsNaN(g.P):
			continue
		case g.PAdjusted <= alpha/2:
			g.Verdict = Fail
		case g.P <= alpha/2:
			g.Verdict = Inconclusive
			g.Hint = "inconclusive: significant alone, not after correcting for every test; more samples needed, " +
				moreSamples(holmFactor(g, alpha), opt, true)
		case i == 0 && g.Result.Estimate > g.Limit:
			// The total is one gate, as a budget is: grown beyond the
			// threshold by its estimate but not by its interval, it is
			// undecided, and says what would decide it. (Rows are many:
			// half of those that did not change would be flagged so.)
			g.Verdict = Inconclusive
			g.Hint = "inconclusive: grew beyond the threshold by its estimate, not by its interval; more samples needed, " +
				moreSamples(ratioFactor(g), opt, true)
		default:
			g.Verdict = Pass
		}
		tested++
		if i > 0 && g.Verdict == Fail {
			failed++
		}
	}
	total := rows[0]
	if !math.IsNaN(rows[0].P) {
		tested-- // the total is not one of the rows
	}
	if total.Verdict == "" {
		total.Verdict = Pass
	}
	shown = append(shown, total)
	var flagged []Gate
	for _, g := range rows[1:] {
		if g.Verdict == Fail || g.Verdict == Inconclusive {
			if g.row >= 0 {
				g.intervalOf(src.Row(g.row), alpha)
			}
			g.named()
			flagged = append(flagged, g)
		}
	}
	// By p-value, then by key: the rows come in no particular order.
	// Their keys are made (named) for these gates only.
	sort.Slice(flagged, func(i, j int) bool {
		if flagged[i].P != flagged[j].P {
			return flagged[i].P < flagged[j].P
		}
		return flagged[i].Key < flagged[j].Key
	})
	shown = append(shown, flagged...)
	return shown, &RowsSummary{Tested: max(tested, 0), Failed: failed}
}

// named gives a baseline row's gate its name, and its key when its row
// came without one (a --by stack row, report.Options.KeylessStacks): made
// for the gates shown only, as a dump's stack key and name are kilobytes
// each. People read a stack leaf first, as report's table shows it; the
// key stays root first, as CSV and JSON have it.
func (g *Gate) named() {
	if g.Name != "" {
		return
	}
	g.Key = aggregate.KeyOf(g.Key, g.Stack)
	g.Name = "baseline " + g.Key
	if len(g.Stack) > 0 {
		g.Name = "baseline " + report.StackText(g.Stack)
	}
}
