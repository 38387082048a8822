package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// GenOptions are the flags of heapest gen.
type GenOptions struct {
	Dir string
}

func newGenCommand() *cobra.Command {
	opts := GenOptions{}
	cmd := &cobra.Command{
		Use:   "gen man|markdown --dir DIR",
		Short: "Write heapest's manual pages (or markdown docs) to a directory",
		Long: `Gen writes one manual page (section 1) or one markdown file per command
into DIR, made from the same help text "heapest help" prints. Shell
completion scripts come from "heapest completion bash|zsh|fish|powershell".
` + exitStatusNoGate,
		Example: `  heapest gen man --dir /usr/local/share/man/man1
  heapest gen markdown --dir docs/cli`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("gen writes man or markdown: give one of them, e.g. heapest gen man --dir DIR")
			}
			return nil
		},
		ValidArgs: []string{"man", "markdown"},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGen(cmd.Root(), opts, args[0])
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "dir", "", "write the files into `DIR` (created if missing)")
	return cmd
}

func runGen(root *cobra.Command, opts GenOptions, what string) error {
	if opts.Dir == "" {
		return usageError{fmt.Errorf("--dir is required: the directory to write the files into")}
	}
	if err := os.MkdirAll(opts.Dir, 0o777); err != nil {
		return err
	}
	root.DisableAutoGenTag = true // the same text for the same heapest, whenever it is made
	switch what {
	case "man":
		return doc.GenManTree(root, &doc.GenManHeader{Title: "HEAPEST", Section: "1", Source: "heapest " + versionString()}, opts.Dir)
	case "markdown":
		return doc.GenMarkdownTree(root, opts.Dir)
	}
	return usageError{fmt.Errorf("gen %s: want man or markdown", what)}
}
