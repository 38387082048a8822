package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/heapest/heapest/render"
)

// MergeOptions are the flags of heapest merge: report's, with pprof output
// by default.
type MergeOptions struct {
	ReportOptions
}

func newMergeCommand() *cobra.Command {
	opts := MergeOptions{ReportOptions{Format: render.Pprof}}
	cmd := &cobra.Command{
		Use:   "merge [flags] FILE|DIR|GLOB|URL|- ... -o merged.pb.gz",
		Short: "Merge the profiles of a fleet into one, unbiasing each sample first",
		Long: `Merge reads the heap profiles of many processes, unbiases every sample of
each with that input's own sampling rate, and sums the statistics behind the
intervals. It writes one gzip-compressed profile.proto (to -o FILE, or to
standard output when that is not a terminal) that pprof viewers open
(the unbiased estimate is the default sample type) and that heapest reads back
with every stack's exact statistics, so a merge can be merged again: merging
merges gives the rows and intervals of merging all their inputs at once.

Inputs are files, directories (walked recursively; hidden entries skipped),
glob patterns (quoted, so that heapest expands them), http(s) URLs (a
running program's /debug/pprof/heap; see "heapest report --help"), and "-",
which reads paths from standard input, one a line (as find prints them) or each
ended by a NUL byte (find -print0, for names with line breaks). Any mix of
formats and sampling rates merges, as long as every input has the value
estimated. The same set of inputs gives the same bytes whatever their order.

Several dumps of one process are not independent samples of a fleet: their
live memory would be counted once per dump. Dumps whose file names (jemalloc's
prefix.pid.seq..., gperftools' prefix.seq) or mapped libraries say they come
from one process, dumps of one JFR recording, copies of one .NET trace and of
one Go debug=1 profile (by its last GC's time) are refused;
--latest-per-process keeps the newest of each where the dumps say when they
were taken, --allow-duplicates sums them anyway. Workers forked from one
parent are processes of their own, but their allocators sample alike: their
intervals allow for it, and a note says so.

An input that cannot be read stops the merge, and nothing is written; with
--keep-going it is skipped, and the skipped inputs are listed on standard
error and recorded in the output. Inputs are read --jobs at a time. On a
terminal, progress is shown on standard error.

With --format table, csv or json, merge prints the merged report instead (as
"heapest report FILE..." does). See docs/merge.md.
` + exitStatusNoGate,
		Example: `  # A fleet's dumps, collected into one directory per host
  heapest merge -o fleet.pb.gz dumps/

  # Paths from find; skip what cannot be read
  find /var/dumps -name '*.heap' | heapest merge --keep-going -o fleet.pb.gz -

  # Merge merges (per region, then all), and read the result
  heapest merge -o all.pb.gz eu.pb.gz us.pb.gz
  heapest report all.pb.gz

  # Which process holds the most? One row per input
  heapest merge --format table --by source 'dumps/*.heap'`,
		Args: cobra.ArbitraryArgs, // checked in runMerge, with --from-parquet's message
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMerge(cmd, opts, args)
		},
	}
	opts.addFlags(cmd)
	return cmd
}

func runMerge(cmd *cobra.Command, opts MergeOptions, args []string) error {
	if opts.FromParquet != "" {
		return usageError{fmt.Errorf("--from-parquet: merge reads profiles; rows an engine merged are read by report (or ci) --from-parquet")}
	}
	if len(args) == 0 {
		return usageError{fmt.Errorf("no input: give the profiles to merge")}
	}
	ropt, err := opts.reportOptions(cmd)
	if err != nil {
		return usageError{err}
	}
	paths, err := opts.inputs(cmd, args, true)
	if err != nil {
		return err
	}
	if err := checkFleet(ropt, paths); err != nil {
		return err
	}
	joined, err := opts.write(cmd, ropt, paths)
	if err != nil {
		return err
	}
	if opts.Format == render.Pprof && opts.Output != "-" && opts.Output != "" {
		fmt.Fprintf(opts.chatter(cmd.ErrOrStderr()), "heapest: merged %s into %s\n", render.Plural(joined, "input"), opts.Output)
	}
	return nil
}
