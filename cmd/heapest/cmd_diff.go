package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/compare"
	"github.com/heapest/heapest/render"
	"github.com/heapest/heapest/report"
)

// DiffOptions are the flags of heapest diff: report's, and --base.
type DiffOptions struct {
	ReportOptions
	Base []string
}

func newDiffCommand() *cobra.Command {
	opts := DiffOptions{ReportOptions: ReportOptions{Format: render.Table}}
	cmd := &cobra.Command{
		Use:   "diff [flags] BASE NEW",
		Short: "The change of every row between two profiles, with intervals",
		Long: `Diff compares NEW with BASE row by row (of --by, default func): each row's
estimate on both sides, the change, the interval on the change NEW/BASE and
the p-value of "no change". BASE and NEW are each a file, a directory or a
quoted glob, merged as heapest merge merges; with --base (repeatable), every
argument is NEW.

Rows are ordered by the size of their change. A change is marked "~" when it
is not significant: many rows are many tests, and the rows called changed are
those Benjamini–Hochberg selects at a false discovery rate of 1 − confidence
(among the rows it calls changed, at most that share is expected to be
noise). Each row's interval is at the false-coverage-rate adjusted level the
header states (Benjamini–Yekutieli), so that "~" means exactly that the
interval includes no change. The total is compared on its own, at the
confidence itself. See docs/statistics.md.

--format pprof writes a profile that pprof shows as a diff, as pprof's own
-diff_base does: NEW's unbiased estimates per stack, and BASE's negated and
tagged pprof::base. A diff is not a gate: its exit status is 0 whatever
changed; heapest ci --baseline gates.
` + exitStatusHelp,
		Example: `  # What changed between two dumps of a service?
  heapest diff before.heap after.heap

  # Several dumps a side, merged; every row, as JSON
  heapest diff --top 0 --format json 'base/*.heap' 'new/*.heap'

  # As a pprof diff profile
  heapest diff -o diff.pb.gz --format pprof base.pb.gz new.pb.gz
  go tool pprof -top diff.pb.gz`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDiff(cmd, opts, args)
		},
	}
	opts.addFlagsFormats(cmd, diffFormatChoices)
	cmd.Flags().StringArrayVar(&opts.Base, "base", nil, "the baseline `BASE` (file, directory or glob; repeatable, merged): every argument is then NEW")
	return cmd
}

// sides splits the arguments into BASE and NEW.
func (o DiffOptions) sides(args []string) (base, new []string, err error) {
	switch {
	case len(o.Base) > 0 && len(args) > 0:
		return o.Base, args, nil
	case len(o.Base) > 0:
		return nil, nil, fmt.Errorf("--base given: name NEW's inputs as arguments")
	case len(args) != 2:
		return nil, nil, fmt.Errorf("want BASE and NEW, got %d argument(s); for several inputs a side use directories, quoted globs or --base", len(args))
	}
	return args[:1], args[1:], nil
}

func runDiff(cmd *cobra.Command, opts DiffOptions, args []string) error {
	baseArgs, newArgs, err := opts.sides(args)
	if err != nil {
		return usageError{err}
	}
	if opts.FleetSize != 0 {
		return usageError{fmt.Errorf("--fleet-size applies to report and merge")}
	}
	ropt, err := opts.reportOptions(cmd)
	if err != nil {
		return usageError{err}
	}
	// Every row of both sides is paired; a --by stack row's key (its
	// frames joined, kilobytes on a dump) is made for the rows kept only.
	ropt.Top, ropt.AllValues, ropt.KeylessStacks = 0, false, true
	if opts.Format == render.Pprof {
		ropt.By, ropt.DefaultBy = aggregate.ByStack, false // a profile is per stack
	} else {
		// The diff's intervals are on the change, computed from the
		// statistics of the rows it keeps: each side's own, on every
		// row, were most of a large diff's time, and never shown.
		ropt.EstimatesOnly = true
	}
	newPaths, err := opts.inputs(cmd, newArgs, false)
	if err != nil {
		return err
	}
	basePaths, err := opts.inputs(cmd, baseArgs, false)
	if err != nil {
		return err
	}
	newB := report.NewBuilder(withSingle(ropt, newPaths))
	if err := opts.load(newB, newPaths, cmd.ErrOrStderr()); err != nil {
		return err
	}
	newR, err := newB.Report()
	if err != nil {
		return err
	}
	baseR, err := loadSide(cmd, opts.inputOptions, ropt, newR, basePaths)
	if err != nil {
		return err
	}
	if opts.Format == render.Pprof {
		return writeOutput(opts.Output, cmd.OutOrStdout(), func(w io.Writer) error {
			return render.WriteDiffPprof(w, baseR, newR)
		})
	}
	d, err := compare.New(baseR, newR, ropt.Method, opts.Top)
	if err != nil {
		return err
	}
	return writeOutput(opts.Output, cmd.OutOrStdout(), func(w io.Writer) error {
		return render.WriteDiff(w, d, opts.Format)
	})
}
