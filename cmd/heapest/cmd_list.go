package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/render"
	"github.com/heapest/heapest/report"
)

// listFormatChoices are list's --format values.
var listFormatChoices = []render.Format{render.Table, render.JSON}

// ListOptions are the flags of heapest list.
type ListOptions struct {
	ReportOptions
	// SourcePath are directories searched for source files the profile
	// names by a path that does not exist here.
	SourcePath []string
}

func newListCommand() *cobra.Command {
	opts := ListOptions{ReportOptions: ReportOptions{Format: render.Table}}
	cmd := &cobra.Command{
		Use:   "list [flags] REGEX FILE|URL...",
		Short: "Annotated source of the functions matching REGEX: each line's estimate with its interval",
		Long: `List shows the source of the functions whose name matches REGEX, each line
beside what was allocated there (flat: at that line; cum: by the calls made
from it), with confidence intervals, as pprof's -list does. The inputs are read
as "heapest report --lines" reads them: lines come from the profile (Go, Node.js,
JFR, memray) or from the binary's DWARF line tables (jemalloc and gperftools
dumps); a function whose frames have no line is named on standard error.

Source files are read where the profile says they are, or, for a path that does
not exist here, under each --source-path directory by the path's trailing
parts (/build/src/app/main.go is found as DIR/src/app/main.go or
DIR/app/main.go, ...). A file not found is said on standard error, and its
lines with estimates are listed without their text. JFR names no file: a
method's is its class's, pkg/Outer.java (or .kt) for pkg.Outer$Inner.method,
looked for in the current directory and under --source-path (the source
root, such as src/main/java).

Several inputs are merged as report merges them. --top is the number of
functions listed, the largest first.
` + exitStatusNoGate,
		Example: `  # Where in main.allocate does the memory come from?
  heapest list 'main\.allocate$' heap.pb.gz

  # A jemalloc dump of a C++ server, sources checked out elsewhere
  heapest list --source-path ~/src/server 'Cache::insert' jeprof.1234.0.m0.heap`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runList(cmd, opts, args)
		},
	}
	opts.inputOptions.addFlags(cmd)
	opts.addSelectFlags(cmd)
	f := cmd.Flags()
	f.StringVarP(&opts.Output, "output", "o", "", "write the listing to `FILE` (atomically) instead of standard output")
	enumVar(cmd, &opts.Format, "format", listFormatChoices, false, "output format (json: each routine's lines with every number, for editors and scripts)")
	f.StringSliceVar(&opts.SourcePath, "source-path", nil, "directories searched for source files by their path's trailing parts (`DIR`,...)")
	f.BoolVar(&opts.Wide, "wide", false, "on a terminal, keep every column (by default the least needed go until the lines fit)")
	f.Lookup("top").Usage = "list the `N` functions that allocated most (0: all)"
	// A listing is by line, always.
	for _, name := range []string{"by", "lines"} {
		_ = f.MarkHidden(name)
	}
	return cmd
}

func runList(cmd *cobra.Command, opts ListOptions, args []string) error {
	if len(args) < 2 {
		return usageError{errors.New("give a REGEX of functions and the profiles to list them from")}
	}
	re, err := compile("REGEX", args[0])
	if err != nil {
		return usageError{err}
	}
	for _, name := range []string{"by", "lines"} {
		if cmd.Flags().Changed(name) {
			return usageError{fmt.Errorf("--%s: a listing is by source line, always", name)}
		}
	}
	opts.Lines = true
	ropt, err := opts.reportOptions(cmd)
	if err != nil {
		return usageError{err}
	}
	top := ropt.Top
	ropt.By, ropt.DefaultBy, ropt.Top = aggregate.ByFunc, false, 0
	paths, err := opts.inputs(cmd, args[1:], false)
	if err != nil {
		return err
	}
	ropt.SingleInput = len(paths) == 1
	b := report.NewBuilder(ropt)
	stderr := opts.chatter(cmd.ErrOrStderr())
	if err := opts.load(b, paths, cmd.ErrOrStderr()); err != nil {
		return err
	}
	r, err := b.Report()
	if err != nil {
		return err
	}
	opts.warnNotices(cmd.ErrOrStderr(), r)
	routines, unlined := report.Routines(r, re)
	if len(unlined) > 0 {
		fmt.Fprintf(stderr, "heapest: warning: no source line for %s: %s\n", render.Noun(len(unlined), "function", "functions"), strings.Join(unlined, ", "))
	}
	switch {
	case len(routines) == 0 && len(unlined) == 0:
		return fmt.Errorf("no function of the profile matches %s (a function none of whose allocations was sampled is not in it)", args[0])
	case len(routines) == 0:
		return fmt.Errorf("no function matching %s has a source line in the profile", args[0])
	}
	cut := 0
	if top > 0 && len(routines) > top {
		routines, cut = routines[:top], len(routines)-top
	}
	src := &sourceFiles{dirs: opts.SourcePath, stderr: stderr, read: map[string][]string{}}
	for i := range routines {
		if routines[i].File == "" { // a JVM method's lines: its class's file, if found
			routines[i].File = src.classFile(routines[i].Func)
		}
	}
	return writeOutput(opts.Output, cmd.OutOrStdout(), func(w io.Writer) error {
		if opts.Format == render.JSON {
			return render.WriteListJSON(w, r, routines, cut)
		}
		return render.WriteList(w, r, routines, cut, src.lines, tableOptions(w, opts.Wide))
	})
}

// sourceFiles reads the source files a listing shows, where the profile
// says they are or under the --source-path directories, and says on
// standard error which it did not find.
type sourceFiles struct {
	dirs   []string
	stderr io.Writer
	read   map[string][]string // by file, nil for one not read
}

// lines returns file's lines, or nil when it is not found (said once).
func (s *sourceFiles) lines(file string) []string {
	text, done := s.read[file]
	if !done {
		text = s.load(file)
		s.read[file] = text
	}
	return text
}

// load reads file's lines, or says why not and returns nil.
func (s *sourceFiles) load(file string) []string {
	path, ok := s.find(file)
	if !ok {
		fmt.Fprintf(s.stderr, "heapest: warning: source %s not found (give the directory it is under with --source-path): its lines are listed without their text\n", file)
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(s.stderr, "heapest: warning: source %s: %v\n", file, err)
		return nil
	}
	text := strings.TrimSuffix(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")
	return strings.Split(text, "\n")
}

// find locates file: as named, else under each directory by the path's
// trailing parts, longest first. A profile written on Windows may separate
// them with backslashes (C:\src\app\main.go).
func (s *sourceFiles) find(file string) (string, bool) {
	if isFile(file) {
		return file, true
	}
	parts := strings.FieldsFunc(file, func(r rune) bool { return r == '/' || r == '\\' })
	for _, dir := range s.dirs {
		for i := range parts {
			p := filepath.Join(append([]string{dir}, parts[i:]...)...)
			if isFile(p) {
				return p, true
			}
		}
	}
	return "", false
}

// classFile is the source file of the class of JVM method fn
// ("pkg.Outer$Inner.method": pkg/Outer.java, or .kt), where the profile
// names none (JFR): looked for as find looks, "" when not found.
func (s *sourceFiles) classFile(fn string) string {
	dot := strings.LastIndexByte(fn, '.')
	if dot <= 0 {
		return ""
	}
	class, _, _ := strings.Cut(fn[:dot], "$")
	for _, ext := range []string{".java", ".kt"} {
		if path, ok := s.find(strings.ReplaceAll(class, ".", "/") + ext); ok {
			return path
		}
	}
	return ""
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
