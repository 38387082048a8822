package main

import (
	"errors"
	"fmt"
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
	root.SetHelpCommand(newHelpCommand())
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
	strictCompletion(root)
	return root
}

// strictCompletion makes "heapest completion SHELL" refuse a shell it has
// no script for, as a usage error. cobra's completion command refuses
// arguments (cobra.NoArgs), but only once it can run: without a Run of
// its own it printed its help on standard output and exited 0, which a
// script piping it into a file would not notice.
func strictCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	if c, _, err := root.Find([]string{"completion"}); err == nil && c.Name() == "completion" {
		c.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
		c.DisableFlagsInUseLine = true // runnable only to refuse: "heapest completion [flags]" means nothing
	}
}

// newHelpCommand is "heapest help [command]": cobra's, but a topic that is
// no command is a usage error on standard error, where cobra's printed
// "Unknown help topic" on standard output and exited 0.
func newHelpCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Long:  "Help prints the help of any command: heapest help report.",
		RunE: func(c *cobra.Command, args []string) error {
			root := c.Root()
			target, rest, err := root.Find(args)
			if err != nil || target == nil || len(rest) > 0 {
				var names []string
				for _, sub := range root.Commands() {
					if sub.IsAvailableCommand() {
						names = append(names, sub.Name())
					}
				}
				return usageError{fmt.Errorf("no help topic %q: the commands are %s", strings.Join(args, " "), strings.Join(names, ", "))}
			}
			target.InitDefaultHelpFlag()
			return target.Help()
		},
		ValidArgsFunction: func(c *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			var names []string
			for _, sub := range c.Root().Commands() {
				if sub.IsAvailableCommand() {
					names = append(names, sub.Name())
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
	}
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
