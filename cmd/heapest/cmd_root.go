package main

import (
	"github.com/spf13/cobra"
)

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "heapest",
		Short: "Heap profile estimates with confidence intervals",
		Long: `heapest reads sampled heap profiles — jemalloc heap dumps, pprof protos (Go,
tcmalloc, gperftools, heapprofd, Node.js's V8), V8's .heapprofile JSON (node
--heap-prof), .NET nettrace traces, JFR recordings, memray CSV exports and
DHAT profiles (Valgrind's, dhat-rs's) —
unbiases every sample, aggregates per function, source line, stack or type, and
prints every estimate with a confidence interval.

Standard output carries only the report; progress, warnings and errors go to
standard error.
` + exitStatusHelp,
		Version:       versionString(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{err}
	})
	root.AddCommand(
		newReportCommand(),
		newMergeCommand(),
		newCICommand(),
		newDiffCommand(),
		newWebCommand(),
		newAdviseCommand(),
		newListCommand(),
		newVersionCommand(),
		newGenCommand(),
	)
	return root
}

// usageError marks a command-line mistake.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }
