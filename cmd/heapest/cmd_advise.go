package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/heapest/heapest/advise"
	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/internal/units"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/render"
	"github.com/heapest/heapest/report"
	"github.com/heapest/heapest/unbias"
)

// AdviseOptions are the flags of heapest advise.
type AdviseOptions struct {
	inputOptions
	Confidence float64
	Method     ci.Method
	// Value and By default to what suits the input when not given.
	Value     unbias.Value
	By        aggregate.By
	Top       int
	Rows      string
	Hide      string
	Precision float64
	Format    render.Format
	Output    string
}

// adviseFormatChoices are advise's --format values.
var adviseFormatChoices = []render.Format{render.Table, render.JSON}

func newAdviseCommand() *cobra.Command {
	opts := AdviseOptions{Format: render.Table, Top: 20, Precision: 0.1}
	cmd := &cobra.Command{
		Use:   "advise [flags] FILE|URL...",
		Short: "The sampling period that gets the rows that matter to a target precision",
		Long: `Advise says which sampling period R gets the rows that matter to a target
precision: the largest R (the fewest samples, the least overhead) at which each
row's confidence interval, as report computes it, is within ±--precision of
its estimate in 95% of dumps. The rows are report's top --top of --by (or all
rows whose key matches --rows), each split by allocation size: an allocation
of Z bytes is sampled with probability 1 − exp(−Z/R), so R sets how many
samples each part of a row gets. A row's parts whose sizes a dump hides
(jemalloc lines that mix sizes) are taken as small allocations, the case that
needs the most samples.

R is printed as each allocator's setting: jemalloc's lg_prof_sample (R rounded
down to a power of two), Go's runtime.MemProfileRate, gperftools'
TCMALLOC_SAMPLE_PARAMETER and tcmalloc's SetProfileSamplingRate. .NET's
AllocationSampled period is fixed (100 KiB): advise says how many traces of
processes like this one reach the target instead. The overhead is the samples
taken per GiB allocated, about 2^30/R, against the current period's. Advise
also says how many dumps at the current period, merged (independent
processes of one kind), reach the target without changing R.

Several inputs are merged as report merges them and advised as their average
dump. The math and its simulation check are in docs/statistics.md.

The advice takes the dump's estimates for the truth. A row seen in few samples
is, in the dumps that show it, more often over- than underestimated, and its
advised R then gets it short of the target: advise again on a dump taken at
the advised period (its rows have the samples to plan with), or ask for a
smaller --precision than the one needed.
` + exitStatusNoGate,
		Example: `  # Which lg_prof_sample gets the top 20 functions to ±10%?
  heapest advise jeprof.1234.0.m0.heap

  # Two stacks of interest to ±5% at 99% confidence
  heapest advise --by stack --rows 'parse_request|cache_fill' --precision 5% --confidence 0.99 dump.heap

  # A running Go program, as JSON
  heapest advise --format json http://127.0.0.1:6060/debug/pprof/heap`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAdvise(cmd, opts, args)
		},
	}
	opts.addFlags(cmd)
	return cmd
}

func (o *AdviseOptions) addFlags(cmd *cobra.Command) {
	o.inputOptions.addFlags(cmd)
	f := cmd.Flags()
	confidenceVar(cmd, &o.Confidence)
	enumVar(cmd, &o.Method, "method", methodChoices, false, "interval method the precision is judged with; auto picks per row, as report does")
	enumVar(cmd, &o.Value, "value", valueChoices, true, "value to estimate (default: as report chooses); --sample_index is an alias")
	sampleIndexAlias(f)
	enumVar(cmd, &o.By, "by", byChoices[:len(byChoices)-1], true, "what a row is (default func, flat; type for .NET traces). A stack reads leaf first in the table (leaf < caller); its JSON key is folded root first (root;...;leaf), and JSON's stack lists it leaf first")
	f.IntVar(&o.Top, "top", o.Top, "advise for report's `N` largest rows (0: all)")
	f.StringVar(&o.Rows, "rows", "", "advise for every row whose key matches `REGEX` instead of the top ones")
	f.StringVar(&o.Hide, "hide", "", "drop the frames of functions matching `REGEX` from every stack, as report --hide does, before the rows are made")
	f.Var((*percentFlag)(&o.Precision), "precision", "the interval's half width wanted, as a `PERCENT` of the estimate (the report's ± column)")
	enumVar(cmd, &o.Format, "format", adviseFormatChoices, false, "output format")
	f.StringVarP(&o.Output, "output", "o", "", "write the advice to `FILE` (atomically) instead of standard output")
}

// percentFlag is a percentage above 0 ("10%"), held as a fraction.
type percentFlag float64

func (p *percentFlag) String() string {
	return strconv.FormatFloat(100*float64(*p), 'g', -1, 64) + "%"
}

func (p *percentFlag) Set(s string) error {
	x, err := units.ParsePercent(s)
	if err != nil || !(x > 0) {
		return fmt.Errorf("want a percentage above 0, such as 10%%")
	}
	*p = percentFlag(x)
	return nil
}

func (p *percentFlag) Type() string { return "PERCENT" }

func runAdvise(cmd *cobra.Command, opts AdviseOptions, args []string) error {
	ropt, rowsRE, err := opts.reportOptions(cmd)
	if err != nil {
		return usageError{err}
	}
	if len(args) == 0 {
		return usageError{fmt.Errorf("no input: give profiles (files or URLs)")}
	}
	paths, err := opts.inputs(cmd, args, false)
	if err != nil {
		return err
	}
	ropt.SingleInput = len(paths) == 1
	b := report.NewBuilder(ropt)
	if err := opts.load(b, paths, cmd.ErrOrStderr()); err != nil {
		return err
	}
	v, err := opts.advise(b, rowsRE, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	return writeOutput(opts.Output, cmd.OutOrStdout(), func(w io.Writer) error {
		if opts.Format == render.JSON {
			return v.writeJSON(w)
		}
		return v.writeTable(w)
	})
}

// reportOptions checks the flags and builds the options of the report
// whose rows are advised.
func (o AdviseOptions) reportOptions(cmd *cobra.Command) (report.Options, *regexp.Regexp, error) {
	r := report.Options{Confidence: o.Confidence, Method: o.Method, Value: o.Value, By: o.By,
		DefaultValue: !cmd.Flags().Changed("value"), DefaultBy: !cmd.Flags().Changed("by"),
		Top: o.Top, ExtraKeys: aggregate.Keys{Size: true}}
	if o.Top < 0 {
		return r, nil, fmt.Errorf("--top %d: must be 0 (all rows) or more", o.Top)
	}
	var err error
	if r.Hide, err = compile("--hide", o.Hide); err != nil {
		return r, nil, err
	}
	re, err := compile("--rows", o.Rows)
	if re != nil {
		r.Top = 0 // every row is a candidate
	}
	return r, re, err
}

// adviceView is what advise prints: the report's rows of interest with
// their advice.
type adviceView struct {
	report *report.Report
	shown  []report.Row
	plan   *advise.Plan
	// hidden marks the rows with parts whose sizes the dump hides.
	hidden []bool
}

// advise picks the rows of interest and advises them, saying the
// report's notices on stderr first.
func (o AdviseOptions) advise(b *report.Builder, rowsRE *regexp.Regexp, stderr io.Writer) (*adviceView, error) {
	r, err := b.Report()
	if err != nil {
		return nil, err
	}
	o.warnNotices(stderr, r)
	v := &adviceView{report: r, shown: pickRows(r.Rows, rowsRE)}
	if len(v.shown) == 0 && rowsRE == nil {
		return nil, fmt.Errorf("nothing to advise on: no row has an estimate of its own (the inputs hold no sample of %s)", r.Value)
	}
	if len(v.shown) == 0 {
		return nil, fmt.Errorf("--rows %q matches no row with an estimate of its own", o.Rows)
	}
	keys := make([]string, len(v.shown))
	for i, row := range v.shown {
		keys[i] = row.Key
	}
	if lost := unmatchedAlternatives(o.Rows, keys); len(lost) > 0 {
		o.warnOn(stderr, r, fmt.Sprintf("--rows: %s matches no row with an estimate of its own (the inputs hold no sample of it, or it only calls): no advice for it", strings.Join(lost, ", ")))
	}
	mix, err := b.SizeMix(keys)
	if err != nil {
		return nil, err
	}
	rows := make([]advise.Row, len(v.shown))
	v.hidden = make([]bool, len(keys))
	for i, k := range keys {
		rows[i] = advise.Row{Key: k}
		rows[i].Parts, rows[i].Skip = advise.PartsOf(mix[k], r.Value, len(r.Sources))
		_, v.hidden[i] = mix[k][0]
	}
	t := advise.Target{Precision: o.Precision, Confidence: o.Confidence, Method: o.Method, Value: r.Value}
	v.plan, err = advise.Advise(rows, commonRate(r.Sources), t)
	return v, err
}

// unmatchedAlternatives are the top-level alternatives of the regular
// expression expr ("a|b|c") that match none of keys, each quoted. A user
// who lists the rows to advise expects a line for each; one the inputs
// have no sample of would otherwise be left out without a word. An
// alternative that is no expression of its own is not judged.
func unmatchedAlternatives(expr string, keys []string) []string {
	alts := topAlternatives(expr)
	if len(alts) < 2 {
		return nil // one expression: matching nothing is an error
	}
	var lost []string
	for _, a := range alts {
		re, err := regexp.Compile(a)
		if err != nil {
			continue
		}
		if !slices.ContainsFunc(keys, re.MatchString) {
			lost = append(lost, strconv.Quote(a))
		}
	}
	return lost
}

// topAlternatives splits expr at the bars outside groups, classes and
// escapes. (regexp/syntax would factor "ab|ac" into "a[bc]".)
func topAlternatives(expr string) []string {
	var alts []string
	depth, class, start := 0, false, 0
	for i := 0; i < len(expr); i++ {
		switch c := expr[i]; {
		case c == '\\':
			i++
		case class:
			class = c != ']'
		case c == '[':
			class = true
			if i+1 < len(expr) && expr[i+1] == '^' {
				i++
			}
			if i+1 < len(expr) && expr[i+1] == ']' { // "[]a]", "[^]a]": a member
				i++
			}
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '|' && depth == 0:
			alts = append(alts, expr[start:i])
			start = i + 1
		}
	}
	return append(alts, expr[start:])
}

// pickRows are the rows with an estimate of their own (not functions
// that are only callers), those whose key matches re when it is given.
func pickRows(rows []report.Row, re *regexp.Regexp) []report.Row {
	var out []report.Row
	for _, row := range rows {
		if row.Flat.Estimate > 0 && (re == nil || re.MatchString(row.Key)) {
			out = append(out, row)
		}
	}
	return out
}

// commonRate is the sampling period all sources share (0: several, or
// none known).
func commonRate(sources []parse.Source) float64 {
	rate := 0.0
	for i, s := range sources {
		if i > 0 && s.Rate != rate {
			return 0
		}
		rate = s.Rate
	}
	return rate
}

// writeTable prints the advice for people.
func (v *adviceView) writeTable(w io.Writer) error {
	p, r := v.plan, v.report
	fmt.Fprintf(w, "Target: ±%s at %s confidence, %s by %s, in %s of dumps\n", pct(p.Target.Precision),
		pct(r.Confidence), r.Value, r.By, pct(p.Target.Assurance))
	fmt.Fprintf(w, "Input: %s\n", v.inputLine())
	render.WriteHidden(w, r)
	fmt.Fprintln(w)
	if err := v.writeRows(w); err != nil {
		return err
	}
	if p.Rate == 0 {
		_, err := fmt.Fprintln(w, "\nNo row can be advised (see the notes above).")
		return err
	}
	v.writeSettings(w)
	return nil
}

// inputLine names the inputs and their period.
func (v *adviceView) inputLine() string {
	src := v.report.Sources
	name := src[0].Path
	if len(src) > 1 {
		name = fmt.Sprintf("%d inputs merged, advised as their average dump", len(src))
	}
	if cur := v.plan.Current; cur > 0 {
		return fmt.Sprintf("%s (%s, sampling period %s)", name, src[0].Format, bytesText(cur))
	}
	for _, s := range src {
		if s.Rate > 1 {
			return name + " (sampling periods differ)"
		}
	}
	// Every allocation recorded (DHAT, memray), or a throttle (JFR).
	if len(src) == 1 {
		return fmt.Sprintf("%s (%s, no sampling period)", name, src[0].Format)
	}
	return name + " (no sampling period)"
}

// writeRows prints one line per row of interest, and why rows got no
// advice.
func (v *adviceView) writeRows(w io.Writer) error {
	bytes := v.report.Value.IsSpace()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	dumps := "DUMPS NOW"
	if cur := v.plan.Current; cur > 0 {
		dumps = "DUMPS AT " + bytesText(cur)
	}
	knob := knobColumnFor(v.report.Sources)
	fmt.Fprintf(tw, "ESTIMATE\t±\tSAMPLES\tPERIOD R\t%s\t%s\t  %s\n", knob.head, dumps, strings.ToUpper(v.report.By.String()))
	var notes []string
	skipped := map[string][]string{} // the rows of each reason for no advice, in order
	var reasons []string
	anyHidden := false
	for i, a := range v.plan.Rows {
		row := v.shown[i]
		est := units.Format(row.Flat.Estimate, bytes)
		pm := "-"
		if row.Flat.Method != ci.MethodNone {
			pm = fmt.Sprintf("%.1f%%", 100*(row.Flat.Hi-row.Flat.Lo)/2/row.Flat.Estimate)
		}
		if a.Skip != "" {
			if len(skipped[a.Skip]) == 0 {
				reasons = append(reasons, a.Skip)
			}
			skipped[a.Skip] = append(skipped[a.Skip], v.keyText(i))
			fmt.Fprintf(tw, "%s\t%s\t%s\t-\t-\t-\t  %s\n", est, pm, samplesText(row), v.keyText(i))
			continue
		}
		rate := bytesText(a.Rate)
		if v.hiddenSizes(i) {
			rate += "¹"
			anyHidden = true
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t  %s\n", est, pm, samplesText(row), rate,
			knob.value(advise.KnobsFor(a.Rate)), countText(a.Dumps), v.keyText(i))
	}
	for _, why := range reasons {
		// One note a reason: a JFR recording's twenty rows share theirs.
		if keys := skipped[why]; len(keys) == 1 {
			notes = append(notes, fmt.Sprintf("%s: no advice: %s", keys[0], why))
		} else {
			notes = append(notes, fmt.Sprintf("%d rows: no advice: %s", len(keys), why))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if anyHidden {
		notes = append([]string{"¹ the dump hides the sizes of some of the row's allocations (lines that mix sizes): they are taken as small ones, which need the most samples"}, notes...)
	}
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	return nil
}

// writeSettings prints the period every row needs as each allocator's
// setting, its overhead, and the dumps that would do instead.
func (v *adviceView) writeSettings(w io.Writer) {
	p := v.plan
	k := p.Knobs
	fmt.Fprintf(w, "\nFor every row above: R ≤ %s (set by %s)\n", bytesText(p.Rate), v.tightest())
	fmt.Fprintf(w, "  jemalloc  MALLOC_CONF=prof:true,lg_prof_sample:%d  (R = %s: the largest power of two at or below R, so the fewest samples that still reach the target; default 19)\n",
		k.JemallocLg, bytesText(k.JemallocRate()))
	fmt.Fprintf(w, "  Go        runtime.MemProfileRate = %d  (default 524288)\n", k.GoMemProfileRate)
	fmt.Fprintf(w, "  tcmalloc  TCMALLOC_SAMPLE_PARAMETER=%d (gperftools; unset, it does not sample); MallocExtension::SetProfileSamplingRate(%d) (tcmalloc; default 2 MiB)\n",
		k.TcmallocSample, k.TcmallocSample)
	fmt.Fprintf(w, "  Node.js   node --heap-prof-interval=%d (default 524288); heap.start(%d, depth) (pprof-nodejs, @datadog/pprof)\n", k.V8Interval, k.V8Interval)
	fmt.Fprintf(w, "  .NET      not tunable: AllocationSampled samples every 100 KiB on average; %s\n", dotnetText(p.DotnetDumps))
	fmt.Fprintf(w, "Overhead: about %s samples per GiB allocated in small objects (2^30/R)", units.Format(k.SamplesPerGiB, false))
	if p.Current > 0 {
		fmt.Fprintf(w, ", against %s at the current %s (×%.3g)", units.Format(p.CurrentKnobs.SamplesPerGiB, false),
			bytesText(p.Current), k.SamplesPerGiB/p.CurrentKnobs.SamplesPerGiB)
	}
	fmt.Fprintln(w)
	v.writeDumps(w)
}

// writeDumps says what merging dumps at the current period would do.
func (v *adviceView) writeDumps(w io.Writer) {
	p := v.plan
	switch {
	case p.Current == 0:
	case p.Dumps <= 1:
		fmt.Fprintf(w, "The current %s already reaches the target for every row; R up to %s would too, with fewer samples.\n",
			bytesText(p.Current), bytesText(p.Rate))
	default:
		fmt.Fprintf(w, "Or keep the current %s and merge %d dumps of independent processes of this kind (not workers forked from one parent, which sample alike, nor dumps of one process over time).\n",
			bytesText(p.Current), p.Dumps)
	}
}

// dotnetText says how many .NET traces reach the target.
func dotnetText(n int) string {
	if n <= 1 {
		return "one trace of a process like this one reaches the target"
	}
	return fmt.Sprintf("merge %d traces of processes like this one instead", n)
}

// tightest names the row that sets the period.
func (v *adviceView) tightest() string {
	for i, a := range v.plan.Rows {
		if a.Skip == "" && a.Rate == v.plan.Rate {
			return v.keyText(i)
		}
	}
	return "-"
}

// keyText is the i-th row's key for people: a stack leaf first, as
// report's table shows it (JSON keeps the key, root first, and the stack).
func (v *adviceView) keyText(i int) string {
	if row := v.shown[i]; len(row.Stack) > 0 {
		return report.StackText(row.Stack)
	}
	return v.plan.Rows[i].Key
}

func pct(x float64) string {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return "-"
	}
	return strconv.FormatFloat(100*x, 'g', 3, 64) + "%"
}

func bytesText(x float64) string { return strings.TrimSuffix(units.Format(x, true), "B") + "B" }

func countText(n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

func samplesText(row report.Row) string {
	return render.SamplesText(row.Flat.Samples, row.Stats.SamplesBound)
}

// adviceJSON is advise's JSON output; every number unrounded.
type adviceJSON struct {
	Precision   float64          `json:"precision"`
	Confidence  float64          `json:"confidence"`
	Assurance   float64          `json:"assurance"`
	Value       string           `json:"value"`
	By          string           `json:"by"`
	Sources     []sourceJSON     `json:"sources"`
	CurrentRate float64          `json:"current_rate"`
	Rows        []adviceRowJSON  `json:"rows"`
	Rate        float64          `json:"rate"`
	Settings    *settingsJSON    `json:"settings"`
	Current     *settingsJSON    `json:"current"`
	Dumps       int              `json:"dumps_at_current_rate"`
	Dotnet      adviceDotnetJSON `json:"dotnet"`
	Hide        string           `json:"hide,omitempty"`
	Warnings    []string         `json:"warnings,omitempty"`
}

type sourceJSON struct {
	Path   string  `json:"path"`
	Format string  `json:"format"`
	Rate   float64 `json:"rate"`
}

type adviceRowJSON struct {
	Key string `json:"key"`
	// Stack is --by stack's frames leaf first; Key has them root first.
	Stack    []string `json:"stack,omitempty"`
	Estimate float64  `json:"estimate"`
	// Lo and Hi are null where the row has no interval, as in report's
	// JSON; Method says which it has ("none" for no interval).
	Lo      *float64 `json:"lo"`
	Hi      *float64 `json:"hi"`
	Method  string   `json:"method"`
	Samples float64  `json:"samples"`
	// SamplesBound: Samples is an upper bound (report's ≤).
	SamplesBound bool `json:"samples_bound,omitempty"`
	// HiddenSizes: the dump hides the sizes of some of the row's
	// allocations (the table's ¹), taken as small ones.
	HiddenSizes bool    `json:"hidden_sizes,omitempty"`
	Rate        float64 `json:"rate,omitempty"`
	Lg          *int    `json:"jemalloc_lg_prof_sample,omitempty"`
	Dumps       int     `json:"dumps_at_current_rate,omitempty"`
	Skip        string  `json:"skip,omitempty"`
}

type settingsJSON struct {
	Rate             float64 `json:"rate"`
	JemallocLg       int     `json:"jemalloc_lg_prof_sample"`
	JemallocRate     float64 `json:"jemalloc_rate"`
	GoMemProfileRate int64   `json:"go_mem_profile_rate"`
	TcmallocSample   int64   `json:"tcmalloc_sample_parameter"`
	V8Interval       int64   `json:"v8_interval_bytes"`
	SamplesPerGiB    float64 `json:"samples_per_gib"`
}

type adviceDotnetJSON struct {
	Rate    float64 `json:"rate"`
	Tunable bool    `json:"tunable"`
	Dumps   int     `json:"dumps"`
}

func settings(k advise.Knobs) *settingsJSON {
	return &settingsJSON{Rate: k.Rate, JemallocLg: k.JemallocLg, JemallocRate: k.JemallocRate(),
		GoMemProfileRate: k.GoMemProfileRate, TcmallocSample: k.TcmallocSample, V8Interval: k.V8Interval, SamplesPerGiB: k.SamplesPerGiB}
}

// hiddenSizes reports whether row i's advice was given for a row whose
// dump hides the sizes of some allocations (the table's ¹): a note of
// advice given, not of a row skipped.
func (v *adviceView) hiddenSizes(i int) bool { return v.hidden[i] && v.plan.Rows[i].Skip == "" }

// writeJSON prints the advice for programs.
func (v *adviceView) writeJSON(w io.Writer) error {
	p, r := v.plan, v.report
	out := adviceJSON{Precision: p.Target.Precision, Confidence: r.Confidence, Assurance: p.Target.Assurance,
		Value: r.Value.String(), By: r.By.String(), CurrentRate: p.Current, Rate: p.Rate, Dumps: p.Dumps,
		Dotnet: adviceDotnetJSON{Rate: advise.DotnetRate, Dumps: p.DotnetDumps}, Hide: r.Hidden, Warnings: r.Warnings}
	for _, s := range r.Sources {
		out.Sources = append(out.Sources, sourceJSON{Path: s.Path, Format: s.Format, Rate: s.Rate})
	}
	for i, a := range p.Rows {
		row := v.shown[i]
		j := adviceRowJSON{Key: a.Key, Stack: row.Stack, Estimate: row.Flat.Estimate, Method: row.Flat.Method,
			Samples: row.Flat.Samples, SamplesBound: row.Stats.SamplesBound, HiddenSizes: v.hiddenSizes(i),
			Rate: a.Rate, Dumps: a.Dumps, Skip: a.Skip}
		if row.Flat.Method != "none" && row.Flat.Method != "-" {
			j.Lo, j.Hi = &row.Flat.Lo, &row.Flat.Hi
		}
		if a.Skip == "" {
			lg := advise.KnobsFor(a.Rate).JemallocLg
			j.Lg = &lg
		}
		out.Rows = append(out.Rows, j)
	}
	if p.Rate > 0 {
		out.Settings = settings(p.Knobs)
	}
	if p.Current > 0 {
		out.Current = settings(p.CurrentKnobs)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// knobColumn is the column of advise's table that gives each row's period
// as the input's own producer sets it.
type knobColumn struct {
	head  string
	value func(advise.Knobs) string
}

// knobColumnFor is the setting of the inputs' producer when they share
// one, else jemalloc's (the settings below the table give every one).
func knobColumnFor(sources []parse.Source) knobColumn {
	format := ""
	for i, s := range sources {
		if i > 0 && s.Format != format {
			format = ""
			break
		}
		format = s.Format
		if s.Writer == "jemalloc" {
			format = "jemalloc" // a heap_v2 text of jemalloc 3
		}
	}
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
	switch format {
	case "pprof-go":
		return knobColumn{"MEMPROFILERATE", func(k advise.Knobs) string { return itoa(k.GoMemProfileRate) }}
	case "pprof-tcmalloc", "gperftools":
		return knobColumn{"SAMPLE_PARAMETER", func(k advise.Knobs) string { return itoa(k.TcmallocSample) }}
	case "heapprofile", "pprof-v8":
		return knobColumn{"HEAP_PROF_INTERVAL", func(k advise.Knobs) string { return itoa(k.V8Interval) }}
	}
	return knobColumn{"LG_PROF_SAMPLE", func(k advise.Knobs) string { return strconv.Itoa(k.JemallocLg) }}
}
