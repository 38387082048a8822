package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBinaryOutput: pprof and Parquet output go to standard output when it
// is a file or a pipe (as pprof's -proto writes), and are refused with a
// hint when it is a terminal.
func TestBinaryOutput(t *testing.T) {
	dump := "../../testdata/jemalloc/mixed_symbolized.heap"
	fleet := "../../testdata/fleet"
	cases := []struct {
		args  []string
		what  string // the refusal's start
		magic string // the output's first bytes otherwise
	}{
		{[]string{"report", "--format", "pprof", dump}, "--format pprof writes a binary profile", "\x1f\x8b"},
		{[]string{"merge", fleet}, "--format pprof writes a binary profile", "\x1f\x8b"},
		{[]string{"diff", "--format", "pprof", fleet + "/host1", fleet + "/host2"}, "--format pprof writes a binary profile", "\x1f\x8b"},
		{[]string{"report", "--format", "parquet", dump}, "--format parquet writes a binary file", "PAR1"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args[:1], " ")+" "+c.magic, func(t *testing.T) {
			out, errOut, code := runWithStdin(t, t.TempDir(), "", c.args)
			if code != 0 || !strings.HasPrefix(out, c.magic) {
				t.Errorf("%v to a file: exit %d, output %.8q, stderr %s", c.args, code, out, errOut)
			}
			saved := isTerminal
			isTerminal = func(io.Writer) bool { return true }
			defer func() { isTerminal = saved }()
			out, errOut, code = runWithStdin(t, t.TempDir(), "", c.args)
			want := "heapest: " + c.what + ", and standard output is a terminal: give -o FILE, or redirect it\n"
			if code != 2 || out != "" || errOut != want {
				t.Errorf("%v to a terminal: exit %d, output %.8q, stderr %q; want exit 2 and %q", c.args, code, out, errOut, want)
			}
		})
	}
}

// A name from the input quoted on standard error (a mapped path in a
// warning) reaches it printable: a terminal escape in it is written
// \x1b, not sent to the terminal.
func TestStderrPrintable(t *testing.T) {
	data, err := os.ReadFile("testdata/je530_threads_foreign.heap")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "esc.heap")
	evil := strings.ReplaceAll(string(data), "/opt/heaplab/t2", "/opt/heaplab/t\x1b[31m\u202e2")
	if err := os.WriteFile(path, []byte(evil), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCLI(t, "report", path)
	if code != 0 || !strings.Contains(stderr, `/opt/heaplab/t\x1b[31m\u202e2`) || strings.ContainsAny(stderr, "\x1b\u202e") {
		t.Errorf("exit %d, stderr %q: want the path's escapes written out", code, stderr)
	}
}

// A file name with a line break or a byte that is not UTF-8 is written
// printable in the report's header too, as in its rows: it cannot split
// the "File:" line in two.
func TestHeaderPrintable(t *testing.T) {
	data, err := os.ReadFile("../../testdata/jemalloc/mixed_symbolized.heap")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "new\nline\xff.heap")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code := runCLI(t, "report", "--top", "1", path)
	first, _, _ := strings.Cut(out, "\n")
	if code != 0 || !strings.Contains(first, `new\x0aline\xff.heap (jemalloc`) {
		t.Errorf("exit %d, first line %q: want the name's line break and byte written out", code, first)
	}
}

// failingWriter fails every write, as /dev/full does.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// Help cobra writes without looking at the error still fails the run
// when standard output cannot take it.
func TestHelpWriteError(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"help", "report"}, {"report", "--help"}, {}} {
		var errOut bytes.Buffer
		code := run(context.Background(), args, strings.NewReader(""), failingWriter{}, &errOut)
		if want := "heapest: writing standard output: no space left on device\n"; code != 2 || errOut.String() != want {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", args, code, errOut.String(), want)
		}
	}
}
