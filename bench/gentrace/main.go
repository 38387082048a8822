// Command gentrace writes a synthetic .NET EventPipe trace of
// AllocationSampled events (runtime event 303) of about a given size, for
// benchmarks: a program of many methods and types, allocating from many
// distinct stacks (a few hot, most cold) on several threads, with the
// method and module events that name the frames.
//
//	gentrace -size BYTES [-version 4] [-types 400] [-methods 4000]
//	         [-stacks 20000] [-threads 16] [-seed 1] -o app.nettrace
//
// The trace is written by the nettracetest writer and only its exported
// writer API (NewWriter, Write, Len, Finish and the payload helpers) is
// used. Events are not drawn through the runtime's sampler (nettracetest's
// Simulate does that, for tests of the estimates): a benchmark needs the
// shape and size of a real trace, not its truth.
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"

	"github.com/heapest/heapest/internal/nettracetest"
)

// Layout of the made-up program's code: one method per 4 KiB, each 1 KiB long.
const (
	codeBase   = 0x7ff800001000
	methodSpan = 0x1000
	methodSize = 0x400
	moduleID   = 0x7ff8aa000000
	// loh is the size from which the runtime reports an allocation as on
	// the large object heap (AllocationKind 1).
	loh = 85000
)

type options struct {
	size                                    int
	version                                 int
	types, methods, stacks, threads, frames int
	seed                                    uint64
}

func main() {
	var o options
	flag.IntVar(&o.size, "size", 0, "stop at about this many bytes (required)")
	flag.IntVar(&o.version, "version", 4, "NetTrace format version: 4, 5 or 6")
	flag.IntVar(&o.types, "types", 400, "distinct allocated types")
	flag.IntVar(&o.methods, "methods", 4000, "distinct methods")
	flag.IntVar(&o.stacks, "stacks", 20000, "distinct allocating stacks")
	flag.IntVar(&o.threads, "threads", 16, "allocating threads")
	flag.IntVar(&o.frames, "frames", 30, "most frames per stack")
	flag.Uint64Var(&o.seed, "seed", 1, "random seed")
	out := flag.String("o", "", "output file (required)")
	flag.Parse()
	if *out == "" || o.size < 1 || o.version < 4 || o.version > 6 || o.types < 1 || o.methods < 2 ||
		o.stacks < 1 || o.threads < 1 || o.frames < 2 {
		flag.Usage()
		os.Exit(2)
	}
	trace, events := generate(o)
	if err := os.WriteFile(*out, trace, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gentrace:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "gentrace: %s: %d bytes, %d AllocationSampled events, %d stacks, %d types\n",
		*out, len(trace), events, o.stacks, o.types)
}

// typ is one allocated type: arrays vary in size, others have one size.
type typ struct {
	name     string
	id, size uint64
	array    bool
}

// site is one distinct allocating stack (leaf first) and the type it allocates.
type site struct {
	stack []uint64
	typ   int
}

// generate returns the trace and the number of allocation events in it.
func generate(o options) ([]byte, int) {
	r := rand.New(rand.NewPCG(o.seed, 0x67656e7472616365))
	types := makeTypes(r, o.types)
	sites := makeSites(r, o)
	w := nettracetest.NewWriter(nettracetest.Options{Version: nettracetest.Version(o.version), PID: 4242})
	const start = 1_000_001 // ticks; the writer's default clock starts at 1,000,000
	now := int64(start)
	w.Write(nettracetest.Event{Provider: nettracetest.RuntimeProvider, ID: 152, Version: 1, Thread: 1,
		Time: now, Payload: nettracetest.Module(moduleID, moduleID+1, `C:\app\App.dll`)})
	for i := range o.methods {
		addr := codeBase + uint64(i)*methodSpan
		w.Write(nettracetest.Event{Provider: nettracetest.RuntimeProvider, ID: 143, Version: 1, Thread: 1,
			Time: now, Payload: nettracetest.Method(addr, moduleID, addr, methodSize,
				"App.Ns"+strconv.Itoa(i%97), "Method"+strconv.Itoa(i), "void (int32,class System.String)")})
	}
	events := 0
	addr := uint64(0x20000000000)
	for w.Len() < o.size {
		// Skewed choice: a few stacks allocate most, as in a real program.
		s := sites[r.IntN(r.IntN(len(sites))+1)]
		t := types[s.typ]
		size := t.size
		if t.array {
			size = 24 + r.Uint64N(t.size)&^7
		}
		kind := uint32(0)
		if size >= loh {
			kind = 1
		}
		now += 1 + r.Int64N(2000)
		w.Write(nettracetest.Event{Provider: nettracetest.RuntimeProvider, ID: 303, Thread: 1000 + r.Uint64N(uint64(o.threads)),
			Time: now, Stack: s.stack, Payload: nettracetest.AllocationSampled(8, kind, t.id, t.name, addr, size, r.Uint64N(size))})
		addr += size
		events++
	}
	w.Write(nettracetest.Event{Provider: nettracetest.RundownProvider, ID: 154, Version: 1, Thread: 1,
		Time: now, Payload: nettracetest.Module(moduleID, moduleID+1, `C:\app\App.dll`)})
	return w.Finish(), events
}

// makeTypes draws the types: one in eight an array of up to 16 KiB (one in
// forty up to 256 KiB, past the large object threshold), the others
// objects of 24 B to 2 KiB (log-uniform).
func makeTypes(r *rand.Rand, n int) []typ {
	ts := make([]typ, n)
	for i := range ts {
		t := typ{id: 0x7ffe00000000 + uint64(i)*0x40}
		switch {
		case i%40 == 39:
			t.array, t.size, t.name = true, 256<<10, fmt.Sprintf("App.Ns%d.Buffer%d[]", i%97, i)
		case i%8 == 7:
			t.array, t.size, t.name = true, 16<<10, fmt.Sprintf("App.Ns%d.Item%d[]", i%97, i)
		default:
			t.size = uint64(math.Exp(math.Log(24)+r.Float64()*math.Log(2048.0/24))) &^ 7
			t.name = fmt.Sprintf("App.Ns%d.Type%d", i%97, i)
		}
		ts[i] = t
	}
	return ts
}

// makeSites draws the distinct stacks: 2 to o.frames return addresses
// inside random methods, leaf first, each allocating one type.
func makeSites(r *rand.Rand, o options) []site {
	sites := make([]site, o.stacks)
	for i := range sites {
		depth := 2 + r.IntN(o.frames-1)
		st := make([]uint64, depth)
		for j := range st {
			st[j] = codeBase + r.Uint64N(uint64(o.methods))*methodSpan + 0x10 + r.Uint64N(methodSize-0x10)
		}
		sites[i] = site{stack: st, typ: r.IntN(o.types)}
	}
	return sites
}
