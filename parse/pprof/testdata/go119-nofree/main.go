package main

import (
	"os"
	"runtime"
	"runtime/pprof"
)

var keep [][]byte

//go:noinline
func live() {
	keep = make([][]byte, 0, 200000)
	for i := 0; i < 200000; i++ {
		keep = append(keep, make([]byte, 64))
	}
}

func main() {
	live()
	runtime.GC()
	f, _ := os.Create(os.Args[1] + ".txt")
	pprof.Lookup("heap").WriteTo(f, 1)
	f.Close()
	f, _ = os.Create(os.Args[1] + ".pb.gz")
	pprof.Lookup("heap").WriteTo(f, 0)
	f.Close()
}
