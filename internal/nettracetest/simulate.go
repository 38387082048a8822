package nettracetest

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// SamplingRate is the runtime's mean sampling period: p = 1/102400 per byte.
const SamplingRate = 102400

// TypeSpec is one type a simulated program allocates.
type TypeSpec struct {
	Name string
	// Size is the object size in bytes. When MaxSize > Size, each object's
	// size is uniform in [Size, MaxSize], rounded up to 8 (arrays).
	Size, MaxSize uint64
	// Objects is how many objects of the type each thread allocates.
	Objects int
}

// Workload is a simulated allocating program.
type Workload struct {
	Seed    uint64
	Threads int // default 1
	Types   []TypeSpec
	// Batch is how many consecutive objects of one type a thread allocates
	// before the program moves on (default 64), interleaving types and
	// threads.
	Batch int
	// Depth is the number of frames between each type's allocating method
	// and Sim.Worker.Run (default 0: three-frame stacks). Real .NET stacks
	// are tens of frames deep; benchmarks use it to weigh stack blocks
	// realistically.
	Depth int
}

// Truth is what a simulated program really allocated and what its trace
// holds, per type.
type Truth struct {
	// Bytes and Objects are the true allocations.
	Bytes, Objects map[string]float64
	// Samples counts the AllocationSampled events written.
	Samples map[string]int
	// Offset is Σ(ObjectSize − SampledByteOffset) over the sampled objects:
	// the .NET design's u.
	Offset map[string]float64
	// Method is the name the leaf frame of each type's events resolves to.
	Method map[string]string
	// TotalBytes is the sum of Bytes.
	TotalBytes float64
	// Events is the number of AllocationSampled events.
	Events int
	// Runs are the allocations in program order, for truths over time
	// windows: events of a run carry its Time.
	Runs []Run
}

// Run is a batch of allocations of one type on one thread at one time.
type Run struct {
	// Time is in nanoseconds since the trace start, as a reader reports it.
	Time           int64
	Type           string
	Thread         uint64
	Bytes, Objects float64
}

// Code layout of the simulated program: one allocating method per type,
// plus Sim.Worker.Run and Sim.Program.Main that call them.
const (
	codeBase   = 0x7ff800001000
	codeBase32 = 0x10001000 // for 4-byte pointers
	methodSpan = 0x1000
	methodSize = 0x400
	moduleID   = 0x7ff8aa000000
)

type simMethod struct {
	ns, name string
	start    uint64
}

// Simulate runs the workload through the runtime's sampler (per thread,
// independent Bernoulli trials with p = 1/102400 on every byte, stopping at
// an object's first success; the object's remaining bytes are not tried)
// and writes one AllocationSampled event per sampled object, with its
// stack, plus method and module events that name the frames.
func Simulate(wl Workload, opt Options) ([]byte, Truth) {
	opt = opt.withDefaults()
	threads := max(wl.Threads, 1)
	batch := wl.Batch
	if batch <= 0 {
		batch = 64
	}
	rng := rand.New(rand.NewPCG(wl.Seed, 0x6e657474726163))
	t := Truth{Bytes: map[string]float64{}, Objects: map[string]float64{}, Samples: map[string]int{},
		Offset: map[string]float64{}, Method: map[string]string{}}

	base := uint64(codeBase)
	if opt.PointerSize == 4 {
		base = codeBase32
	}
	methods := make([]simMethod, len(wl.Types)+2)
	for i, ty := range wl.Types {
		methods[i] = simMethod{"Sim.Allocators", fmt.Sprintf("Make%d", i), base + uint64(i)*methodSpan}
		t.Method[ty.Name] = methods[i].ns + "." + methods[i].name
	}
	run := &methods[len(wl.Types)]
	main := &methods[len(wl.Types)+1]
	*run = simMethod{"Sim.Worker", "Run", base + uint64(len(wl.Types))*methodSpan}
	*main = simMethod{"Sim.Program", "Main", base + uint64(len(wl.Types)+1)*methodSpan}
	// Layers are placed after Main, so that Depth 0 writes what it always did.
	layers := make([]simMethod, max(wl.Depth, 0))
	for k := range layers {
		layers[k] = simMethod{"Sim.Layers", fmt.Sprintf("Step%d", k), base + uint64(len(wl.Types)+2+k)*methodSpan}
	}
	stacks := make([][]uint64, len(wl.Types))
	for j := range stacks {
		s := []uint64{methods[j].start + 0x40}
		for k := range layers {
			s = append(s, layers[(j+k)%len(layers)].start+0x80)
		}
		stacks[j] = append(s, run.start+0x100, main.start+0x100)
	}

	w := NewWriter(opt)
	now := opt.SyncTicks + 1
	w.Write(Event{Provider: RuntimeProvider, ID: 152, Version: 1, Thread: 1, Time: now,
		Payload: Module(moduleID, moduleID+1, `C:\sim\Sim.dll`)})
	for _, m := range append(methods[:len(wl.Types):len(wl.Types)], layers...) {
		w.Write(Event{Provider: RuntimeProvider, ID: 143, Version: 1, Thread: 1, Time: now,
			Payload: Method(m.start, moduleID, m.start, methodSize, m.ns, m.name, "void ()")})
	}

	// Each thread's remaining objects per type, and its sampler state:
	// the number of failing trials before its next success.
	left := make([][]int, threads)
	trials := make([]uint64, threads)
	for i := range left {
		left[i] = make([]int, len(wl.Types))
		for j, ty := range wl.Types {
			left[i][j] = ty.Objects
		}
		trials[i] = geometric(rng)
	}
	var addr uint64 = 0x20000000000
	for th := 0; ; th = (th + 1) % threads {
		j := pickType(rng, left[th])
		if j < 0 {
			if allDone(left) {
				break
			}
			continue
		}
		ty := wl.Types[j]
		n := min(batch, left[th][j])
		left[th][j] -= n
		tid := uint64(1000 + th)
		stack := stacks[j]
		emit := func(size, offset uint64) {
			t.Samples[ty.Name]++
			t.Offset[ty.Name] += float64(size - offset)
			t.Events++
			w.Write(Event{Provider: RuntimeProvider, ID: 303, Thread: tid, Time: now, Stack: stack,
				Payload: AllocationSampled(opt.PointerSize, kindOf(size), 0x7ffe00000000+uint64(j)*0x40, ty.Name, addr, size, offset)})
		}
		var bytes uint64
		if ty.MaxSize <= ty.Size {
			bytes = sampleFixed(rng, &trials[th], ty.Size, n, emit)
		} else {
			for range n {
				z := ty.Size + rng.Uint64N(ty.MaxSize-ty.Size+1)
				z = (z + 7) &^ 7
				bytes += z
				sampleObject(rng, &trials[th], z, emit)
			}
		}
		t.Bytes[ty.Name] += float64(bytes)
		t.Objects[ty.Name] += float64(n)
		t.Runs = append(t.Runs, Run{Time: nanos(now-opt.SyncTicks, opt.Freq), Type: ty.Name,
			Thread: tid, Bytes: float64(bytes), Objects: float64(n)})
		t.TotalBytes += float64(bytes)
		addr += bytes
		now += int64(bytes/100) + 1 // 1 GB/s at 10 MHz
	}

	for _, m := range methods[len(wl.Types):] {
		w.Write(Event{Provider: RundownProvider, ID: 144, Version: 1, Thread: 1, Time: now,
			Payload: Method(m.start, moduleID, m.start, methodSize, m.ns, m.name, "void ()")})
	}
	w.Write(Event{Provider: RundownProvider, ID: 154, Version: 1, Thread: 1, Time: now,
		Payload: Module(moduleID, moduleID+1, `C:\sim\Sim.dll`)})
	return w.Finish(), t
}

// nanos converts ticks to nanoseconds.
func nanos(ticks, freq int64) int64 {
	if 1_000_000_000%freq == 0 {
		return ticks * (1_000_000_000 / freq)
	}
	return int64(float64(ticks) * 1e9 / float64(freq))
}

// sampleObject runs the trials of one object of z bytes.
func sampleObject(rng *rand.Rand, trials *uint64, z uint64, emit func(size, offset uint64)) {
	if *trials >= z {
		*trials -= z
		return
	}
	emit(z, *trials)
	*trials = geometric(rng)
}

// sampleFixed runs n objects of z bytes, skipping whole unsampled objects
// at once, and returns the bytes allocated.
func sampleFixed(rng *rand.Rand, trials *uint64, z uint64, n int, emit func(size, offset uint64)) uint64 {
	for k := uint64(n); k > 0; {
		skip := min(*trials/z, k) // objects whose every byte fails
		*trials -= skip * z
		k -= skip
		if k == 0 {
			break
		}
		emit(z, *trials)
		*trials = geometric(rng)
		k--
	}
	return uint64(n) * z
}

// geometric draws the number of failing trials before a success,
// p = 1/102400, by inverting the CDF as the runtime does.
func geometric(rng *rand.Rand) uint64 {
	return uint64(math.Floor(math.Log1p(-rng.Float64()) / math.Log1p(-1.0/SamplingRate)))
}

// kindOf is the AllocationKind the runtime reports: large objects (85,000
// bytes or more) go to the large object heap.
func kindOf(size uint64) uint32 {
	if size >= 85000 {
		return 1
	}
	return 0
}

// pickType chooses a type the thread still has objects of, or -1.
func pickType(rng *rand.Rand, left []int) int {
	n := 0
	for _, l := range left {
		if l > 0 {
			n++
		}
	}
	if n == 0 {
		return -1
	}
	k := rng.IntN(n)
	for j, l := range left {
		if l > 0 {
			if k == 0 {
				return j
			}
			k--
		}
	}
	return -1
}

func allDone(left [][]int) bool {
	for _, l := range left {
		for _, n := range l {
			if n > 0 {
				return false
			}
		}
	}
	return true
}
