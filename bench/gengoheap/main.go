// Command gengoheap writes a real Go heap profile with many samples, for
// benchmarking heapest against `go tool pprof -top`: it allocates from
// 2^depth distinct call stacks (a binary tree of two non-inlined functions)
// with runtime.MemProfileRate set low enough that nearly every allocation is
// sampled, keeps one in live of them, and writes pprof.Lookup("heap").
//
//	gengoheap [-depth 17] [-rate 512] [-live 16] -o heap.pb.gz
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// objSize is large next to the default rate, so each stack is sampled with
// probability 1-exp(-objSize/rate), about 1 at rate 512.
const objSize = 4096

var (
	live  [][]byte
	every int
	count int
	sink  []byte
)

func alloc() {
	b := make([]byte, objSize)
	count++
	if count%every == 0 {
		live = append(live, b)
	} else {
		sink = b
	}
}

// left and right build the distinct stacks: each level of the recursion
// calls one or the other according to one bit of the path.
//
//go:noinline
func left(depth int, path uint32) { step(depth, path) }

//go:noinline
func right(depth int, path uint32) { step(depth, path) }

//go:noinline
func step(depth int, path uint32) {
	if depth == 0 {
		alloc()
		return
	}
	if path&1 == 0 {
		left(depth-1, path>>1)
	} else {
		right(depth-1, path>>1)
	}
}

func main() {
	depth := flag.Int("depth", 17, "recursion depth: 2^depth distinct stacks")
	rate := flag.Int("rate", 512, "runtime.MemProfileRate in bytes")
	flag.IntVar(&every, "live", 16, "keep one allocation in this many live")
	out := flag.String("o", "", "output file (required)")
	flag.Parse()
	if *out == "" || *depth < 1 || *depth > 24 || *rate < 1 || every < 1 {
		flag.Usage()
		os.Exit(2)
	}
	runtime.MemProfileRate = *rate
	for p := uint32(0); p < 1<<*depth; p++ {
		step(*depth, p)
	}
	runtime.GC()
	runtime.GC()
	f, err := os.Create(*out)
	if err == nil {
		err = pprof.Lookup("heap").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gengoheap:", err)
		os.Exit(1)
	}
	runtime.KeepAlive(live)
}
