package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/internal/units"
	"github.com/heapest/heapest/render"
	"github.com/heapest/heapest/unbias"
)

// CIOptions are the flags of heapest ci: report's, the gates', and the
// calculator's.
type CIOptions struct {
	ReportOptions
	GateOptions
	// The calculator's (--rate is inputOptions.Rate).
	Samples     float64
	Size        float64
	Sizes       []float64
	OffsetBytes float64
	OpenStart   bool
	OpenEnd     bool
	Sampler     samplerKind
}

// calculatorFlags are the flags that only the calculator takes.
var calculatorFlags = []string{"samples", "size", "sizes", "offset-bytes", "open-start", "open-end", "sampler"}

func newCICommand() *cobra.Command {
	opts := CIOptions{ReportOptions: ReportOptions{Format: render.Table}}
	cmd := &cobra.Command{
		Use:   "ci [flags] FILE... [--budget RULE]... [--baseline BASE]...",
		Short: "Memory gates for CI pipelines, and the interval calculator",
		Long: `With input files, ci gates them: it reads and merges them as report does and
fails (exit status 1) when a gate fails, but never on sampling noise alone.

  --budget 'KEY=REGEX<=SIZE'  the value of the samples REGEX names must stay
                              within SIZE: KEY func (samples with a frame
                              matching, each once, as --focus keeps them),
                              leaf, type, thread or source; 'total<=SIZE'
                              budgets everything. SIZE in bytes or with a
                              unit (512KiB, 50MiB, 2GiB, 10MB), or a count of
                              objects for object values (2000, 2k, 1.5M).
                              A budget is per process: over several
                              profiles it bounds their mean (a source
                              budget, the inputs it names together).
                              Repeatable.
  --budgets FILE              rules from a file, one a line (# comments).
  --baseline BASE             compare each row (of --by, default func) and
                              the total with BASE (files, directories or
                              globs, merged): a row fails when it grew by
                              more than --threshold (default 10%) and, with
                              --min-change, by more than that many bytes.

A budget fails only when its interval lies wholly above the limit; when the
interval straddles it, the gate passes with a warning that says how many more
samples (dumps, or a shorter sampling period) would decide it. A baseline row
fails only when the interval on its ratio NEW/BASE lies wholly above
1 + threshold. Each gate is a one-sided test at (1 − confidence)/2; with many
rows and gates, Holm's correction (--correction holm, the default) keeps the
chance that any of them fails falsely at that level. A gate on samples that
give no honest interval (.NET's GCAllocationTick events, say) is not tested:
it passes as no-interval, with a warning. See docs/ci.md and
docs/statistics.md. Without gates, ci prints what report prints.

Without input files, ci is a calculator: it prints the estimate and the
confidence interval for S samples taken with a per-byte sampling period of R
bytes.

  --size Z          the samples are allocations of Z bytes each, each one
                    sampled with probability π = 1 − exp(−Z/R), or with
                    --sampler geometric 1 − (1−1/R)^Z; the interval is the
                    exact one for N allocations (bytes = N·Z).
  --offset-bytes U  the samples are .NET AllocationSampled events and U is the
                    sum of (ObjectSize − SampledByteOffset) over them: the
                    interval is the .NET design's Approach 2 with p = 1/R.
  --sizes Z1,...    the size of each sample (with or without --offset-bytes):
                    the estimate is the Horvitz–Thompson sum of Z/π(Z).
  neither           the sampled allocations are much smaller than R (one byte).

--sampler says how the allocator placed its sample points: exponential for
Go, tcmalloc, gperftools, heapprofd and V8, whose gaps between them are
exponential; geometric for jemalloc and .NET, which sample each byte with
probability 1/R. The default is geometric with --offset-bytes or --sizes
(.NET's events), exponential otherwise. The two agree to within about 1/(2R)
of the estimate: it matters at small periods (1% at lg_prof_sample:4 for 32-byte
allocations), and with the allocator's sampler the calculator gives what a
report row of its dump prints.

The estimate is Horvitz–Thompson's s·Z/π with --size (and for one-byte
allocations), what a report row of that one size prints. A trace row prints
the Horvitz–Thompson sum of Z/π over its samples, the estimator the .NET
design recommends: give the samples' sizes with --sizes to get it. With
--offset-bytes and no sizes it cannot be computed, and the estimate is
Approach 2's s·(R−1) + u instead: the two differ a little, the interval is
the same. The output says which estimate it is.

With --offset-bytes, --open-end (and --open-start) apply the design's
compensation for an observation window that does not end (start) on a sample,
as a whole trace never does: the upper (lower) bound is taken at S+1 (S−1)
samples. heapest report applies it to every trace row.

The exact intervals come from negative-binomial quantiles, exact to the byte.
The default method, auto, treats the samples like a row of a profile, which is
shown only because it has at least one sample: its lower bound accounts for
that (with one sample it is a single allocation). --method exact gives the
unconditional interval of SPEC §4.4 (N_lo = s + Q(α/2; s, π),
N_hi = s + 1 + Q(1−α/2; s+1, π)); camp-paulson the same with the Camp–Paulson
approximation; gamma and normal the variance-based intervals heapest uses for
rows that mix sizes. See docs/statistics.md.
` + exitStatusHelp,
		Example: `  # Fail the build when the heap holds more than 2 GiB, or rocksdb more than 50 MiB
  heapest ci --budget 'total<=2GiB' --budget 'func=^rocksdb::<=50MiB' heap.pb.gz

  # Fail when a function grew by more than 10% (and 1 MiB) over main's profile
  heapest ci --baseline main/heap.pb.gz --min-change 1MiB heap.pb.gz

  # The same for CI systems and pull requests: the table in the log, JUnit
  # for the test report, markdown for a pull-request comment, in one run
  heapest ci --baseline base/ --junit heapest.xml --markdown summary.md new/

  # The .NET design's worked example: 8 samples, u = 10,908 bytes
  heapest ci --samples 8 --rate 102400 --offset-bytes 10908

  # ... with their sizes: the estimate a trace row prints
  heapest ci --samples 3 --rate 102400 --offset-bytes 2100 --sizes 1000,1200,24 --open-end

  # 3 samples of 4 KiB objects in a jemalloc dump (R = 2^19), as JSON
  heapest ci --samples 3 --rate 524288 --size 4096 --sampler geometric --format json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 || opts.FromParquet != "" {
				return runGates(cmd, opts, args)
			}
			return runCI(cmd, opts)
		},
	}
	opts.addFlagsFormats(cmd, ciFormatChoices)
	cmd.Flags().Lookup("rate").Usage = "sampling period `R` in bytes: the calculator's (jemalloc: 2^lg_prof_sample, .NET: 102400), or for inputs that lack one"
	opts.GateOptions.addFlags(cmd)
	f := cmd.Flags()
	f.Float64Var(&opts.Samples, "samples", 0, "calculator: number of samples `S` (an integer ≥ 0)")
	sizeVar(cmd, &opts.Size, "size", 1, "a size", "calculator: size `Z` of every sampled allocation, in bytes or with a unit")
	f.Var(sizesFlag{&opts.Sizes}, "sizes", "calculator: the size of each sample, `Z1,Z2,...` (.NET ObjectSize): the estimate is then the sum of Z/π a trace row prints")
	sizeVar(cmd, &opts.OffsetBytes, "offset-bytes", 0, "a sum of offsets", "calculator: sum `U` of ObjectSize − SampledByteOffset over .NET samples")
	f.BoolVar(&opts.OpenEnd, "open-end", false, "calculator, with --offset-bytes: the window does not end on a sample (upper bound at S+1)")
	f.BoolVar(&opts.OpenStart, "open-start", false, "calculator, with --offset-bytes: the window does not start on a sample (lower bound at S−1)")
	enumVar(cmd, &opts.Sampler, "sampler", samplerChoices, true,
		"calculator: how the sample points fall: exponential gaps (Go, tcmalloc) or a trial per byte, geometric (jemalloc, .NET; the default with --offset-bytes or --sizes)")
	return cmd
}

func runCI(cmd *cobra.Command, opts CIOptions) error {
	if err := opts.calculatorOnly(cmd); err != nil {
		return usageError{err}
	}
	g, err := opts.samples(cmd)
	if err != nil {
		return usageError{err}
	}
	// The calculator's values are bytes; which bytes (live or allocated)
	// does not change their statistics.
	r, err := ci.Interval(g.Stats(unbias.AllocSpace), opts.Method, opts.Confidence)
	if err != nil {
		return err // the flags were checked: this is heapest's own error
	}
	in := calculatorInputs(g)
	return writeOutput(opts.Output, cmd.OutOrStdout(), func(w io.Writer) error {
		switch opts.Format {
		case render.JSON:
			return writeCIJSON(w, opts.Confidence, in, g.Estimator(), r)
		case render.CSV:
			return writeCICSV(w, r)
		}
		return writeCITable(w, opts.Confidence, g.Estimator(), r)
	})
}

// ciInputs are the calculator's inputs, as its JSON gives them: what the
// interval is of. Absent fields were not given.
type ciInputs struct {
	Samples     float64   `json:"samples"`
	Rate        float64   `json:"rate"`
	Sampler     string    `json:"sampler"`
	Size        float64   `json:"size,omitempty"`
	Sizes       []float64 `json:"sizes,omitempty"`
	OffsetBytes *float64  `json:"offset_bytes,omitempty"`
	OpenStart   bool      `json:"open_start,omitempty"`
	OpenEnd     bool      `json:"open_end,omitempty"`
}

// calculatorInputs are g's inputs, as the flags gave them.
func calculatorInputs(g unbias.Samples) ciInputs {
	in := ciInputs{Samples: g.Count, Rate: g.Rate, Sampler: samplerExponential.String(), Size: g.Size, Sizes: g.Sizes, OpenStart: g.OpenStart, OpenEnd: g.OpenEnd}
	if g.Geometric {
		in.Sampler = samplerGeometric.String()
	}
	if g.HasOffset {
		in.OffsetBytes = &g.Offset
	}
	return in
}

// calculatorOnly refuses, without input files, the flags that only
// apply to them.
func (o CIOptions) calculatorOnly(cmd *cobra.Command) error {
	if !cmd.Flags().Changed("samples") {
		return errors.New("give input files (or --from-parquet FILE) to gate, or --samples (and --rate) for the interval calculator")
	}
	if o.Format != render.Table && o.Format != render.JSON && o.Format != render.CSV {
		return fmt.Errorf("--format %s: the calculator writes table, csv or json", o.Format)
	}
	for _, name := range append(gateFlags, "value", "by", "top", "focus", "ignore", "hide", "lines", "from", "to", "fleet-size") {
		if cmd.Flags().Changed(name) {
			return fmt.Errorf("--%s applies to input files; the calculator takes --samples, --rate, --size, --sizes, --offset-bytes", name)
		}
	}
	return nil
}

// samples checks the calculator's flags and turns them into the group they
// describe.
func (o CIOptions) samples(cmd *cobra.Command) (unbias.Samples, error) {
	g := unbias.Samples{Count: o.Samples, Rate: o.Rate, Geometric: o.Sampler == samplerGeometric}
	hasDotnet := cmd.Flags().Changed("offset-bytes") || cmd.Flags().Changed("sizes") // .NET's events: a trial per byte
	switch {
	case !cmd.Flags().Changed("sampler"):
		g.Geometric = hasDotnet
	case !g.Geometric && cmd.Flags().Changed("offset-bytes"):
		return g, errors.New("--sampler exponential: .NET's events (--offset-bytes) are sampled by a trial per byte, geometric")
	}
	switch {
	case !(o.Samples >= 0) || o.Samples != math.Floor(o.Samples) || o.Samples > 1e9:
		return g, fmt.Errorf("--samples %s: want an integer from 0 to 10⁹", strconv.FormatFloat(o.Samples, 'f', -1, 64))
	case !cmd.Flags().Changed("rate"):
		return g, errors.New("--rate is required: the mean sampling period in bytes (jemalloc: 2^lg_prof_sample, Go: MemProfileRate, .NET: 102400)")
	}
	hasSize, hasOffset := cmd.Flags().Changed("size"), cmd.Flags().Changed("offset-bytes")
	if (o.OpenStart || o.OpenEnd) && !hasOffset {
		return g, errors.New("--open-start and --open-end need --offset-bytes")
	}
	if err := o.checkSizes(cmd, &g); err != nil {
		return g, err
	}
	switch {
	case hasSize && hasOffset:
		return g, errors.New("--size and --offset-bytes exclude each other")
	case hasOffset:
		if o.Samples == 0 && o.OffsetBytes > 0 {
			return g, errors.New("--offset-bytes must be 0 when --samples is 0")
		}
		g.Offset, g.HasOffset, g.OpenStart, g.OpenEnd = o.OffsetBytes, true, o.OpenStart, o.OpenEnd
	case hasSize:
		g.Size = o.Size
	}
	return g, nil
}

// checkSizes checks --sizes and puts them in g.
func (o CIOptions) checkSizes(cmd *cobra.Command, g *unbias.Samples) error {
	if !cmd.Flags().Changed("sizes") {
		return nil
	}
	if cmd.Flags().Changed("size") {
		return errors.New("--size and --sizes exclude each other")
	}
	if float64(len(o.Sizes)) != o.Samples {
		return fmt.Errorf("--sizes lists %d sizes for --samples %v: give one size per sample", len(o.Sizes), o.Samples)
	}
	g.Sizes = o.Sizes
	return nil
}

// ciJSON is the calculator's JSON output.
type ciJSON struct {
	Confidence float64     `json:"confidence"`
	Unit       string      `json:"unit"`
	Inputs     ciInputs    `json:"inputs"`
	Total      ciJSONTotal `json:"total"`
}

// ciJSONTotal is the group's result; Estimator says which estimate it is
// (unbias.Samples.Estimator).
type ciJSONTotal struct {
	Estimate  float64  `json:"estimate"`
	Lo        float64  `json:"lo"`
	Hi        float64  `json:"hi"`
	Samples   float64  `json:"samples"`
	Method    string   `json:"method"`
	Estimator string   `json:"estimator"`
	Notes     []string `json:"notes,omitempty"`
}

func writeCIJSON(w io.Writer, conf float64, in ciInputs, estimator string, r ci.Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(ciJSON{Confidence: conf, Unit: "bytes", Inputs: in, Total: ciJSONTotal{
		Estimate: r.Estimate, Lo: r.Lo, Hi: r.Hi, Samples: r.Samples, Method: r.Method, Estimator: estimator, Notes: r.Notes}})
}

// writeCICSV writes the result as report's CSV writes a total: a header
// and one row, every number unrounded.
func writeCICSV(w io.Writer, r ci.Result) error {
	cw := csv.NewWriter(w)
	num := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	cw.Write([]string{"estimate", "lo", "hi", "samples", "method", "notes"})
	cw.Write([]string{num(r.Estimate), num(r.Lo), num(r.Hi), num(r.Samples), r.Method, strings.Join(r.Notes, "; ")})
	cw.Flush()
	return cw.Error()
}

// writeCITable writes the result as one table row, sizes in human units as
// report's table prints them, then the same in bytes (to check against
// published tables), which estimate it is, and the result's notes.
func writeCITable(w io.Writer, conf float64, estimator string, r ci.Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "estimate\t%g%% lo\t%g%% hi\tsamples\tmethod\t\n", conf*100, conf*100)
	fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f\t%s\t\n", units.Format(r.Estimate, true), units.Format(r.Lo, true), units.Format(r.Hi, true), r.Samples, r.Method)
	if err := tw.Flush(); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "in bytes: %.0f [%.0f, %.0f]\n", r.Estimate, r.Lo, r.Hi); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "estimate: %s\n", estimator); err != nil {
		return err
	}
	for i, n := range r.Notes {
		if _, err := fmt.Fprintf(w, "[%d] %s\n", i+1, n); err != nil {
			return err
		}
	}
	return nil
}
