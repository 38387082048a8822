// Command gogate writes one Go heap profile with a known truth, for
// heapest's gate and diff tests (e2e/gate_test.go).
//
// Usage: gogate PROFILE FACTOR SEED RATE
//
// runtime.MemProfileRate is set to RATE, and four sites keep their
// allocations live until the profile is written:
//
//	main.siteGrow   FACTOR x 10 MiB of 4000-byte objects (the site a change grows)
//	main.siteSmall  2 MiB of 32-byte objects
//	main.siteMid    4 MiB of 4 KiB objects
//	main.siteLarge  8 objects of 1 MiB
//
// Before them, SEED picks a number of short-lived allocations of random
// sizes, dropped and collected: they move the sampler's countdown without
// changing what is live, so the truth depends on FACTOR alone. (The
// runtime draws its sampling countdown from a generator seeded anew in
// each process anyway; the seed only adds to that.)
//
// The truth (live bytes and objects per site function, bytes in the
// runtime's size classes, which is what the profile counts) is printed as
// one JSON line on stdout.
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
)

// kept holds the live objects. It is a global array, not a slice grown on
// the heap: a heap slice would be live memory at a site of its own, and
// one whose size changed with FACTOR.
var (
	kept  [1 << 17][]byte
	nkept int
)

type site struct {
	LiveBytes   int64 `json:"live_bytes"`
	LiveObjects int64 `json:"live_objects"`
}

var truth = map[string]*site{"main.siteGrow": {}, "main.siteSmall": {}, "main.siteMid": {}, "main.siteLarge": {}}

// keep keeps b live and counts it in the truth of site name, at the
// object's size class size.
func keep(name string, b []byte, class int64) {
	if nkept == len(kept) {
		fmt.Fprintln(os.Stderr, "gogate: too many objects")
		os.Exit(1)
	}
	b[0] = 1
	kept[nkept] = b
	nkept++
	s := truth[name]
	s.LiveBytes += class
	s.LiveObjects++
}

var sink []byte

// classSize is the bytes the runtime takes (and its heap profile counts)
// for an allocation of z bytes: its size class, or whole pages for a large
// object. It is measured, from the allocation counter of the runtime's own
// statistics, rather than copied from the runtime's size-class table.
func classSize(z int) int64 {
	const n = 64
	for range 5 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range n {
			sink = make([]byte, z)
		}
		runtime.ReadMemStats(&after)
		sink = nil
		d := int64(after.TotalAlloc - before.TotalAlloc)
		if after.Mallocs-before.Mallocs == n && d%n == 0 && d/n >= int64(z) {
			return d / n
		}
	}
	fmt.Fprintf(os.Stderr, "gogate: cannot measure the size class of %d bytes\n", z)
	os.Exit(1)
	return 0
}

// One function per site, never inlined, each allocating itself: each is
// the leaf of its stacks.

//go:noinline
func siteGrow(n int, class int64) {
	for range n {
		keep("main.siteGrow", make([]byte, 4000), class)
	}
}

//go:noinline
func siteSmall(n int, class int64) {
	for range n {
		keep("main.siteSmall", make([]byte, 32), class)
	}
}

//go:noinline
func siteMid(n int, class int64) {
	for range n {
		keep("main.siteMid", make([]byte, 4096), class)
	}
}

//go:noinline
func siteLarge(n int, class int64) {
	for range n {
		keep("main.siteLarge", make([]byte, 1<<20), class)
	}
}

// churn allocates and drops garbage: first 16 periods' worth, as the
// countdown to the next sample was drawn at the default rate and outlives
// 16 of its means once in nine million; then SEED's random number of
// objects of random sizes.
//
//go:noinline
func churn(rng *rand.Rand, rate int) {
	for range 16 * max(rate, 512*1024) / 8192 {
		sink = make([]byte, 8192)
	}
	for range rng.IntN(4001) {
		sink = make([]byte, 16+rng.IntN(16384-16+1))
	}
	sink = nil
}

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: gogate PROFILE FACTOR SEED RATE")
		os.Exit(2)
	}
	path := os.Args[1]
	factor, err := strconv.ParseFloat(os.Args[2], 64)
	if err != nil || !(factor > 0 && factor <= 20) {
		fmt.Fprintln(os.Stderr, "gogate: FACTOR must be in (0, 20]")
		os.Exit(2)
	}
	seed, err1 := strconv.ParseUint(os.Args[3], 10, 64)
	rate, err2 := strconv.Atoi(os.Args[4])
	if err1 != nil || err2 != nil || rate <= 0 {
		fmt.Fprintln(os.Stderr, "usage: gogate PROFILE FACTOR SEED RATE")
		os.Exit(2)
	}
	// The collector runs only where main calls it: left to itself it
	// would run dozens of times over the churned garbage, each time
	// scanning kept, most of the program's time and nothing the profile
	// needs.
	debug.SetGCPercent(-1)
	runtime.MemProfileRate = rate
	growClass, smallClass, midClass, largeClass := classSize(4000), classSize(32), classSize(4096), classSize(1<<20)
	churn(rand.New(rand.NewPCG(seed, 2)), rate)
	runtime.GC()
	siteGrow(int(math.Round(factor*(10<<20)/4000)), growClass)
	siteSmall((2<<20)/32, smallClass)
	siteMid((4<<20)/4096, midClass)
	siteLarge(8, largeClass)
	// The heap profile is as of the last completed cycle, and a cycle's
	// allocations are published by the ones after it.
	for range 3 {
		runtime.GC()
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gogate:", err)
		os.Exit(1)
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "gogate:", err)
		os.Exit(1)
	}
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "gogate:", err)
		os.Exit(1)
	}
	line, _ := json.Marshal(map[string]any{"dump": path, "rate": rate, "factor": factor, "sites": truth})
	fmt.Println(string(line))
	runtime.KeepAlive(&kept)
}
