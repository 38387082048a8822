// Command gohidden is hidden.c's twin on the Go runtime (issue 10;
// e2e/hidden_test.go): rows that hide sizes from the sampler, with a
// known truth.
//
// Usage: gohidden SCENARIO ROWS RATE PROFILE DEBUG
//
// runtime.MemProfileRate is RATE (R). Row i is main.site reached through
// main.nest recursing 3+i times, so `heapest report --by stack` gives one
// row per i (the number of main.nest frames). Scenarios, per row, all
// kept live until the profile is written:
//
//	hidden-0.1R … hidden-2R  3 × 8R plus 64 B objects worth f·R
//	size-class               in turn 6 × 2R + 2 × 8R, 2R + 4R, and 32 B +
//	                         64 B objects expecting 2 samples each
//
// The profile is the runtime's heap profile (DEBUG 0: proto, 1: legacy
// text). On stdout, one JSON line: per row its depth and, per size, the
// objects allocated and how many of them the runtime sampled
// (runtime.MemProfile, whose records are per stack and size): the sizes
// a row's object count is conditional on.
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
)

type part struct {
	Size    int   `json:"usize"`
	Count   int   `json:"count"`
	Sampled int64 `json:"sampled"`
}

type row struct {
	Depth int    `json:"depth"`
	Sizes []part `json:"sizes"`
}

// live keeps every allocation until the profile is written; main sizes
// it before any row allocates, so that growing it adds no stack.
var live [][]byte

// site is every row's leaf: it allocates the row's sizes in turn, 64
// at a time, so that no size always meets the sampler first.
//
//go:noinline
func site(r *row) {
	left := make([]int, len(r.Sizes))
	for k, p := range r.Sizes {
		left[k] = p.Count
	}
	for more := true; more; {
		more = false
		for k, p := range r.Sizes {
			for b := 0; b < 64 && left[k] > 0; b++ {
				live = append(live, make([]byte, p.Size))
				left[k]--
			}
			more = more || left[k] > 0
		}
	}
}

// nest recurses depth times before the row's allocations.
//
//go:noinline
func nest(depth int, r *row) int {
	if depth <= 1 {
		site(r)
		return 1
	}
	return nest(depth-1, r) + 1
}

func main() {
	if len(os.Args) != 6 {
		fmt.Fprintln(os.Stderr, "usage: gohidden SCENARIO ROWS RATE PROFILE DEBUG")
		os.Exit(2)
	}
	nrows, err1 := strconv.Atoi(os.Args[2])
	rate, err2 := strconv.Atoi(os.Args[3])
	dbg, err3 := strconv.Atoi(os.Args[5])
	if err1 != nil || err2 != nil || err3 != nil || nrows < 1 || rate < 1 {
		fmt.Fprintln(os.Stderr, "gohidden: bad ROWS, RATE or DEBUG")
		os.Exit(2)
	}
	runtime.MemProfileRate = rate
	expecting := func(s float64, z int) int {
		return int(math.Round(s / -math.Expm1(-float64(z)/float64(rate))))
	}
	var f float64
	switch os.Args[1] {
	case "hidden-0.1R":
		f = 0.1
	case "hidden-0.5R":
		f = 0.5
	case "hidden-1R":
		f = 1
	case "hidden-2R":
		f = 2
	case "size-class":
	default:
		fmt.Fprintln(os.Stderr, "gohidden: unknown scenario", os.Args[1])
		os.Exit(2)
	}
	rows := make([]row, nrows)
	total := 0
	for i := range rows {
		r := &rows[i]
		r.Depth = 3 + i
		switch {
		case f > 0:
			r.Sizes = []part{{Size: 64, Count: int(math.Round(f * float64(rate) / 64))}, {Size: 8 * rate, Count: 3}}
		case i%3 == 0:
			r.Sizes = []part{{Size: 2 * rate, Count: 6}, {Size: 8 * rate, Count: 2}}
		case i%3 == 1:
			r.Sizes = []part{{Size: 2 * rate, Count: 1}, {Size: 4 * rate, Count: 1}}
		default:
			r.Sizes = []part{{Size: 32, Count: expecting(2, 32)}, {Size: 64, Count: expecting(2, 64)}}
		}
		for _, p := range r.Sizes {
			total += p.Count
		}
	}
	live = make([][]byte, 0, total)
	for i := range rows {
		nest(rows[i].Depth, &rows[i])
	}
	// Publish every allocation to the profile, then keep the GC from
	// running between the profile and runtime.MemProfile.
	runtime.GC()
	debug.SetGCPercent(-1)
	out, err := os.Create(os.Args[4])
	if err == nil {
		err = pprof.Lookup("heap").WriteTo(out, dbg)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gohidden:", err)
		os.Exit(1)
	}
	sampled(rows)
	if err := json.NewEncoder(os.Stdout).Encode(struct {
		Rate int   `json:"rate"`
		Rows []row `json:"rows"`
	}{rate, rows}); err != nil {
		fmt.Fprintln(os.Stderr, "gohidden:", err)
		os.Exit(1)
	}
	runtime.KeepAlive(live)
}

// sampled fills in, per row and size, the objects the runtime sampled:
// its records whose stack holds depth main.nest frames.
func sampled(rows []row) {
	n, _ := runtime.MemProfile(nil, true)
	recs := make([]runtime.MemProfileRecord, n+64)
	n, ok := runtime.MemProfile(recs, true)
	if !ok {
		fmt.Fprintln(os.Stderr, "gohidden: runtime.MemProfile grew")
		os.Exit(1)
	}
	byDepth := map[int]*row{}
	for i := range rows {
		byDepth[rows[i].Depth] = &rows[i]
	}
	for _, rec := range recs[:n] {
		depth, site := 0, false
		frames := runtime.CallersFrames(rec.Stack())
		for {
			fr, more := frames.Next()
			depth += strings.Count(fr.Function+"|", "main.nest|")
			site = site || fr.Function == "main.site"
			if !more {
				break
			}
		}
		r := byDepth[depth]
		if !site || r == nil || rec.AllocObjects == 0 {
			continue
		}
		size := int(rec.AllocBytes / rec.AllocObjects)
		for k := range r.Sizes {
			if r.Sizes[k].Size == size {
				r.Sizes[k].Sampled += rec.AllocObjects
			}
		}
	}
}
