package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/heapest/heapest/ci"
)

func init() { extraCommands = append(extraCommands, newCICommand) }

// ciOptions are the flags of heapest ci used as a calculator.
type ciOptions struct {
	Samples     float64
	Rate        float64
	Size        float64
	OffsetBytes float64
	OpenStart   bool
	OpenEnd     bool
	Method      string
	Confidence  float64
	Format      string
}

func newCICommand() *cobra.Command {
	var opts ciOptions
	cmd := &cobra.Command{
		Use:   "ci --samples S --rate R [--size Z | --offset-bytes U]",
		Short: "Interval calculator for published sample counts",
		Long: `Without input files, ci is a calculator: it prints the estimate and the
confidence interval for S samples taken with a per-byte sampling period of R
bytes.

  --size Z          the samples are allocations of Z bytes each, each one
                    sampled with probability 1 − exp(−Z/R); the interval is the
                    exact one for N allocations (bytes = N·Z).
  --offset-bytes U  the samples are .NET AllocationSampled events and U is the
                    sum of (ObjectSize − SampledByteOffset) over them: the
                    interval is the .NET design's Approach 2 with p = 1/R.
  neither           the sampled allocations are much smaller than R (one byte).

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
		Example: `  # The .NET design's worked example: 8 samples, u = 10,908 bytes
  heapest ci --samples 8 --rate 102400 --offset-bytes 10908

  # The same 8 samples as a row of a trace, whose end is not a sample
  heapest ci --samples 8 --rate 102400 --offset-bytes 10908 --open-end

  # 3 samples of 4 KiB objects in a jemalloc dump (R = 2^19), as JSON
  heapest ci --samples 3 --rate 524288 --size 4096 --format json

  # How wide is a normal interval at 2 samples?
  heapest ci --samples 2 --rate 524288 --size 64 --method normal`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{errors.New("ci: input files are not supported yet; use heapest report FILE for intervals from a profile")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCI(cmd, opts)
		},
	}
	f := cmd.Flags()
	f.Float64Var(&opts.Samples, "samples", 0, "number of samples `S` (an integer ≥ 0)")
	f.Float64Var(&opts.Rate, "rate", 0, "mean sampling period `R` in bytes (jemalloc: 2^lg_prof_sample, .NET: 102400)")
	f.Float64Var(&opts.Size, "size", 0, "size `Z` in bytes of every sampled allocation")
	f.Float64Var(&opts.OffsetBytes, "offset-bytes", 0, "sum `U` of ObjectSize − SampledByteOffset over .NET samples")
	f.BoolVar(&opts.OpenEnd, "open-end", false, "with --offset-bytes: the window does not end on a sample (upper bound at S+1)")
	f.BoolVar(&opts.OpenStart, "open-start", false, "with --offset-bytes: the window does not start on a sample (lower bound at S−1)")
	f.StringVar(&opts.Method, "method", "auto", "interval `method`: auto, exact, camp-paulson, gamma or normal")
	f.Float64Var(&opts.Confidence, "confidence", 0.95, "coverage of the interval, in (0,1)")
	f.StringVar(&opts.Format, "format", "table", "output `format`: table or json")
	return cmd
}

func runCI(cmd *cobra.Command, opts ciOptions) error {
	stats, err := opts.stats(cmd)
	if err != nil {
		return usageError{err}
	}
	m, err := ci.ParseMethod(opts.Method)
	if err != nil {
		return usageError{err}
	}
	if opts.Format != "table" && opts.Format != "json" {
		return usageError{fmt.Errorf("unknown --format %q (want table or json)", opts.Format)}
	}
	r, err := ci.Interval(stats, m, opts.Confidence)
	if err != nil {
		return usageError{err}
	}
	if opts.Format == "json" {
		return writeCIJSON(cmd.OutOrStdout(), opts.Confidence, r)
	}
	return writeCITable(cmd.OutOrStdout(), opts.Confidence, r)
}

// stats turns the calculator's flags into the statistics the pipeline
// would have produced for such a group.
func (o ciOptions) stats(cmd *cobra.Command) (ci.Stats, error) {
	switch {
	case !cmd.Flags().Changed("samples"):
		return ci.Stats{}, errors.New("--samples is required")
	case !(o.Samples >= 0) || o.Samples != math.Floor(o.Samples) || o.Samples > 1e9:
		return ci.Stats{}, fmt.Errorf("--samples %v: want an integer from 0 to 10⁹", o.Samples)
	case !(o.Rate >= 1) || math.IsInf(o.Rate, 0):
		return ci.Stats{}, fmt.Errorf("--rate %v: want a sampling period of at least 1 byte", o.Rate)
	}
	hasSize, hasOffset := cmd.Flags().Changed("size"), cmd.Flags().Changed("offset-bytes")
	if (o.OpenStart || o.OpenEnd) && !hasOffset {
		return ci.Stats{}, errors.New("--open-start and --open-end need --offset-bytes")
	}
	switch {
	case hasSize && hasOffset:
		return ci.Stats{}, errors.New("--size and --offset-bytes exclude each other")
	case hasOffset:
		if !(o.OffsetBytes >= 0) || math.IsInf(o.OffsetBytes, 0) {
			return ci.Stats{}, fmt.Errorf("--offset-bytes %v: want a byte count ≥ 0", o.OffsetBytes)
		}
		if o.Samples == 0 && o.OffsetBytes > 0 {
			return ci.Stats{}, errors.New("--offset-bytes must be 0 when --samples is 0")
		}
		st := offsetStats(o.Samples, o.Rate, o.OffsetBytes)
		st.OpenStart, st.OpenEnd = o.OpenStart, o.OpenEnd
		return st, nil
	case hasSize:
		if !(o.Size >= 1) || math.IsInf(o.Size, 0) {
			return ci.Stats{}, fmt.Errorf("--size %v: want a size of at least 1 byte", o.Size)
		}
		return sizeStats(o.Samples, o.Rate, o.Size), nil
	}
	return sizeStats(o.Samples, o.Rate, 1), nil
}

// sizeStats are the statistics of s samples of allocations of z bytes at
// period r, as the pipeline computes them for one stack.
func sizeStats(s, r, z float64) ci.Stats {
	pi := -math.Expm1(-z / r)
	return ci.Stats{N: 1, Estimate: s * z / pi, Var: s * z * z * (1 - pi) / (pi * pi), Samples: s,
		MaxWeight: z * (1 - pi) / pi, P: pi, Unit: z, Rate: r}
}

// offsetStats are those of s .NET samples with offset sum u: Approach 2's
// estimate, the negative-binomial variance s·q/p², and the largest weight
// of one sample (q/p bytes).
func offsetStats(s, r, u float64) ci.Stats {
	p := 1 / r
	return ci.Stats{N: 1, Estimate: ci.OffsetEstimate(s, p, u), Var: s * (1 - p) / (p * p), Samples: s,
		MaxWeight: (1 - p) / p, Mixed: true, Rate: r, Offset: u, HasOffset: true}
}

// ciJSON is the calculator's JSON output.
type ciJSON struct {
	Confidence float64     `json:"confidence"`
	Total      ciJSONTotal `json:"total"`
}

type ciJSONTotal struct {
	Estimate float64  `json:"estimate"`
	Lo       float64  `json:"lo"`
	Hi       float64  `json:"hi"`
	Samples  float64  `json:"samples"`
	Method   string   `json:"method"`
	Notes    []string `json:"notes,omitempty"`
}

func writeCIJSON(w io.Writer, conf float64, r ci.Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(ciJSON{Confidence: conf, Total: ciJSONTotal{
		Estimate: r.Estimate, Lo: r.Lo, Hi: r.Hi, Samples: r.Samples, Method: r.Method, Notes: r.Notes}})
}

func writeCITable(w io.Writer, conf float64, r ci.Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "estimate\t%g%% lo\t%g%% hi\tsamples\tmethod\t\n", conf*100, conf*100)
	fmt.Fprintf(tw, "%.0f\t%.0f\t%.0f\t%.0f\t%s\t\n", r.Estimate, r.Lo, r.Hi, r.Samples, r.Method)
	if err := tw.Flush(); err != nil {
		return err
	}
	for i, n := range r.Notes {
		if _, err := fmt.Fprintf(w, "[%d] %s\n", i+1, n); err != nil {
			return err
		}
	}
	return nil
}
