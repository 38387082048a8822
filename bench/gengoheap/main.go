// Command gengoheap writes a real Go heap profile with many samples, for
// benchmarking heapest against `go tool pprof -top`: it allocates from
// 2^depth distinct call stacks (a binary tree of two non-inlined functions)
// with runtime.MemProfileRate set low enough that nearly every allocation is
// sampled, keeps one in live of them, and writes pprof.Lookup("heap").
//
//	gengoheap [-depth 17] [-stacks N | -size BYTES] [-rate 512] [-live 16] -o heap.pb.gz
//
// -stacks uses the first N of the 2^depth stacks; -size uses as many as
// make the profile about BYTES long once decompressed (measured on the
// first stacks, then extrapolated: every stack has the same depth). The
// profile's sizes and number of stacks go to standard error.
package main

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
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

// calibration is how many stacks -size measures the profile on.
const calibration = 1 << 14

func main() {
	depth := flag.Int("depth", 17, "recursion depth: up to 2^depth distinct stacks")
	stacks := flag.Int("stacks", 0, "distinct stacks (0: 2^depth)")
	size := flag.Int64("size", 0, "stop at about this many bytes of decompressed profile (0: use -stacks)")
	rate := flag.Int("rate", 512, "runtime.MemProfileRate in bytes")
	flag.IntVar(&every, "live", 16, "keep one allocation in this many live")
	out := flag.String("o", "", "output file (required)")
	flag.Parse()
	if *out == "" || *depth < 1 || *depth > 24 || *stacks < 0 || *stacks > 1<<*depth ||
		*size < 0 || *rate < 1 || every < 1 {
		flag.Usage()
		os.Exit(2)
	}
	runtime.MemProfileRate = *rate
	n := uint32(1) << *depth
	if *stacks > 0 {
		n = uint32(*stacks)
	}
	var p uint32
	if *size > 0 {
		for ; p < min(calibration, n); p++ {
			step(*depth, p)
		}
		raw, _, err := profileSize()
		if err != nil {
			fail(err)
		}
		want := uint64(*size) * uint64(p) / uint64(raw)
		if want > uint64(n) {
			fail(fmt.Errorf("-size %d needs about %d stacks, more than 2^%d: raise -depth", *size, want, *depth))
		}
		n = uint32(want)
	}
	for ; p < n; p++ {
		step(*depth, p)
	}
	if err := write(*out); err != nil {
		fail(err)
	}
	raw, gz, err := profileSize()
	if err != nil {
		fail(err)
	}
	fmt.Fprintf(os.Stderr, "gengoheap: %s: %d stacks of depth %d, %d bytes (%d decompressed)\n", *out, n, *depth, gz, raw)
	runtime.KeepAlive(live)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gengoheap:", err)
	os.Exit(1)
}

// write writes the heap profile as of a fresh garbage collection (the heap
// profile shows the state at the last completed one).
func write(path string) error {
	runtime.GC()
	runtime.GC()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = pprof.Lookup("heap").WriteTo(f, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// profileSize is the heap profile's size now, decompressed and as written.
func profileSize() (raw, gz int64, err error) {
	runtime.GC()
	runtime.GC()
	var b bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&b, 0); err != nil {
		return 0, 0, err
	}
	gz = int64(b.Len())
	r, err := gzip.NewReader(&b)
	if err != nil {
		return 0, 0, err
	}
	raw, err = io.Copy(io.Discard, r)
	return raw, gz, err
}
