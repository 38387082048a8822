// Command gosnap writes successive heap profiles of one Go process, for
// heapest's --latest-per-process test (e2e/merge_test.go): N times, it
// allocates 4 MB more, kept live, and writes the heap profile to
// DIR/snap-<i>.pb.gz. The snapshots' names say nothing of the process;
// their mappings ([vdso] at a randomized address) and time_nanos do.
//
// Usage: gosnap DIR N
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
)

var kept [][]byte

//go:noinline
func grow(n, size int) {
	for range n {
		kept = append(kept, make([]byte, size))
	}
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gosnap DIR N")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "gosnap:", err)
		os.Exit(2)
	}
	runtime.MemProfileRate = 64 << 10
	for i := 1; i <= n; i++ {
		grow(4096, 1024)
		runtime.GC() // the profile shows the heap as of the last collection
		f, err := os.Create(filepath.Join(os.Args[1], fmt.Sprintf("snap-%d.pb.gz", i)))
		if err == nil {
			err = pprof.Lookup("heap").WriteTo(f, 0)
		}
		if err == nil {
			err = f.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "gosnap:", err)
			os.Exit(1)
		}
	}
}
