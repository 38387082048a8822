// Command gendump writes a synthetic jemalloc heap_v2 dump for benchmarks:
// many distinct stacks whose frames are return addresses inside real
// functions of a real ELF binary (and of libjemalloc, for the allocator
// frames at the top), per-thread lines, and a MAPPED_LIBRARIES section that
// maps those files, so that jeprof and heapest both symbolize every frame.
//
//	gendump -binary PATH [-stacks 5000 | -size BYTES] [-frames 24] [-threads 16]
//	        [-lg 19] [-unbias] [-seed 1] [-middle 400] [-map-as PATH] [-jemalloc PATH]
//	        -o dump.heap
//	gendump -funcs N -map-as PATH [same options] -o dump.heap
//
// Counts are drawn per stack (one size class per stack, 1-3 threads); with
// -unbias they are written in jemalloc 5.3's prof_unbias encoding, else raw.
// -size generates stacks until the dump reaches about that many bytes.
// -map-as names another file in the program's mappings, with the same
// layout: a path that does not exist gives a dump whose program frames
// cannot be symbolized (a stripped or foreign binary); with -jemalloc ""
// as well, no frame at all symbolizes. -funcs N replaces -binary by a
// made-up program of N functions, for such dumps of programs larger than
// any binary at hand: a large program has many distinct return addresses,
// and they are what an unsymbolized report groups by. -middle sets how many
// functions make up the shared middle of the stacks. The numbers of stacks and distinct
// addresses written go to standard error, for the benchmark report.
package main

import (
	"bufio"
	"debug/elf"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
)

func main() {
	var o options
	flag.StringVar(&o.binary, "binary", "", "ELF executable the stacks point into (required)")
	flag.StringVar(&o.lib, "jemalloc", "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2",
		"libjemalloc for the allocator frames (empty: none)")
	flag.IntVar(&o.stacks, "stacks", 5000, "distinct stacks (ignored with -size)")
	flag.Int64Var(&o.size, "size", 0, "stop adding stacks at about this many bytes of dump (0: use -stacks)")
	flag.StringVar(&o.mapAs, "map-as", "", "path written for the program's mappings instead of -binary")
	flag.IntVar(&o.funcs, "funcs", 0, "made-up program of this many functions instead of -binary (needs -map-as)")
	flag.IntVar(&o.middle, "middle", 400, "functions in the pool the middle frames are drawn from")
	flag.IntVar(&o.frames, "frames", 24, "frames per stack")
	flag.IntVar(&o.threads, "threads", 16, "threads")
	flag.IntVar(&o.lg, "lg", 19, "lg_prof_sample: R = 2^lg")
	flag.BoolVar(&o.unbias, "unbias", false, "write the prof_unbias encoding (jemalloc 5.3 default)")
	flag.Uint64Var(&o.seed, "seed", 1, "random seed")
	flag.Uint64Var(&o.member, "member", 0, "one process of a fleet: the stacks of -seed, with this process's own counts (a third of the stacks absent) and library addresses, distinct for members below 2^18 (0: not a fleet)")
	out := flag.String("o", "", "output file (required)")
	flag.Parse()
	if (o.binary == "") == (o.funcs == 0) || o.funcs < 0 || o.funcs > 0 && o.mapAs == "" ||
		*out == "" || o.stacks < 1 || o.size < 0 || o.frames < 3 || o.threads < 1 ||
		o.middle < 1 || o.lg < 0 || o.lg > 40 {
		flag.Usage()
		os.Exit(2)
	}
	if err := generate(o, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gendump:", err)
		os.Exit(1)
	}
}

type options struct {
	binary, lib, mapAs          string
	stacks, frames, threads, lg int
	funcs, middle               int
	size                        int64
	unbias                      bool
	seed, member                uint64
}

// image is one ELF file placed in the synthetic address space.
type image struct {
	path  string
	base  uint64 // load bias: 0 for ET_EXEC
	loads []elf.ProgHeader
	funcs []elf.Symbol // functions with a size, in executable segments
	sites map[int][]uint64
}

// loadImage reads an ELF file's loadable segments and function symbols.
// Position-independent files are placed at base.
func loadImage(path string, base uint64, names map[string]bool) (*image, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	im := &image{path: path, sites: map[int][]uint64{}}
	if f.Type == elf.ET_DYN {
		im.base = base
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			im.loads = append(im.loads, p.ProgHeader)
		}
	}
	syms, err := f.Symbols()
	if err != nil || len(syms) == 0 {
		syms, err = f.DynamicSymbols()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: no symbol table: %v", path, err)
	}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Size < 16 || s.Value == 0 {
			continue
		}
		if names != nil && !names[s.Name] {
			continue
		}
		if im.executable(s.Value) {
			im.funcs = append(im.funcs, s)
		}
	}
	if len(im.funcs) == 0 {
		return nil, fmt.Errorf("%s: no usable function symbols", path)
	}
	sort.Slice(im.funcs, func(i, j int) bool { return im.funcs[i].Value < im.funcs[j].Value })
	return im, nil
}

// syntheticImage is a made-up non-PIE program of n functions of 32 B to
// 1 KiB (log-uniform, about 300 B on average) laid out one after the other in a text segment at
// 0x400000, as a linker would.
func syntheticImage(r *rand.Rand, n int) *image {
	const text = 0x401000
	im := &image{sites: map[int][]uint64{}}
	addr := uint64(text)
	for i := 0; i < n; i++ {
		size := uint64(math.Exp(math.Log(32) + r.Float64()*math.Log(1024/32)))
		size = (size + 15) &^ 15
		im.funcs = append(im.funcs, elf.Symbol{Name: "f" + strconv.Itoa(i), Value: addr, Size: size,
			Info: elf.ST_INFO(elf.STB_GLOBAL, elf.STT_FUNC)})
		addr += size
	}
	im.loads = []elf.ProgHeader{{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_X, Off: text - 0x400000,
		Vaddr: text, Memsz: addr - text}}
	return im
}

func (im *image) executable(addr uint64) bool {
	for _, p := range im.loads {
		if p.Flags&elf.PF_X != 0 && addr >= p.Vaddr && addr < p.Vaddr+p.Memsz {
			return true
		}
	}
	return false
}

// retAddr is a return address inside function i. As in a real program,
// each function has a few call sites (1-4, fixed on first use), so the same
// return addresses recur across stacks.
func (im *image) retAddr(r *rand.Rand, i int) uint64 {
	sites := im.sites[i]
	if sites == nil {
		s := im.funcs[i]
		for k := 1 + r.IntN(4); k > 0; k-- {
			// past the first bytes, as a call instruction's successor is
			sites = append(sites, im.base+s.Value+5+r.Uint64N(s.Size-5))
		}
		im.sites[i] = sites
	}
	return sites[r.IntN(len(sites))]
}

// maps writes /proc/PID/maps lines for the image's loadable segments.
func (im *image) maps(w *bufio.Writer, inode int) {
	const page = 0x1000
	for _, p := range im.loads {
		start := im.base + p.Vaddr&^(page-1)
		end := im.base + (p.Vaddr+p.Memsz+page-1)&^(page-1)
		perm := []byte("---p")
		if p.Flags&elf.PF_R != 0 {
			perm[0] = 'r'
		}
		if p.Flags&elf.PF_W != 0 {
			perm[1] = 'w'
		}
		if p.Flags&elf.PF_X != 0 {
			perm[2] = 'x'
		}
		fmt.Fprintf(w, "%08x-%08x %s %08x fe:01 %-26d %s\n", start, end, perm,
			p.Off&^(page-1), inode, im.path)
	}
}

// stack is one generated call stack and its sampled allocations.
type stack struct {
	addrs   []uint64
	size    uint64   // one size class per stack
	threads []int    // thread uids
	n       []uint64 // raw samples per thread
}

func generate(o options, out string) error {
	r := rand.New(rand.NewPCG(o.seed, 0x9e3779b97f4a7c15))
	var prog *image
	var err error
	if o.funcs > 0 {
		prog = syntheticImage(r, o.funcs)
	} else if prog, err = loadImage(o.binary, 0x555555554000, nil); err != nil {
		return err
	}
	var lib *image
	if o.lib != "" {
		allocs := map[string]bool{"malloc": true, "calloc": true, "realloc": true, "posix_memalign": true}
		if lib, err = loadImage(o.lib, 0x7f3a12400000, allocs); err != nil {
			return err
		}
	}
	stacks := makeStacks(r, o, prog, lib)
	if o.member != 0 {
		stacks = fleetMember(o, stacks, lib)
	}
	if o.mapAs != "" {
		prog.path = o.mapAs
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	writeDump(w, o, stacks)
	images := []*image{prog}
	if lib != nil {
		images = append(images, lib)
	}
	writeMaps(w, images)
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	fmt.Fprintf(os.Stderr, "gendump: %s: %d stacks, %d distinct addresses\n", out, len(stacks), distinctAddrs(stacks))
	return f.Close()
}

// maxMembers bounds the fleet members whose libraries are told apart by
// address: 2^18 shifts of 2 MiB keep the library under 0x7fba_0000_0000.
const maxMembers = 1 << 18

// fleetMember makes the stacks one process of a fleet: the same program and
// stacks for every member, each member with its own counts, a third of the
// stacks absent, and the library loaded at its own address (ASLR), so that
// members are told apart as processes.
func fleetMember(o options, stacks []stack, lib *image) []stack {
	r := rand.New(rand.NewPCG(o.member, 0x51ed27))
	out := stacks[:0]
	for _, s := range stacks {
		if r.IntN(3) == 0 {
			continue
		}
		for i := range s.n {
			s.n[i] = 1 + r.Uint64N(2*s.n[i])
		}
		out = append(out, s)
	}
	if lib != nil {
		// Each member its own 2 MiB-aligned library address, distinct for up
		// to maxMembers members and still below the top of user space: two
		// members with one address would be one process to the same-process
		// guard. (Members below 4096 keep the addresses they always had.)
		shift := (o.member % maxMembers) << 21
		for _, s := range out {
			for i, a := range s.addrs {
				if a >= lib.base {
					s.addrs[i] = a + shift
				}
			}
		}
		lib.base += shift
	}
	return out
}

// distinctAddrs counts the distinct frame addresses of the stacks: the
// number of symbols to resolve, and of rows of an unsymbolized --by func.
func distinctAddrs(stacks []stack) int {
	seen := map[uint64]bool{}
	for _, s := range stacks {
		for _, a := range s.addrs {
			seen[a] = true
		}
	}
	return len(seen)
}

// makeStacks builds distinct stacks shaped like a real program's: a few
// entry paths near the root, a shared pool of middle frames, and leaf
// functions drawn from the whole binary; allocator frames on top.
func makeStacks(r *rand.Rand, o options, prog, lib *image) []stack {
	nf := len(prog.funcs)
	roots := make([][]int, 8)
	for i := range roots {
		for j := 0; j < 5; j++ {
			roots[i] = append(roots[i], r.IntN(nf))
		}
	}
	pool := o.middle
	if pool == 0 {
		pool = 400 // the flag's default, for callers that leave it unset
	}
	middle := make([]int, min(pool, nf))
	for i := range middle {
		middle[i] = r.IntN(nf)
	}
	classes := sizeClasses(8 << 20)
	seen := map[string]bool{}
	var out []stack
	// With -size, written counts the dump's bytes so far: the stack lines
	// exactly, the header and mappings roughly.
	written := int64(2048)
	for o.size > 0 && written < o.size || o.size == 0 && len(out) < o.stacks {
		var fr []uint64
		if lib != nil {
			fr = append(fr, lib.retAddr(r, r.IntN(len(lib.funcs))), lib.retAddr(r, r.IntN(len(lib.funcs))))
		}
		fr = append(fr, prog.retAddr(r, r.IntN(nf))) // the allocating function
		root := roots[r.IntN(len(roots))]
		for len(fr) < o.frames-len(root) {
			fr = append(fr, prog.retAddr(r, middle[r.IntN(len(middle))]))
		}
		for i := len(root) - 1; i >= 0 && len(fr) < o.frames; i-- {
			fr = append(fr, prog.retAddr(r, root[i]))
		}
		key := stackLine(fr)
		if seen[key] {
			continue
		}
		seen[key] = true
		s := drawCounts(r, o, fr, classes)
		out = append(out, s)
		if o.size > 0 {
			written += int64(len(key)) + stackCountsLen(s, o.unbias, uint64(1)<<o.lg)
		}
	}
	return out
}

// stackLine is a stack's "@ 0x... 0x..." line, without the newline.
func stackLine(addrs []uint64) string {
	b := make([]byte, 0, 1+19*len(addrs))
	b = append(b, '@')
	for _, a := range addrs {
		b = append(b, " 0x"...)
		b = strconv.AppendUint(b, a, 16)
	}
	return string(b)
}

// stackCountsLen is the number of bytes writeDump writes for a stack's
// counts lines, newlines included (and the stack line's newline).
func stackCountsLen(s stack, unbias bool, rate uint64) int64 {
	var all line
	n := int64(1 + len("  t*: \n"))
	for i, uid := range s.threads {
		all.add(s.n[i], s.size, rate)
		var l line
		l.add(s.n[i], s.size, rate)
		n += int64(len("  t: \n")+len(strconv.Itoa(uid))) + int64(len(l.format(unbias, rate)))
	}
	return n + int64(len(all.format(unbias, rate)))
}

// drawCounts gives a stack a size class (log-uniform, so small sizes
// dominate) and 1-3 threads with 1-100 raw samples each.
func drawCounts(r *rand.Rand, o options, addrs []uint64, classes []uint64) stack {
	s := stack{addrs: addrs, size: classes[r.IntN(len(classes))]}
	k := 1 + r.IntN(min(3, o.threads))
	for _, uid := range r.Perm(o.threads)[:k] {
		s.threads = append(s.threads, uid)
		s.n = append(s.n, 1+r.Uint64N(100))
	}
	return s
}

// line accumulates one counts line in both encodings.
type line struct {
	objs, bytes uint64 // raw sampled sums
	ht          htSums
}

func (l *line) add(n, size, rate uint64) {
	l.objs += n
	l.bytes += n * size
	l.ht.add(n, size, rate)
}

func (l line) format(unbias bool, rate uint64) string {
	c, s := l.objs, l.bytes
	if unbias {
		c, s = l.ht.encode(rate)
	}
	return fmt.Sprintf("%d: %d [0: 0]", c, s)
}

// writeDump writes the header, per-thread summaries and the stacks.
func writeDump(w *bufio.Writer, o options, stacks []stack) {
	rate := uint64(1) << o.lg
	var total line
	perThread := make([]line, o.threads)
	for _, s := range stacks {
		for i, uid := range s.threads {
			total.add(s.n[i], s.size, rate)
			perThread[uid].add(s.n[i], s.size, rate)
		}
	}
	fmt.Fprintf(w, "heap_v2/%d\n  t*: %s\n", rate, total.format(o.unbias, rate))
	for uid, l := range perThread {
		fmt.Fprintf(w, "  t%d: %s worker %d\n", uid, l.format(o.unbias, rate), uid)
	}
	for _, s := range stacks {
		var all line
		for i := range s.threads {
			all.add(s.n[i], s.size, rate)
		}
		fmt.Fprintf(w, "%s\n  t*: %s\n", stackLine(s.addrs), all.format(o.unbias, rate))
		for i, uid := range s.threads {
			var l line
			l.add(s.n[i], s.size, rate)
			fmt.Fprintf(w, "  t%d: %s\n", uid, l.format(o.unbias, rate))
		}
	}
}

// writeMaps writes the MAPPED_LIBRARIES section.
func writeMaps(w *bufio.Writer, images []*image) {
	fmt.Fprintf(w, "\nMAPPED_LIBRARIES:\n")
	for i, im := range images {
		im.maps(w, 1000+i)
	}
	fmt.Fprintf(w, "7ffd4a1c0000-7ffd4a1e1000 rw-p 00000000 00:00 0                          [stack]\n")
}
