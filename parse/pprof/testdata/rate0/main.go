// Command rate0 samples its heap every 64 KiB, keeps 4 MiB live in
// keepBig, then sets runtime.MemProfileRate to 0 (as a program that stops
// profiling does) and writes its heap profile to heap.pb.gz and, as text,
// heap.txt: Go writes them with Period 0 ("@ heap/0") and their values
// unscaled, the raw samples.
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

func main() {
	runtime.MemProfileRate = 64 << 10
	keepBig()
	runtime.GC()
	runtime.MemProfileRate = 0
	write("heap.pb.gz", 0)
	write("heap.txt", 1)
	runtime.KeepAlive(live)
}

// write writes the heap profile to path, as a proto (debug 0) or as text
// (debug 1).
func write(path string, debug int) {
	f, err := os.Create(path)
	if err != nil {
		panic(err)
	}
	if err := pprof.Lookup("heap").WriteTo(f, debug); err != nil {
		panic(err)
	}
	f.Close()
}
