package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/shlex"
)

var update = flag.Bool("update", false, "rewrite the stdout, stderr and exit sections of testdata/cli/*.txtar")

// runCLI runs the CLI in-process, as main does, and returns stdout,
// stderr and the exit code.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), code
}

// TestCLI runs every case of testdata/cli: one archive per command line,
// with sections
//
//	args    the command line after "heapest", split like a shell does
//	stdin   standard input (optional)
//	stdout  expected standard output
//	stderr  expected standard error
//	exit    expected exit status
//
// and any other section is an input file, written under a temporary
// directory that args and files name as $WORK (outputs name it so too).
// Relative paths are from this directory. go test -run TestCLI -update
// rewrites stdout, stderr and exit from what the command does.
func TestCLI(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "cli", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases in testdata/cli: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) { runCase(t, file) })
	}
}

func runCase(t *testing.T, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	a := parseArchive(data)
	work := t.TempDir()
	expand := func(s string) string { return strings.ReplaceAll(s, "$WORK", work) }
	var args []string
	stdin := ""
	for _, s := range a.sections {
		switch s.name {
		case "args":
			if args, err = shlex.Split(expand(s.data)); err != nil {
				t.Fatalf("args: %v", err)
			}
		case "stdin":
			stdin = expand(s.data)
		case "stdout", "stderr", "exit":
		default:
			path := filepath.Join(work, filepath.FromSlash(s.name))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(expand(s.data)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if args == nil {
		t.Fatal("no args section")
	}
	stdout, stderr, code := runWithStdin(t, work, stdin, args)
	unexpand := func(s string) string { return strings.ReplaceAll(s, work, "$WORK") }
	got := map[string]string{"stdout": unexpand(stdout), "stderr": unexpand(stderr), "exit": strconv.Itoa(code) + "\n"}
	if *update {
		for _, name := range []string{"stdout", "stderr", "exit"} {
			if err := a.set(name, got[name]); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		if err := os.WriteFile(file, a.format(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, name := range []string{"stdout", "stderr", "exit"} {
		want, ok := a.get(name)
		if !ok {
			t.Errorf("no %s section (go test -run TestCLI -update writes it)", name)
		} else if got[name] != want {
			t.Errorf("%s differs (go test -run TestCLI -update accepts it)\ngot:\n%s\nwant:\n%s", name, got[name], want)
		}
	}
}

// runWithStdin runs args with stdin as standard input. Parsers read "-"
// from os.Stdin itself, so a case's stdin is a file put there for the run.
func runWithStdin(t *testing.T, work, stdin string, args []string) (string, string, int) {
	path := filepath.Join(work, ".stdin")
	if err := os.WriteFile(path, []byte(stdin), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = saved }()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, f, &out, &errOut)
	return out.String(), errOut.String(), code
}

// archive is a txtar archive: a comment, then sections each introduced by
// a line "-- name --" and holding the lines up to the next such line.
type archive struct {
	comment  string
	sections []section
}

type section struct{ name, data string }

// parseArchive splits data at its marker lines.
func parseArchive(data []byte) *archive {
	a := &archive{}
	cur := &a.comment
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if name, ok := markerName(line); ok {
			a.sections = append(a.sections, section{name: name})
			cur = &a.sections[len(a.sections)-1].data
			continue
		}
		*cur += line
	}
	return a
}

// markerName returns the name of a marker line "-- name --".
func markerName(line string) (string, bool) {
	line = strings.TrimSuffix(line, "\n")
	if !strings.HasPrefix(line, "-- ") || !strings.HasSuffix(line, " --") || len(line) < len("-- x --") {
		return "", false
	}
	name := strings.TrimSpace(line[3 : len(line)-3])
	return name, name != ""
}

func (a *archive) get(name string) (string, bool) {
	for _, s := range a.sections {
		if s.name == name {
			return s.data, true
		}
	}
	return "", false
}

// set replaces (or appends) a section. Data an archive cannot hold back
// unchanged (no final newline, a line that reads as a marker) is an error:
// a golden file must say exactly what the command wrote.
func (a *archive) set(name, data string) error {
	if data != "" && !strings.HasSuffix(data, "\n") {
		return fmt.Errorf("output does not end with a newline: %q", data)
	}
	for _, line := range strings.SplitAfter(data, "\n") {
		if _, ok := markerName(line); ok {
			return fmt.Errorf("output line %q reads as a section marker", line)
		}
	}
	for i := range a.sections {
		if a.sections[i].name == name {
			a.sections[i].data = data
			return nil
		}
	}
	a.sections = append(a.sections, section{name, data})
	return nil
}

// format writes the archive back.
func (a *archive) format() []byte {
	var b strings.Builder
	b.WriteString(a.comment)
	for _, s := range a.sections {
		fmt.Fprintf(&b, "-- %s --\n%s", s.name, s.data)
	}
	return []byte(b.String())
}

// Every command has a help case, so that its help (examples, EXIT STATUS)
// is golden too.
func TestCLIHelpCases(t *testing.T) {
	for _, c := range newRootCommand().Commands() {
		if c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		if _, err := os.Stat(filepath.Join("testdata", "cli", "help-"+c.Name()+".txtar")); err != nil {
			t.Errorf("heapest %s has no help case: %v", c.Name(), err)
		}
	}
}

func TestArchiveRoundTrip(t *testing.T) {
	in := "what this checks\n-- args --\nreport x\n-- stdin --\n-- stdout --\na\n-- b --\n\n-- exit --\n0\n"
	a := parseArchive([]byte(in))
	if a.comment != "what this checks\n" || len(a.sections) != 5 {
		t.Fatalf("%q: %+v", in, a)
	}
	if d, _ := a.get("stdout"); d != "a\n" {
		t.Errorf("stdout %q", d)
	}
	if d, _ := a.get("b"); d != "\n" {
		t.Errorf("b %q", d)
	}
	if out := string(a.format()); out != in {
		t.Errorf("format:\n%q\nwant\n%q", out, in)
	}
	if err := a.set("stdout", "no newline"); err == nil {
		t.Error("set accepted output without a final newline")
	}
	if err := a.set("stdout", "x\n-- exit --\n"); err == nil {
		t.Error("set accepted a marker line")
	}
}
