// Command rate0 samples its heap every 64 KiB, keeps 4 MiB live in
// keepBig, then sets runtime.MemProfileRate to 0 (as a program that stops
// profiling does) and writes its heap profile to heap.pb.gz: Go writes
// that profile with Period 0 and its values unscaled, the raw samples.
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
	f, err := os.Create("heap.pb.gz")
	if err != nil {
		panic(err)
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		panic(err)
	}
	f.Close()
	runtime.KeepAlive(live)
}
