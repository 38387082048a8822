// Command heapest reads sampled heap profiles (jemalloc dumps, pprof protos,
// .NET nettrace, JFR), unbiases every sample, aggregates, and prints every
// estimate with a confidence interval.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/heapest/heapest/render"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes one command line and returns its exit status: the whole
// program but for the process around it, so that tests run exactly what
// users run, in-process.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	quiet.start()
	defer quiet.stop()
	cmd := newRootCommand()
	cmd.SetArgs(args)
	cmd.SetIn(stdin)
	out := &stickyWriter{w: stdout}
	cmd.SetOut(out)
	stderr = printableWriter{stderr}
	cmd.SetErr(stderr)
	err := cmd.ExecuteContext(ctx)
	if err == nil && out.err != nil {
		// cobra writes help and usage without looking at the error.
		err = fmt.Errorf("writing standard output: %w", out.err)
	}
	err = suggestReport(err, args)
	code := exitCode(err)
	if err != nil && code != exitGateFailed {
		// A failed gate has explained itself on standard output.
		fmt.Fprintln(stderr, "heapest:", err)
	}
	return code
}

// suggestReport adds to cobra's "unknown command" error, for a first
// argument that is a file (pprof's habit: "pprof FILE"), the command that
// reads it.
func suggestReport(err error, args []string) error {
	if err == nil || len(args) == 0 || !strings.HasPrefix(err.Error(), "unknown command") {
		return err
	}
	if st, serr := os.Stat(args[0]); serr != nil || st.IsDir() && !strings.ContainsRune(args[0], os.PathSeparator) {
		return err
	}
	return fmt.Errorf("%w; to read it as a profile: heapest report %s", err, strings.Join(args, " "))
}

// printableWriter writes standard error's messages with what the inputs'
// names may hold made printable (render.Printable): a warning or an error
// quotes paths and names from the input, which must not reach a terminal
// as escapes. Line breaks, returns (progress) and tabs pass.
type printableWriter struct{ w io.Writer }

func (p printableWriter) Write(b []byte) (int, error) {
	plain := true
	for _, c := range b {
		if c >= 0x7f || c < 0x20 && c != '\n' && c != '\r' && c != '\t' {
			plain = false
			break
		}
	}
	if plain {
		return p.w.Write(b)
	}
	s := string(b)
	var out strings.Builder
	for len(s) > 0 {
		i := strings.IndexAny(s, "\n\r")
		if i < 0 {
			out.WriteString(render.Printable(s))
			break
		}
		out.WriteString(render.Printable(s[:i]))
		out.WriteByte(s[i])
		s = s[i+1:]
	}
	if _, err := io.WriteString(p.w, out.String()); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Unwrap is the writer written to, for isTerminal.
func (p printableWriter) Unwrap() io.Writer { return p.w }

// stickyWriter keeps the first error writing standard output met, for
// what writes it without looking (cobra's help): "heapest help >
// /dev/full" must not exit 0.
type stickyWriter struct {
	w   io.Writer
	err error
}

func (s *stickyWriter) Write(b []byte) (int, error) {
	n, err := s.w.Write(b)
	if err != nil && s.err == nil {
		s.err = err
	}
	return n, err
}

// Unwrap is the writer written to, for isTerminal.
func (s *stickyWriter) Unwrap() io.Writer { return s.w }
