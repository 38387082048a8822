package main

import (
	"fmt"
	"io"
	"regexp"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/render"
	"github.com/heapest/heapest/report"
	"github.com/heapest/heapest/unbias"
)

// ReportOptions are the flags of heapest report.
type ReportOptions struct {
	inputOptions
	Confidence float64
	Method     ci.Method
	// Value and By default to what suits the input when not given.
	Value     unbias.Value
	By        aggregate.By
	Top       int
	Focus     string
	Ignore    string
	Hide      string
	Format    render.Format
	Output    string
	From, To  time.Duration
	FleetSize int
	// FromParquet reads grouped rows (an engine's) instead of inputs.
	FromParquet string
	// ParquetRows says what --format parquet writes a row of.
	ParquetRows parquetRows
	// Wide keeps every column of a table on a narrow terminal.
	Wide bool
	// LogScale draws the value axis of --format svg and html on a log
	// scale.
	LogScale bool
}

func newReportCommand() *cobra.Command {
	opts := ReportOptions{Format: render.Table}
	cmd := &cobra.Command{
		Use:   "report [flags] FILE|URL...",
		Short: "Estimates with confidence intervals, per function, stack, thread, size or type",
		Long: `Report unbiases every sample of a heap profile, then aggregates, and prints
each estimate with a confidence interval, the raw samples it rests on, and the
interval method used.

Inputs are detected by content (jemalloc heap_v2 dumps, gperftools/pprof legacy
heap text, pprof protos, nettrace traces, JFR recordings, memray transform csv
output, V8 .heapprofile JSON, DHAT profiles) and may be gzip-compressed; "-" reads standard input. JFR estimates are
sums of the events' weights and their intervals model-based (docs/jfr.md).

An input may be an http or https URL, such as a Go program's
/debug/pprof/heap (net/http/pprof): it is fetched once, its query (?gc=1,
?seconds=30) passed through untouched, within --timeout (default 60s plus
the seconds= asked for) and --max-decompressed; the report names the URL.
Redirects are followed to http and https only.

--format svg draws the rows as an interval chart; --format html writes one
self-contained page (no network) with the table, the chart and a flame graph
whose frames are shaded by how wide their intervals are (docs/web.md).

Several inputs (files, directories, quoted globs, URLs) are merged, as "heapest
merge" does: each sample is unbiased with its own input's rate, then the
statistics are summed, and the header says what was merged (docs/merge.md).
Successive dumps of one process are refused (--latest-per-process,
--allow-duplicates).
` + exitStatusNoGate,
		Example: `  # Top functions by live bytes in a jemalloc dump
  heapest report jeprof.1234.0.m0.heap

  # Whole stacks, all of them, as JSON
  heapest report --by stack --top 0 --format json jeprof.1234.0.m0.heap

  # Live objects of one subsystem, at 90% confidence
  heapest report --value inuse_objects --focus '^rocksdb::' --confidence 0.9 dump.heap

  # Allocations by type in a .NET trace, minute 1 to 2
  heapest report --from 1m --to 2m app.nettrace

  # Allocating stacks of a Java program (JFR, e.g. settings=profile)
  heapest report --by stack recording.jfr

  # A running Go program's heap, as go tool pprof reads it
  heapest report http://127.0.0.1:6060/debug/pprof/heap

  # A dump taken on another machine
  heapest report --binary ./server --symbol-path ./debug dump.heap

  # The dumps of a fleet, merged; one row per process
  heapest report --by source dumps/

  # Pictures: an interval chart, and one page with the table, the chart and
  # a flame graph that shows how sure each frame is (docs/web.md)
  heapest report --format svg --log-scale -o chart.svg dump.heap
  heapest report --format html -o report.html dump.heap`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(cmd, opts, args)
		},
	}
	opts.addFlags(cmd)
	return cmd
}

// addFlags adds the flags of report (and merge).
func (o *ReportOptions) addFlags(cmd *cobra.Command) {
	o.addFlagsFormats(cmd, reportFormatChoices)
}

// addFlagsFormats adds report's flags with the given --format choices.
func (o *ReportOptions) addFlagsFormats(cmd *cobra.Command, formats []render.Format) {
	o.inputOptions.addFlags(cmd)
	o.addSelectFlags(cmd)
	f := cmd.Flags()
	enumVar(cmd, &o.Format, "format", formats, false, "output format")
	f.BoolVar(&o.Wide, "wide", false, "on a terminal, keep every table column (by default the least needed go until the table fits)")
	f.StringVarP(&o.Output, "output", "o", "", "write the report to `FILE` (atomically) instead of standard output")
	o.ParquetRows = "groups"
	if hasFormat(formats, render.HTML) { // report's pictures; a diff's axis is of ratios, always logarithmic
		f.BoolVar(&o.LogScale, "log-scale", false, "with --format svg or html: draw the value axis on a log scale")
	}
	if hasFormat(formats, render.Parquet) {
		enumVar(cmd, &o.ParquetRows, "parquet-rows", parquetRowsChoices, false, "with --format parquet: a row per group of --by, or per distinct stack (samples: regroup them by anything)")
	}
	f.StringVar(&o.FromParquet, "from-parquet", "", "read statistics an engine grouped from heapest's Parquet rows in `FILE` (- for standard input) instead of profiles")
	f.IntVar(&o.FleetSize, "fleet-size", 0, "the inputs are processes sampled at random from a fleet of `N`: scale to it, with two-stage intervals")
}

func runReport(cmd *cobra.Command, opts ReportOptions, args []string) error {
	ropt, err := opts.reportOptions(cmd)
	if err != nil {
		return usageError{err}
	}
	if opts.FromParquet != "" {
		b, r, err := opts.readParquet(cmd, ropt, args)
		switch {
		case err != nil:
			return err
		case b != nil: // sample rows: regrouped as a profile's records
			return opts.render(cmd, b)
		}
		return writeOutput(opts.Output, cmd.OutOrStdout(), func(w io.Writer) error {
			return render.Write(w, r, opts.Format)
		})
	}
	if len(args) == 0 {
		return usageError{fmt.Errorf("no input: give profiles (or --from-parquet FILE)")}
	}
	paths, err := opts.inputs(cmd, args, false)
	if err != nil {
		return err
	}
	if err := checkFleet(ropt, paths); err != nil {
		return err
	}
	_, err = opts.write(cmd, ropt, paths)
	return err
}

// write builds the report of paths (merged when there are several) and
// writes it in the chosen format; joined is how many inputs it holds
// (those --keep-going skipped, or --latest-per-process left out, are
// not).
func (opts ReportOptions) write(cmd *cobra.Command, ropt report.Options, paths []string) (joined int, err error) {
	if opts.Format == render.Parquet {
		return len(paths), opts.writeParquet(cmd, ropt, paths)
	}
	ropt.SingleInput = len(paths) == 1
	// A --by stack row's key (its frames root first, kilobytes on a dump)
	// is made as the row is written (CSV, JSON; the table, SVG and HTML
	// show the stack leaf first), not held for every row; the fleet's sums
	// are keyed by its hash, which the stack gives as well.
	ropt.KeylessStacks = true
	b := report.NewBuilder(ropt)
	if err := opts.load(b, paths, cmd.ErrOrStderr()); err != nil {
		return 0, err
	}
	return len(b.Sources()), opts.render(cmd, b)
}

// render writes the report of what b read in the chosen format.
func (opts ReportOptions) render(cmd *cobra.Command, b *report.Builder) error {
	if opts.Format == render.Pprof {
		// Every value the input has, per stack and with no --top cut (a
		// pprof profile must be regroupable), the chosen value first so
		// that it is the profile's default sample type.
		st, err := b.Stacks()
		if err != nil {
			return err
		}
		for _, w := range st.Notices {
			fmt.Fprintf(opts.chatter(cmd.ErrOrStderr()), "heapest: warning: %s\n", w)
		}
		return writeOutput(opts.Output, cmd.OutOrStdout(), func(w io.Writer) error {
			return render.WritePprof(w, st)
		})
	}
	r, err := b.Report()
	if err != nil {
		return err
	}
	opts.warnNotices(cmd.ErrOrStderr(), r)
	if opts.Format == render.CSV && r.Omitted > 0 {
		// The table says so under its rows, JSON as "omitted"; CSV has
		// no place for it, and a spreadsheet would look whole.
		fmt.Fprintf(opts.chatter(cmd.ErrOrStderr()), "heapest: note: the CSV holds the %d largest rows of %d; --top 0 writes them all\n", len(r.Rows), len(r.Rows)+r.Omitted)
	}
	var flame *report.Flame
	if opts.Format == render.HTML {
		if flame, err = b.Flame(flameMinShare); err != nil {
			return err
		}
	}
	return writeOutput(opts.Output, cmd.OutOrStdout(), func(w io.Writer) error {
		switch opts.Format {
		case render.Table:
			return render.WriteTable(w, r, tableOptions(w, opts.Wide))
		case render.SVG:
			return render.WriteSVG(w, r, render.ChartOptions{Log: opts.LogScale})
		case render.HTML:
			return render.WriteHTML(w, r, flame, render.HTMLOptions{Chart: render.ChartOptions{Log: opts.LogScale}})
		}
		return render.Write(w, r, opts.Format)
	})
}

// flameMinShare is the narrowest flame graph frame drawn, as a share of
// the total: a thousandth is about a pixel of a page's width.
const flameMinShare = 0.001

// checkFleet checks --fleet-size against the inputs.
func checkFleet(ropt report.Options, paths []string) error {
	if ropt.FleetSize > 0 && (len(paths) < 2 || len(paths) > ropt.FleetSize) {
		return usageError{fmt.Errorf("--fleet-size %d with %s: want at least 2 sampled processes, and no more than the fleet", ropt.FleetSize, render.Plural(len(paths), "input"))}
	}
	return nil
}

// sampleIndexAlias makes --sample_index (and --sample-index) --value: pprof
// users type -sample_index=alloc_space.
func sampleIndexAlias(f *pflag.FlagSet) {
	f.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "sample_index" || name == "sample-index" {
			name = "value"
		}
		return pflag.NormalizedName(name)
	})
}

// addSelectFlags adds the flags that say what a report shows (heapest
// web's too): the value, the rows, the filters, the intervals.
func (o *ReportOptions) addSelectFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	confidenceVar(cmd, &o.Confidence)
	enumVar(cmd, &o.Method, "method", methodChoices, false, "interval method; auto picks per row the best one valid for it")
	enumVar(cmd, &o.Value, "value", valueChoices, true, "value to estimate (default: the one the input names, as pprof's default_sample_type; else inuse_space where the input has it, else alloc_space; alloc_space for JFR); --sample_index is an alias")
	sampleIndexAlias(f)
	enumVar(cmd, &o.By, "by", byChoices, true, "what a row is; func has flat and cum (default func; type for .NET traces). A stack reads leaf first in tables (leaf < caller); its CSV and JSON key is folded root first (root;...;leaf), and JSON's stack lists it leaf first")
	f.IntVar(&o.Top, "top", 20, "show the `N` largest rows (0: all)")
	f.StringVar(&o.Focus, "focus", "", "keep only samples with a frame (or type) matching `REGEX`")
	f.StringVar(&o.Ignore, "ignore", "", "drop samples with a frame (or type) matching `REGEX`")
	f.StringVar(&o.Hide, "hide", "", "drop the frames of functions matching `REGEX` from every stack (pprof's -hide): their samples count at the frames left, the first of them the leaf (e.g. an allocator wrapper's: --hide '^zmalloc')")
	f.DurationVar(&o.From, "from", 0, "traces and JFR recordings: only events at or after this `time` from the start (e.g. 1m30s)")
	f.DurationVar(&o.To, "to", 0, "traces and JFR recordings: only events before this `time` from the start")
}

// reportOptions checks what the flag types could not (ranges that
// involve several flags, regular expressions) and builds the report's
// options.
func (o ReportOptions) reportOptions(cmd *cobra.Command) (report.Options, error) {
	r := report.Options{Confidence: o.Confidence, Method: o.Method, Value: o.Value, By: o.By,
		DefaultValue: !cmd.Flags().Changed("value"), DefaultBy: !cmd.Flags().Changed("by")}
	r.AllValues = o.Format == render.Pprof
	r.Flame = o.Format == render.HTML
	if o.LogScale && o.Format != render.SVG && o.Format != render.HTML {
		return r, fmt.Errorf("--log-scale applies to --format svg and html")
	}
	if err := o.unusedByFormat(cmd); err != nil {
		return r, err
	}
	if o.Format == render.HTML && o.FromParquet != "" {
		return r, fmt.Errorf("--format html draws a flame graph of the profiles' stacks: give profiles, not --from-parquet")
	}
	if o.From < 0 || o.To < 0 || o.To > 0 && o.To <= o.From {
		return r, fmt.Errorf("--from %v --to %v: want 0 ≤ from < to", o.From, o.To)
	}
	r.From, r.To, r.Window = int64(o.From), int64(o.To), o.From > 0 || o.To > 0
	if o.Top < 0 {
		return r, fmt.Errorf("--top %d: must be 0 (all rows) or more", o.Top)
	}
	r.Top = o.Top
	var err error
	if r.Focus, err = compile("--focus", o.Focus); err != nil {
		return r, err
	}
	if r.Ignore, err = compile("--ignore", o.Ignore); err != nil {
		return r, err
	}
	if r.Hide, err = compile("--hide", o.Hide); err != nil {
		return r, err
	}
	if o.FleetSize != 0 {
		switch {
		case o.FleetSize < 2:
			return r, fmt.Errorf("--fleet-size %d: want the number of processes in the fleet, at least 2", o.FleetSize)
		case o.Format == render.Pprof:
			return r, fmt.Errorf("--fleet-size applies to the report formats (table, csv, json): a merged profile keeps the statistics of the processes it read")
		case o.Format == render.HTML:
			return r, fmt.Errorf("--fleet-size applies to the report formats (table, csv, json, svg): html's flame graph is of the processes read, not of the fleet")
		case o.By == aggregate.BySource:
			return r, fmt.Errorf("--fleet-size scales a fleet's rows; --by source shows the sampled processes themselves")
		}
		r.FleetSize = o.FleetSize
	}
	if cmd.Flags().Changed("parquet-rows") && o.Format != render.Parquet {
		return r, fmt.Errorf("--parquet-rows applies to --format parquet")
	}
	r.Lines = o.Lines
	// Binary output on a terminal is never what anyone wants; into a
	// file or a pipe it is, as pprof's -proto writes it.
	if o.Output == "" && isTerminal(cmd.OutOrStdout()) {
		switch o.Format {
		case render.Parquet:
			return r, fmt.Errorf("--format parquet writes a binary file, and standard output is a terminal: give -o FILE, or redirect it")
		case render.Pprof:
			return r, fmt.Errorf("--format pprof writes a binary profile, and standard output is a terminal: give -o FILE, or redirect it")
		}
	}
	return r, nil
}

// unusedByFormat refuses the flags that the chosen output has no use
// for: a flag that changes nothing must not look as if it had.
func (o ReportOptions) unusedByFormat(cmd *cobra.Command) error {
	changed := cmd.Flags().Changed
	// --top 0 (every row) and --by stack say what pprof output does.
	cut := changed("top") && o.Top != 0
	switch {
	case o.Format == render.Pprof && cut:
		return fmt.Errorf("--top cuts the rows of a report, and --format pprof writes every stack: pprof's -nodecount cuts what it shows")
	case o.Format == render.Pprof && changed("by") && o.By != aggregate.ByStack:
		return fmt.Errorf("--by groups the rows of a report, and --format pprof writes stacks: pprof groups them itself (-top, -traces, -tagfocus)")
	case (o.Format == render.Pprof || o.Format == render.Parquet) && (changed("method") || changed("confidence")):
		name := "method"
		if changed("confidence") {
			name = "confidence"
		}
		return fmt.Errorf("--%s draws intervals from the statistics, and --format %s writes the statistics themselves: give it where the file is read (heapest report --%s ...)", name, o.Format, name)
	case o.Format == render.Parquet && cut:
		return fmt.Errorf("--top cuts the rows of a report, and --format parquet writes every row, for an engine to cut")
	case o.Format != render.Table && changed("wide"):
		return fmt.Errorf("--wide keeps the columns of a table on a narrow terminal: it applies to --format table")
	}
	return nil
}

func compile(flag, expr string) (*regexp.Regexp, error) {
	if expr == "" {
		return nil, nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		// C++ and Java names are full of characters a regular expression
		// reads as its own: operator new[], vector<int>::at(unsigned long).
		return nil, fmt.Errorf("%s: %v (a regular expression: match a name as written with %s '%s')", flag, err, flag, regexp.QuoteMeta(expr))
	}
	return re, nil
}
