// Command go-heap is a Go program with a known heap, for heapest's real-data
// tests: it sets runtime.MemProfileRate, allocates from several call sites
// with sizes that are exact size classes (so the profile's rounded slot
// sizes equal the requested sizes), keeps a known part of it live, and
// writes the runtime's heap profile. On stdout it prints, as JSON, the true
// live and allocated totals per call site and the runtime's own raw sample
// counts (runtime.MemProfile), against which a parser's recovered counts can
// be checked exactly.
//
// Usage: go-heap -rate 65536 -o heap.pb.gz [-debug 1] [-seed 7]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
)

// site is one allocating call site: it allocates count objects of each of
// its sizes and keeps one in keepEvery live.
type site struct {
	name      string
	fn        func(size int) []byte
	sizes     []int
	bytes     int // bytes allocated per size
	keepEvery int
}

// Each call site is its own non-inlined function so that it is the leaf
// frame of its samples (the runtime hides its own frames).

//go:noinline
func allocSmall(n int) []byte { return make([]byte, n) }

//go:noinline
func allocMedium(n int) []byte { return make([]byte, n) }

//go:noinline
func allocLarge(n int) []byte { return make([]byte, n) }

//go:noinline
func allocHuge(n int) []byte { return make([]byte, n) }

//go:noinline
func allocMixed(n int) []byte { return make([]byte, n) }

//go:noinline
func allocFreed(n int) []byte { return make([]byte, n) }

var sites = []site{
	{"main.allocSmall", allocSmall, []int{64}, 24 << 20, 3},
	{"main.allocMedium", allocMedium, []int{1024}, 24 << 20, 2},
	{"main.allocLarge", allocLarge, []int{20480}, 32 << 20, 4},
	{"main.allocHuge", allocHuge, []int{311296}, 48 << 20, 2},
	{"main.allocMixed", allocMixed, []int{128, 4096}, 16 << 20, 2},
	{"main.allocFreed", allocFreed, []int{512}, 8 << 20, 0},
}

// live holds what the program keeps: the true in-use heap of each site.
var live [][]byte

type siteTruth struct {
	Func         string `json:"func"`
	LiveObjects  int64  `json:"live_objects"`
	LiveBytes    int64  `json:"live_bytes"`
	AllocObjects int64  `json:"alloc_objects"`
	AllocBytes   int64  `json:"alloc_bytes"`
}

type record struct {
	Funcs        []string `json:"funcs"`
	AllocObjects int64    `json:"alloc_objects"`
	AllocBytes   int64    `json:"alloc_bytes"`
	InUseObjects int64    `json:"inuse_objects"`
	InUseBytes   int64    `json:"inuse_bytes"`
}

type output struct {
	Rate    int         `json:"rate"`
	Sites   []siteTruth `json:"sites"`
	Records []record    `json:"records"`
}

func main() {
	rate := flag.Int("rate", 512*1024, "runtime.MemProfileRate")
	out := flag.String("o", "heap.pb.gz", "heap profile to write")
	dbg := flag.Int("debug", 0, "pprof debug level (0 proto, 1 legacy text)")
	seed := flag.Int64("seed", 1, "seed of the interleaving order")
	flag.Parse()
	runtime.MemProfileRate = *rate

	// Only the collection below runs: the same sampling, 40% less CPU a
	// run (the e2e tests make 200), and none between profile and MemProfile.
	debug.SetGCPercent(-1)
	truth := allocate(rand.New(rand.NewSource(*seed)))
	runtime.GC() // publishes every allocation and free to the profile

	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := pprof.Lookup("heap").WriteTo(f, *dbg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	res := output{Rate: *rate, Sites: truth, Records: memProfile()}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	runtime.KeepAlive(live)
}

// allocate runs every site, interleaving them in random order so that no
// site always meets the sampler in the same state.
func allocate(rng *rand.Rand) []siteTruth {
	type job struct{ site, size, left int }
	var jobs []*job
	truth := make([]siteTruth, len(sites))
	for i, s := range sites {
		truth[i].Func = s.name
		for _, z := range s.sizes {
			jobs = append(jobs, &job{i, z, s.bytes / z})
		}
	}
	counter := make([]int, len(sites))
	for len(jobs) > 0 {
		k := rng.Intn(len(jobs))
		j := jobs[k]
		s := &sites[j.site]
		for b := 0; b < 64 && j.left > 0; b++ {
			p := s.fn(j.size)
			j.left--
			t := &truth[j.site]
			t.AllocObjects++
			t.AllocBytes += int64(j.size)
			counter[j.site]++
			if s.keepEvery > 0 && counter[j.site]%s.keepEvery == 0 {
				live = append(live, p)
				t.LiveObjects++
				t.LiveBytes += int64(j.size)
			}
		}
		if j.left == 0 {
			jobs = append(jobs[:k], jobs[k+1:]...)
		}
	}
	return truth
}

// memProfile returns the runtime's raw records with their symbolized stacks.
func memProfile() []record {
	n, _ := runtime.MemProfile(nil, true)
	recs := make([]runtime.MemProfileRecord, n+64)
	n, ok := runtime.MemProfile(recs, true)
	if !ok {
		fmt.Fprintln(os.Stderr, "runtime.MemProfile: profile grew")
		os.Exit(1)
	}
	var out []record
	for _, r := range recs[:n] {
		var funcs []string
		frames := runtime.CallersFrames(r.Stack())
		for {
			fr, more := frames.Next()
			if !strings.HasPrefix(fr.Function, "runtime.") || len(funcs) > 0 {
				funcs = append(funcs, fr.Function)
			}
			if !more {
				break
			}
		}
		out = append(out, record{funcs, r.AllocObjects, r.AllocBytes, r.InUseObjects(), r.InUseBytes()})
	}
	return out
}
