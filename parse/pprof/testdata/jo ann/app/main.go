// Command app keeps 4 MiB live in keepBig and 1 MiB in keepSmall, then
// writes a heap profile to heap.pb.gz, and as debug=1 text to heap.txt.
package main

import (
	"os"
	"runtime"
	"runtime/pprof"
)

var live [][]byte

func keepBig() {
	for i := 0; i < 64; i++ {
		live = append(live, make([]byte, 64<<10))
	}
}

func keepSmall() {
	for i := 0; i < 1024; i++ {
		live = append(live, make([]byte, 1<<10))
	}
}

func main() {
	runtime.MemProfileRate = 64 << 10
	keepBig()
	keepSmall()
	runtime.GC()
	f, err := os.Create("heap.pb.gz")
	if err != nil {
		panic(err)
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		panic(err)
	}
	f.Close()
	t, err := os.Create("heap.txt")
	if err != nil {
		panic(err)
	}
	if err := pprof.Lookup("heap").WriteTo(t, 1); err != nil {
		panic(err)
	}
	t.Close()
	runtime.KeepAlive(live)
}
