// Command heapest reads sampled heap profiles (jemalloc dumps, pprof protos,
// .NET nettrace, JFR), unbiases every sample, aggregates, and prints every
// estimate with a confidence interval.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	if os.Getenv("GOGC") == "" {
		// Almost everything heapest allocates lives to the end (records,
		// frames, groups), so collections free little: running them less
		// often saved a fifth of the time on a 1.5 MB jemalloc dump, and
		// peak RSS stayed within 3% on every bench/ input.
		debug.SetGCPercent(400)
	}
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes one command line and returns its exit status: the whole
// program but for the process around it, so that tests run exactly what
// users run, in-process.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := newRootCommand()
	cmd.SetArgs(args)
	cmd.SetIn(stdin)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	err := cmd.ExecuteContext(ctx)
	code := exitCode(err)
	if err != nil && code != exitGateFailed {
		// A failed gate has explained itself on standard output.
		fmt.Fprintln(stderr, "heapest:", err)
	}
	return code
}
