package main

import (
	"errors"
	"strings"

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
		return usageError{plainFlagError(err)}
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

// plainFlagError says in words what a number or boolean flag wants, where
// pflag's error ends in Go's own ("strconv.ParseInt: parsing "abc":
// invalid syntax").
func plainFlagError(err error) error {
	msg := err.Error()
	i := strings.LastIndex(msg, "strconv.Parse")
	if i < 0 {
		return err
	}
	kind, _, _ := strings.Cut(msg[i+len("strconv.Parse"):], ":")
	want, ok := map[string]string{"Int": "want a whole number", "Uint": "want a whole number ≥ 0", "Float": "want a number", "Bool": "want true or false"}[kind]
	if !ok {
		return err
	}
	if strings.HasSuffix(msg, "value out of range") {
		want = "out of range"
	}
	return errors.New(msg[:i] + want)
}
