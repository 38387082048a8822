// Command pprofserver is a Go program that serves net/http/pprof on a free
// port of 127.0.0.1, for heapest's URL-input test: it prints the port on
// standard output once its heap holds 16 MiB allocated by holdBuffers.
package main

import (
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"runtime"
)

// kept holds the buffers live, so that the heap profile's in-use view
// shows them.
var kept [][]byte

// holdBuffers allocates 4096 buffers of 4 KiB: the site the test looks
// for in heapest's report.
//
//go:noinline
func holdBuffers() {
	for range 4096 {
		kept = append(kept, make([]byte, 4096))
	}
}

func main() {
	// Set before the allocations it is to sample: 64 KiB gives the site
	// about 256 samples.
	runtime.MemProfileRate = 64 << 10
	holdBuffers()
	// The in-use view is the heap as of the last collection.
	runtime.GC()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "pprofserver:", err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	if err := http.Serve(ln, nil); err != nil {
		fmt.Fprintln(os.Stderr, "pprofserver:", err)
		os.Exit(1)
	}
}
