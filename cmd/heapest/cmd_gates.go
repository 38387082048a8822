package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/compare"
	"github.com/heapest/heapest/gate"
	"github.com/heapest/heapest/internal/units"
	"github.com/heapest/heapest/render"
	"github.com/heapest/heapest/report"
	"github.com/heapest/heapest/unbias"
)

// GateOptions are the flags of heapest ci's gates.
type GateOptions struct {
	Budgets     []string
	BudgetsFile string
	Baseline    []string
	Threshold   string
	MinChange   string
	Correction  correction
	// JUnit and Markdown are files that get those renderings too, so
	// that one run serves the CI system, the pull request and the log.
	JUnit, Markdown string
}

// sideFile is a file --junit or --markdown names, in its format.
type sideFile struct {
	path   string
	format render.Format
}

// sideFiles are the files --junit and --markdown name ("" when not given).
func (o *GateOptions) sideFiles() []sideFile {
	return []sideFile{{o.JUnit, render.JUnit}, {o.Markdown, render.Markdown}}
}

// problem is why f cannot be written, checked before anything is read:
// found missing only after the report was printed, a bad path failed a
// run whose output looked whole.
func (f sideFile) problem() error {
	if f.path == "-" {
		return fmt.Errorf("--%s -: standard output carries the --format output; give a file", f.format)
	}
	if dir := filepath.Dir(f.path); f.path != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return fmt.Errorf("--%s %s: no directory %s to write it in", f.format, f.path, dir)
		}
	}
	return nil
}

// correction is --correction's value.
type correction string

func (c correction) String() string { return string(c) }

var correctionChoices = []correction{"holm", "none"}

// gateFlags are the flags that only gates take.
var gateFlags = []string{"budget", "budgets", "baseline", "threshold", "min-change", "correction", "junit", "markdown"}

func (o *GateOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArrayVar(&o.Budgets, "budget", nil, "fail when the value `KEY=REGEX<=SIZE` (or total<=SIZE) names is above SIZE (repeatable; see above)")
	f.StringVar(&o.BudgetsFile, "budgets", "", "read budgets from `FILE`, one rule a line")
	f.StringArrayVar(&o.Baseline, "baseline", nil, "compare with the profiles `BASE` (file, directory or glob; repeatable, merged)")
	f.StringVar(&o.Threshold, "threshold", "10%", "with --baseline: the increase a row may have, as a `PERCENT`")
	f.StringVar(&o.MinChange, "min-change", "", "with --baseline: fail a row only when it also grew by more than `SIZE` (a count, such as 2k, for object values)")
	f.StringVar(&o.JUnit, "junit", "", "also write the gates as JUnit XML to `FILE` (or, on exit status 2, the error)")
	f.StringVar(&o.Markdown, "markdown", "", "also write the gates as markdown to `FILE` (or, on exit status 2, the error)")
	o.Correction = "holm"
	enumVar(cmd, &o.Correction, "correction", correctionChoices, false, "multiple-test correction over the gates and rows")
}

// hasGates reports whether any gate was asked for.
func (o *GateOptions) hasGates() bool {
	return len(o.Budgets) > 0 || o.BudgetsFile != "" || len(o.Baseline) > 0
}

// gateSetup is what the gate flags say, checked.
type gateSetup struct {
	rules     []gate.Rule
	threshold float64
	// minChangeText is --min-change as given (minChangeFor reads it).
	minChangeText string
}

// setup parses and checks the gate flags.
func (o *GateOptions) setup(cmd *cobra.Command) (gateSetup, error) {
	var s gateSetup
	for _, b := range o.Budgets {
		r, err := gate.ParseRule(b)
		if err != nil {
			return s, err
		}
		s.rules = append(s.rules, r)
	}
	if o.BudgetsFile != "" {
		f, err := os.Open(o.BudgetsFile)
		if err != nil {
			return s, fmt.Errorf("--budgets: %v", err)
		}
		rules, err := gate.ParseRules(f, o.BudgetsFile)
		f.Close()
		if err != nil {
			return s, err
		}
		if len(rules) == 0 {
			return s, fmt.Errorf("--budgets %s: no rule in the file", o.BudgetsFile)
		}
		s.rules = append(s.rules, rules...)
	}
	var err error
	if s.threshold, err = units.ParsePercent(o.Threshold); err != nil {
		return s, fmt.Errorf("--threshold %v", err)
	}
	if o.MinChange != "" {
		// A size, or for object values a count: which one is known once
		// the inputs say their value (minChangeFor).
		_, _, errSize := units.ParseSize(o.MinChange)
		if _, _, errCount := units.ParseCount(o.MinChange); errSize != nil && errCount != nil {
			return s, fmt.Errorf("--min-change: %v", errSize)
		}
		s.minChangeText = o.MinChange
	}
	for _, f := range o.sideFiles() {
		if err := f.problem(); err != nil {
			return s, err
		}
	}
	seen := map[string]bool{}
	for _, r := range s.rules {
		// Twice the same test would count twice in Holm's correction.
		if seen[r.Text] {
			return s, fmt.Errorf("budget %q given twice", r.Text)
		}
		seen[r.Text] = true
	}
	if len(o.Baseline) == 0 {
		for _, name := range []string{"threshold", "min-change"} {
			if cmd.Flags().Changed(name) {
				return s, fmt.Errorf("--%s applies to --baseline", name)
			}
		}
	}
	return s, nil
}

// minChangeFor is --min-change for value v: bytes for a space value, a
// whole count of objects for an object value (a size there would be read
// as that many objects, and no row would ever grow by so many).
func (s gateSetup) minChangeFor(v unbias.Value) (float64, error) {
	t := s.minChangeText
	if t == "" {
		return 0, nil
	}
	if v.IsSpace() {
		n, _, err := units.ParseSize(t)
		if err != nil {
			return 0, fmt.Errorf("--min-change: %v (%s is in bytes)", err, v)
		}
		return n, nil
	}
	n, _, err := units.ParseCount(t)
	switch {
	case err != nil:
		return 0, fmt.Errorf("--min-change %s is a size in bytes, and %s counts objects: give a count, such as 2000 or 2k", t, v)
	case n != math.Trunc(n):
		return 0, fmt.Errorf("--min-change %s objects: a count is a whole number", t)
	}
	return n, nil
}

// keysFor are the record attributes the rules need kept.
func (s gateSetup) keysFor() (keys aggregate.Keys, sources bool) {
	for _, r := range s.rules {
		keys.Thread = keys.Thread || !r.Total && r.By == aggregate.ByThread
		sources = sources || !r.Total && r.By == aggregate.BySource
	}
	return keys, sources
}

// allThread reports whether every budget is by thread (none a total).
func (s gateSetup) allThread() bool {
	for _, r := range s.rules {
		if r.Total || r.By != aggregate.ByThread {
			return false
		}
	}
	return true
}

// runGates is heapest ci FILE...: the report of the inputs, or with
// gates, their verdicts. A run with gates that fails before it has
// verdicts writes its error into the --junit and --markdown files: a CI
// system reads them whatever the exit status, and the last run's
// verdicts must not stand for this one's.
func runGates(cmd *cobra.Command, opts CIOptions, args []string) error {
	err := judgeGates(cmd, opts, args)
	if err != nil && !errors.Is(err, errGateFailed) && opts.hasGates() {
		opts.writeGatesError(cmd.ErrOrStderr(), err)
	}
	return err
}

// writeGatesError writes err into the --junit and --markdown files that
// can be written (a file with a problem is what err may be about); a
// file it cannot write is warned of.
func (opts CIOptions) writeGatesError(stderr io.Writer, err error) {
	for _, side := range opts.sideFiles() {
		if side.path == "" || side.problem() != nil {
			continue
		}
		if werr := writeOutput(side.path, nil, func(w io.Writer) error {
			return render.WriteGatesError(w, side.format, err)
		}); werr != nil {
			fmt.Fprintf(stderr, "heapest: warning: --%s: the error could not be written there either: %v\n", side.format, werr)
		}
	}
}

// judgeGates is runGates but for the files an error writes.
func judgeGates(cmd *cobra.Command, opts CIOptions, args []string) error {
	for _, name := range calculatorFlags {
		if cmd.Flags().Changed(name) {
			return usageError{fmt.Errorf("--%s is the calculator's; with input files, ci gates them", name)}
		}
	}
	ropt, err := opts.reportOptions(cmd)
	if err != nil {
		return usageError{err}
	}
	if opts.hasGates() && opts.FleetSize != 0 {
		// The rows would be a fleet's, the gates the processes' read:
		// a budget bounds one process, the mean of those read.
		return usageError{fmt.Errorf("--fleet-size scales a report's rows to a fleet; gates bound one process (budgets, the mean of the processes read) and compare processes (--baseline): give one or the other")}
	}
	if !opts.hasGates() {
		for _, name := range []string{"junit", "markdown"} {
			if cmd.Flags().Changed(name) {
				return usageError{fmt.Errorf("--%s writes gates: give --budget, --budgets or --baseline", name)}
			}
		}
		for _, name := range []string{"threshold", "min-change", "correction"} {
			if cmd.Flags().Changed(name) {
				return usageError{fmt.Errorf("--%s applies to gates, and none was given: give --budget, --budgets or --baseline", name)}
			}
		}
		if opts.Format == render.JUnit || opts.Format == render.Markdown {
			return usageError{fmt.Errorf("--format %s writes gates: give --budget, --budgets or --baseline", opts.Format)}
		}
		return runReport(cmd, opts.ReportOptions, args)
	}
	if opts.Format == render.CSV {
		return usageError{fmt.Errorf("--format csv: gates are written as table, json, junit or markdown")}
	}
	setup, err := opts.GateOptions.setup(cmd)
	if err != nil {
		return usageError{err}
	}
	if err := stdinOnce(opts.Baseline, args); err != nil {
		return usageError{err}
	}
	// The baseline pairs every row, of both sides; budgets need the
	// report only for its header, and no row of it. The gates compute
	// their intervals from the rows' statistics: the rows need none.
	ropt.Top, ropt.EstimatesOnly = 1, true
	if len(opts.Baseline) > 0 {
		// A --by stack row's key is made for the gates shown only.
		ropt.Top, ropt.KeylessStacks = 0, true
	}
	newR, budgets, inputs, err := opts.loadNew(cmd, ropt, setup, args)
	if err != nil {
		return err
	}
	g := &render.Gates{New: newR}
	var rows compare.Rows
	var total *compare.Row
	if len(opts.Baseline) > 0 {
		if g.Base, err = opts.loadBaseline(cmd, ropt, newR); err != nil {
			return err
		}
		rows = compare.Join(g.Base, newR)
		t := compare.Total(g.Base, newR)
		total = &t
		opts.warnOn(cmd.ErrOrStderr(), newR, disjointWarning(compare.OverlapOf(rows)))
		opts.warnOn(cmd.ErrOrStderr(), newR, sameWarning(g.Base, newR, "the baseline gates"))
		opts.warnOn(cmd.ErrOrStderr(), newR, unequalWarning(g.Base, newR, false))
	}
	opts.warnNotices(cmd.ErrOrStderr(), newR, g.Base)
	minChange, err := setup.minChangeFor(newR.Value)
	if err != nil {
		return usageError{err}
	}
	res, err := gate.Evaluate(budgets, rows, total, gate.Options{
		Confidence: ropt.Confidence, Method: ropt.Method, Holm: opts.Correction == "holm",
		Threshold: setup.threshold, MinChange: minChange,
		Inputs: inputs, Rate: sharedRate(newR), Format: sharedFormat(newR), Correlated: correlated(g.Base, newR)})
	if err != nil {
		return err
	}
	g.Result = res
	for _, x := range res.Gates {
		if w := x.Warning(); w != "" {
			fmt.Fprintf(opts.chatter(cmd.ErrOrStderr()), "heapest: warning: %s\n", w)
		}
	}
	if err := writeOutput(opts.Output, cmd.OutOrStdout(), func(w io.Writer) error {
		return render.WriteGates(w, g, opts.Format)
	}); err != nil {
		return err
	}
	for _, side := range opts.sideFiles() {
		if side.path == "" {
			continue
		}
		if err := writeOutput(side.path, nil, func(w io.Writer) error {
			return render.WriteGates(w, g, side.format)
		}); err != nil {
			return fmt.Errorf("--%s: %w", side.format, err)
		}
	}
	if !res.Passed() {
		return errGateFailed
	}
	return nil
}

// withSingle marks options for a single input.
func withSingle(ropt report.Options, paths []string) report.Options {
	ropt.SingleInput = len(paths) == 1
	return ropt
}

// loadNew reads the inputs under test (profiles, or with --from-parquet
// an engine's rows) into their report and the budgets' statistics; inputs
// is how many processes they hold, for an inconclusive gate's hint.
func (opts CIOptions) loadNew(cmd *cobra.Command, ropt report.Options, setup gateSetup, args []string) (r *report.Report, budgets []gate.Budget, inputs int, err error) {
	if opts.FromParquet != "" {
		if len(opts.Baseline) > 0 {
			return nil, nil, 0, usageError{fmt.Errorf("--baseline compares profiles: with --from-parquet, ci gates budgets")}
		}
		ropt.Top = 0 // every group, for the budgets
		ropt.ExtraKeys, ropt.SourceTotals = setup.keysFor()
		b, r, err := opts.readParquet(cmd, ropt, args)
		switch {
		case err != nil:
			return nil, nil, 0, err
		case b != nil: // sample rows: a profile's records
			if r, err = b.Report(); err != nil {
				return nil, nil, 0, err
			}
			budgets, err = selectBudgets(b, b, setup.rules, r, 1)
			return r, budgets, 0, err
		}
		budgets, err = groupedBudgets(setup.rules, r)
		return r, budgets, 0, err // how many profiles the rows hold is unknown
	}
	keys, sources := setup.keysFor()
	ropt.SourceTotals = sources
	paths, err := opts.inputs(cmd, args, false)
	if err != nil {
		return nil, nil, 0, err
	}
	b, threads, rb, err := opts.gateReadings(cmd, ropt, keys, setup.allThread(), paths)
	if err != nil {
		return nil, nil, 0, err
	}
	if r, err = rb.Report(); err != nil {
		return nil, nil, 0, err
	}
	// A budget bounds the mean of the processes read, and more of them
	// decide an inconclusive one: the hint counts processes, which a
	// merged input holds several of. (--fleet-size, which scales the rows
	// to a fleet, is refused with gates.)
	budgets, err = selectBudgets(b, threads, setup.rules, r, r.Processes())
	return r, budgets, r.Processes(), err
}

// gateReadings reads the inputs for the gates. Cells kept apart by thread
// are a jemalloc dump's per-thread lines, not its t* lines: the rows by
// thread (--by thread) and the thread budgets (keys) are read from a
// reading that keeps them (threads), the total and the other budgets from
// one that does not (plain), so that each is report's; rows is the
// reading of the report's rows. One reading serves when one is enough,
// and for inputs read once only (standard input, URLs).
func (opts CIOptions) gateReadings(cmd *cobra.Command, ropt report.Options, keys aggregate.Keys, allThread bool, paths []string) (plain, threads, rows *report.Builder, err error) {
	byThread := !ropt.DefaultBy && aggregate.KeysFor(ropt.By).Thread
	read := func(o report.Options, stderr io.Writer) (*report.Builder, error) { return opts.read(o, paths, stderr) }
	threadOpt := ropt
	threadOpt.ExtraKeys = keys
	if onceOnly(paths) || byThread && allThread || !byThread && !keys.Thread {
		plain, err = read(threadOpt, cmd.ErrOrStderr())
		return plain, plain, plain, err
	}
	plainOpt := ropt
	if byThread {
		plainOpt.By = aggregate.ByFunc
	}
	if plain, err = read(plainOpt, cmd.ErrOrStderr()); err != nil {
		return nil, nil, nil, err
	}
	if threads, err = read(threadOpt, io.Discard); err != nil { // its warnings were said
		return nil, nil, nil, err
	}
	rows = plain
	if byThread {
		rows = threads
	}
	return plain, threads, rows, nil
}

// groupedBudgets are the budgets' statistics from rows grouped elsewhere
// (--from-parquet): the total, or the sum of the groups whose key matches
// when the rows are grouped by the rule's key. A func rule counts each
// sample once, however many matching frames it has: grouped rows can say
// that only for one function (its cum row), so a func rule must match
// exactly one.
func groupedBudgets(rules []gate.Rule, r *report.Report) ([]gate.Budget, error) {
	var out []gate.Budget
	for _, rule := range rules {
		if err := rule.Fits(r.Value.IsSpace(), r.Value.String()); err != nil {
			return nil, usageError{err}
		}
		if rule.Total {
			out = append(out, gate.Budget{Rule: rule, Stats: r.Total.Stats})
			continue
		}
		if rule.By != r.By {
			return nil, usageError{fmt.Errorf("budget %q: the rows are grouped by %s; a %s budget needs rows written with --by %s", rule.Text, r.By, rule.By, rule.By)}
		}
		var st ci.Stats
		var matched []string
		for i := range r.Rows {
			row := &r.Rows[i]
			if !rule.Pattern.MatchString(row.Key) {
				continue
			}
			matched = append(matched, row.Key)
			if rule.By == aggregate.ByFunc && row.CumStats != nil {
				st = *row.CumStats
			} else if rule.By != aggregate.ByFunc {
				st.Merge(&row.Stats)
			}
		}
		if rule.By == aggregate.ByFunc && len(matched) > 1 {
			return nil, usageError{fmt.Errorf("budget %q matches %d functions (%s, ...) in grouped rows, which cannot tell how many samples they share; name one function, or gate the profiles themselves", rule.Text, len(matched), matched[0])}
		}
		out = append(out, gate.Budget{Rule: rule, Stats: st})
	}
	return out, nil
}

// selectBudgets computes the statistics each rule names, summed over n
// processes; a source rule's over the inputs it names, which it bounds
// together.
func selectBudgets(b, threads *report.Builder, rules []gate.Rule, r *report.Report, n int) ([]gate.Budget, error) {
	var out []gate.Budget
	for _, rule := range rules {
		if err := rule.Fits(r.Value.IsSpace(), r.Value.String()); err != nil {
			return nil, usageError{err}
		}
		by, re := rule.By, rule.Pattern
		if rule.Total {
			re = nil
		}
		from := b
		if by == aggregate.ByThread && !rule.Total {
			from = threads
		}
		st, err := from.Select(by, re)
		if err != nil {
			return nil, err
		}
		if st.N == 0 {
			// Nothing sampled is no proof of nothing there: the
			// selection's bytes are bounded as an empty total's are.
			st = report.NoSample(r.Value, r.Sources)
		}
		procs := n
		if by == aggregate.BySource && !rule.Total {
			procs = 1
		}
		out = append(out, gate.Budget{Rule: rule, Stats: st, Processes: procs})
	}
	return out, nil
}

// loadBaseline reads the baseline's inputs into a report of the value
// and grouping the new inputs' report settled on.
func (o CIOptions) loadBaseline(cmd *cobra.Command, ropt report.Options, newR *report.Report) (*report.Report, error) {
	paths, err := o.inputs(cmd, o.Baseline, false)
	if err != nil {
		return nil, fmt.Errorf("--baseline: %w", err)
	}
	return loadSide(cmd, o.inputOptions, ropt, newR, paths)
}

// loadSide reads paths into a report with the value and grouping of
// like (settled from the other side's inputs).
func loadSide(cmd *cobra.Command, in inputOptions, ropt report.Options, like *report.Report, paths []string) (*report.Report, error) {
	ropt.Value, ropt.DefaultValue = like.Value, false
	ropt.By, ropt.DefaultBy = like.By, false
	b, err := in.read(ropt, paths, cmd.ErrOrStderr())
	if err != nil {
		return nil, err
	}
	return b.Report()
}

// correlated is the most inputs of one side whose samples may be
// correlated (report.Report.Correlated); base may be nil.
func correlated(base, new *report.Report) int {
	n := new.Correlated
	if base != nil {
		n = max(n, base.Correlated)
	}
	return n
}

// sharedRate is the sampling period every input of r shares, or 0.
func sharedRate(r *report.Report) float64 {
	if r.IsMerge() {
		if r.Merged.RateMin == r.Merged.RateMax {
			return r.Merged.RateMin
		}
		return 0
	}
	if len(r.Sources) == 1 {
		return r.Sources[0].Rate
	}
	return 0
}

// sharedFormat is the format every input of r has, "" when they differ.
func sharedFormat(r *report.Report) string {
	if r.IsMerge() {
		for f := range r.Merged.Formats {
			if len(r.Merged.Formats) == 1 {
				return f
			}
		}
		return ""
	}
	f := ""
	for i, s := range r.Sources {
		if i > 0 && s.Format != f {
			return ""
		}
		f = s.Format
	}
	return f
}
