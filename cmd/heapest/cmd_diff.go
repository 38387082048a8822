package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/compare"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/render"
	"github.com/heapest/heapest/report"
)

// DiffOptions are the flags of heapest diff: report's, --base and
// --fail-on.
type DiffOptions struct {
	ReportOptions
	Base   []string
	FailOn compare.Direction
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

With --fail-on increase (decrease, change), diff is a gate: it exits 1 when
a row is called changed that way, of every row (not only those --top shows),
and says so on standard error. When nothing changed, the chance that it
fails is at most 1 − confidence. The total is not one of the rows: a total
that grew with no row marked passes. heapest ci --baseline gates with a
threshold (--threshold 10%), the total among its tests.

--format pprof writes a profile that pprof shows as a diff, as pprof's own
-diff_base does: NEW's unbiased estimates per stack, and BASE's negated and
tagged pprof::base. --format svg draws the rows' changes with their
intervals on a log scale of ratios, red where a row grew significantly and
green where it shrank, for a CI job's artifacts.
` + exitStatusHelp,
		Example: `  # What changed between two dumps of a service?
  heapest diff before.heap after.heap

  # Several dumps a side, merged; every row, as JSON
  heapest diff --top 0 --format json 'base/*.heap' 'new/*.heap'

  # Fail a CI job when a function's memory grew significantly
  heapest diff --fail-on increase base.pb.gz new.pb.gz

  # A picture of the changes, for a pull request
  heapest diff --format svg -o diff.svg base.pb.gz new.pb.gz

  # As a pprof diff profile
  heapest diff -o diff.pb.gz --format pprof base.pb.gz new.pb.gz
  go tool pprof -top diff.pb.gz`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDiff(cmd, opts, args)
		},
	}
	opts.addFlagsFormats(cmd, diffFormatChoices)
	cmd.Flags().StringArrayVar(&opts.Base, "base", nil, "the baseline `BASE` (file, directory or glob; repeatable, merged): every argument is then NEW")
	enumVar(cmd, &opts.FailOn, "fail-on", []compare.Direction{compare.Increase, compare.Decrease, compare.Change}, true,
		"exit 1 when a row is called changed this way (of every row; the total is not one): a gate that fails with no change at most 1 − confidence of the time")
	return cmd
}

// sides splits the arguments into BASE and NEW.
func (o DiffOptions) sides(args []string) (base, new []string, err error) {
	switch {
	case len(o.Base) > 0 && len(args) > 0:
		base, new = o.Base, args
	case len(o.Base) > 0:
		return nil, nil, fmt.Errorf("--base given: name NEW's inputs as arguments")
	case len(args) != 2:
		return nil, nil, fmt.Errorf("want BASE and NEW, got %d argument(s); for several inputs a side use directories, quoted globs or --base", len(args))
	default:
		base, new = args[:1], args[1:]
	}
	if err := stdinOnce(base, new); err != nil {
		return nil, nil, err
	}
	return base, new, nil
}

// stdinOnce refuses "-" on both sides of a comparison (diff's, ci's
// --baseline): the second side would read an empty input.
func stdinOnce(base, new []string) error {
	if slices.Contains(base, "-") && slices.Contains(new, "-") {
		return fmt.Errorf("- on both sides: standard input holds one profile; give the other side as a file")
	}
	return nil
}

func runDiff(cmd *cobra.Command, opts DiffOptions, args []string) error {
	baseArgs, newArgs, err := opts.sides(args)
	if err != nil {
		return usageError{err}
	}
	if opts.FleetSize != 0 {
		return usageError{fmt.Errorf("--fleet-size applies to report and merge")}
	}
	if opts.FailOn != 0 && opts.Format == render.Pprof {
		return usageError{fmt.Errorf("--fail-on judges the rows of a table, CSV or JSON diff, and a pprof diff has none: write the profile in a run of its own")}
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
	newB, err := opts.read(ropt, newPaths, cmd.ErrOrStderr())
	if err != nil {
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
	opts.warnNotices(cmd.ErrOrStderr(), newR, baseR)
	gate := ""
	if opts.FailOn != 0 {
		gate = "--fail-on"
	}
	opts.warnOn(cmd.ErrOrStderr(), newR, sameWarning(baseR, newR, gate))
	opts.warnOn(cmd.ErrOrStderr(), newR, unequalWarning(baseR, newR, opts.Format == render.Pprof))
	if opts.Format == render.Pprof {
		return writeOutput(opts.Output, cmd.OutOrStdout(), func(w io.Writer) error {
			return render.WriteDiffPprof(w, baseR, newR)
		})
	}
	d, err := compare.New(baseR, newR, ropt.Method, opts.Top)
	if err != nil {
		return err
	}
	opts.warnOn(cmd.ErrOrStderr(), newR, disjointWarning(d.Overlap))
	err = writeOutput(opts.Output, cmd.OutOrStdout(), func(w io.Writer) error {
		return render.WriteDiff(w, d, opts.Format)
	})
	if err != nil || opts.FailOn == 0 {
		return err
	}
	return opts.verdict(cmd.ErrOrStderr(), d)
}

// unequalWarning is the warning ("" for none) when BASE and NEW hold
// different numbers of processes: each side is a sum, so they are compared
// per process (compare.PerProcess), which the user may not expect of two
// sums; a pprof diff (sums) holds their sums all the same.
func unequalWarning(base, new *report.Report, sums bool) string {
	if !compare.PerProcess(base, new) {
		return ""
	}
	b := render.Plural(base.Processes(), "process")
	if sums {
		return fmt.Sprintf("BASE holds %s and NEW %d: a pprof diff holds their sums, so its change includes the difference in their number; give each side as many, or diff as a table, which compares them per process", b, new.Processes())
	}
	return fmt.Sprintf("BASE holds %s and NEW %d: the sides are compared per process: each side's values are the mean of its processes", b, new.Processes())
}

// sameWarning is the warning ("" for none) when NEW holds an input BASE
// holds too: the same file, or a copy of one (one process at one moment,
// as their sources say). A profile compared with itself shows no change,
// and the gate on the comparison (gate: diff's --fail-on, ci's baseline;
// "" for none) cannot fail: a pipeline pointed at one artifact twice
// would pass forever.
func sameWarning(base, new *report.Report, gate string) string {
	var same []string
	for _, n := range new.Sources {
		for _, b := range base.Sources {
			if sameInput(b, n) {
				same = append(same, n.Path)
				break
			}
		}
	}
	if len(same) > 0 {
		consequence := ""
		if gate != "" {
			consequence = ", so " + gate + " cannot fail"
		}
		return fmt.Sprintf("BASE holds NEW's %s too (the same file, or a copy): a profile compared with itself shows no change%s",
			strings.Join(same, ", "), consequence)
	}
	return ""
}

// sameInput reports whether two inputs are one: one file, or the same
// process's profile of the same moment with the same samples.
func sameInput(a, b parse.Source) bool {
	pa, errA := filepath.Abs(a.Path)
	pb, errB := filepath.Abs(b.Path)
	if errA == nil && errB == nil && pa == pb {
		return true
	}
	return a.Process != "" && a.Process == b.Process && a.Time == b.Time && a.Samples == b.Samples
}

// disjointWarning is the warning ("" for none) when BASE and NEW have no
// row in common: a comparison of them calls every row new or gone, and a
// gate on it fails.
func disjointWarning(o compare.Overlap) string {
	if !o.Disjoint() {
		return ""
	}
	return fmt.Sprintf("BASE and NEW have no row in common (%d only in BASE, %d only in NEW): "+
		"profiles of different programs, or of one named differently on each side (symbolized on one only: --binary or --symbol-path given to one); every row is new or gone",
		o.BaseOnly, o.NewOnly)
}

// verdict tells on w whether the gate of --fail-on passed (not with
// --quiet) or failed (always), and returns errGateFailed when it failed.
func (o DiffOptions) verdict(w io.Writer, d *compare.Diff) error {
	failed := d.Changed(o.FailOn) > 0
	if !failed {
		w = o.chatter(w)
	}
	fmt.Fprintf(w, "heapest: diff --fail-on %s: %s\n", o.FailOn, render.DiffGate(d, o.FailOn))
	if failed {
		return errGateFailed
	}
	return nil
}
