// Command gofleet writes Go heap profiles with a known truth, for
// heapest's merge tests (e2e/merge_test.go): N independent dumps from one
// process. Before each, everything the previous phase allocated is
// dropped and collected, runtime.MemProfileRate is set to the next rate
// of the list, and a burst of garbage uses up the sampler's countdown
// drawn at the old rate; then four sites allocate amounts drawn from the
// seed, and the heap profile goes to DIR/phase-<i>.pb.gz. The truth
// (live bytes and objects per site function, per dump) is printed as JSON
// lines.
//
// Usage: gofleet DIR N SEED RATE...
package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
)

var kept [][]byte

type site struct {
	LiveBytes   int64 `json:"live_bytes"`
	LiveObjects int64 `json:"live_objects"`
}

var truth map[string]*site

// keep keeps b live and counts it in the truth of site name.
func keep(name string, b []byte) {
	b[0] = 1
	kept = append(kept, b)
	s := truth[name]
	s.LiveBytes += int64(len(b))
	s.LiveObjects++
}

// One function per site, never inlined, each allocating itself: each is
// the leaf of its stacks.

//go:noinline
func siteSmall(n int) {
	for range n {
		keep("main.siteSmall", make([]byte, 32))
	}
}

//go:noinline
func siteMid(n int) {
	for range n {
		keep("main.siteMid", make([]byte, 4096))
	}
}

//go:noinline
func siteLarge(n int) {
	for range n {
		keep("main.siteLarge", make([]byte, 1<<20))
	}
}

//go:noinline
func siteMixed(n int) {
	for i := range n {
		z := 64
		if i%3 == 0 {
			z = 2048
		}
		keep("main.siteMixed", make([]byte, z))
	}
}

var sink []byte

// flush allocates and drops 16 periods' worth of garbage: the countdown
// to the next sample was drawn at the previous rate, and outlives 16 of
// its means once in nine million.
func flush(rate int) {
	for range 16 * rate / 8192 {
		sink = make([]byte, 8192)
	}
	sink = nil
}

func main() {
	if len(os.Args) < 5 {
		fmt.Fprintln(os.Stderr, "usage: gofleet DIR N SEED RATE...")
		os.Exit(2)
	}
	dir := os.Args[1]
	n, _ := strconv.Atoi(os.Args[2])
	seed, _ := strconv.ParseUint(os.Args[3], 10, 64)
	rates := os.Args[4:]
	rng := rand.New(rand.NewPCG(seed, 1))
	between := func(lo, hi int) int { return lo + rng.IntN(hi-lo+1) }
	// Only the explicit collections below run: they are what the profile
	// needs, and the ones the allocation would start (flush's above all)
	// doubled the program's CPU time, which the merge study pays 100 times.
	debug.SetGCPercent(-1)
	prev := runtime.MemProfileRate
	for i := range n {
		kept = make([][]byte, 0, 100000) // grown by append, it would be a site of its own
		rate, _ := strconv.Atoi(rates[i%len(rates)])
		runtime.MemProfileRate = rate
		flush(max(prev, rate))
		prev = rate
		runtime.GC()
		truth = map[string]*site{"main.siteSmall": {}, "main.siteMid": {}, "main.siteLarge": {}, "main.siteMixed": {}}
		siteSmall(between(10000, 40000))
		siteMid(between(100, 500))
		siteLarge(between(1, 4))
		siteMixed(between(500, 2000))
		// The heap profile is as of the last completed cycle, and a
		// cycle's allocations are published by the ones after it.
		for range 3 {
			runtime.GC()
		}
		path := filepath.Join(dir, fmt.Sprintf("phase-%d.pb.gz", i))
		f, err := os.Create(path)
		if err != nil {
			panic(err)
		}
		if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
			panic(err)
		}
		f.Close()
		line, _ := json.Marshal(map[string]any{"dump": path, "rate": rate, "sites": truth})
		fmt.Println(string(line))
		runtime.KeepAlive(kept)
	}
}
