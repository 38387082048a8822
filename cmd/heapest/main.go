// Command heapest reads sampled heap profiles (jemalloc dumps, pprof protos,
// .NET nettrace, JFR), unbiases every sample, aggregates, and prints every
// estimate with a confidence interval.
package main

import (
	"context"
	"fmt"
	"os"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	cmd := newRootCommand()
	err := cmd.ExecuteContext(context.Background())
	code := exitCode(err)
	if err != nil && code != exitGateFailed {
		fmt.Fprintln(os.Stderr, "heapest:", err)
	}
	os.Exit(code)
}
