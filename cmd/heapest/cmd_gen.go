package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

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
	fenceHelp(root)
	switch what {
	case "man":
		return genTree(root, opts.Dir, "-", ".1", func(c *cobra.Command, w io.Writer) error {
			return doc.GenMan(c, &doc.GenManHeader{Title: "HEAPEST", Section: "1", Source: "heapest " + versionString()}, w)
		})
	case "markdown":
		return genTree(root, opts.Dir, "_", ".md", func(c *cobra.Command, w io.Writer) error {
			return doc.GenMarkdownCustom(c, w, func(link string) string { return link })
		})
	}
	return usageError{fmt.Errorf("gen %s: want man or markdown", what)}
}

// genTree writes a page for c and each command under it, named as
// cobra's GenManTree and GenMarkdownTree name them (the command path
// joined by sep, then ext), each through writeOutput: a full disk leaves
// the page there before, not half a page.
func genTree(c *cobra.Command, dir, sep, ext string, page func(*cobra.Command, io.Writer) error) error {
	for _, sub := range c.Commands() {
		if !sub.IsAvailableCommand() || sub.IsAdditionalHelpTopicCommand() {
			continue
		}
		if err := genTree(sub, dir, sep, ext, page); err != nil {
			return err
		}
	}
	name := filepath.Join(dir, strings.ReplaceAll(c.CommandPath(), " ", sep)+ext)
	return writeOutput(name, nil, func(w io.Writer) error { return page(c, w) })
}

// fenceHelp fences the tables in every command's help text (the flags of
// ci's rules, web's paths, EXIT STATUS) as code blocks. Both generators
// read the help as markdown, where lines indented by two spaces are a
// paragraph: reflowed into one, and in a manual page with its first line
// out of step with the rest.
func fenceHelp(c *cobra.Command) {
	c.Long = fenceIndented(c.Long)
	for _, sub := range c.Commands() {
		fenceHelp(sub)
	}
}

// fenceIndented puts each run of lines of s that start with two spaces
// between ``` lines.
func fenceIndented(s string) string {
	lines := strings.Split(s, "\n")
	out := make([]string, 0, len(lines)+4)
	in := false
	for _, l := range lines {
		indented := strings.HasPrefix(l, "  ")
		if indented != in {
			out = append(out, "```")
			in = indented
		}
		out = append(out, l)
	}
	if in {
		out = append(out, "```")
	}
	return strings.Join(out, "\n")
}
