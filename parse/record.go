package parse

import (
	"strconv"
	"strings"

	"github.com/heapest/heapest/ci"
)

// Scheme says how a record's allocations were sampled, which decides how they
// can be unbiased and whether an interval is possible at all.
type Scheme uint8

const (
	// Bernoulli is per-byte sampling with mean period Rate bytes whose
	// sample points are a Poisson process (exponential gaps: Go, tcmalloc,
	// gperftools, heapprofd, V8): an allocation of Z bytes is sampled
	// with probability 1−exp(−Z/Rate).
	Bernoulli Scheme = iota
	// Exact means every allocation was recorded (Rate 1): zero-width intervals.
	Exact
	// FixedStride is deterministic sampling every Rate bytes (.NET
	// GCAllocationTick): estimates only, no honest interval.
	FixedStride
	// Weighted records carry a producer-assigned weight (JFR): estimates
	// with model-based intervals only.
	Weighted
	// Unknown is a pre-scaled source whose sampling is not known:
	// estimates only, no interval.
	Unknown
	// Geometric is per-byte sampling by Bernoulli trials, each byte
	// sampled with probability 1/Rate (geometric gaps: jemalloc, .NET's
	// AllocationSampled): an allocation of Z bytes is sampled with
	// probability 1−(1−1/Rate)^Z. That is Bernoulli's to O(1/Rate), which
	// matters at the small periods jemalloc allows (lg_prof_sample 4:
	// 1% low on 32-byte allocations).
	Geometric
)

// String names the scheme as it appears in output.
func (s Scheme) String() string {
	switch s {
	case Bernoulli:
		return "bernoulli"
	case Exact:
		return "exact"
	case FixedStride:
		return "fixed-stride"
	case Weighted:
		return "weighted"
	case Geometric:
		return "geometric"
	}
	return "unknown"
}

// Encoding says how the numbers of a Counts were written.
type Encoding uint8

const (
	// Raw counts are the sampled objects and the sum of their sizes.
	Raw Encoding = iota
	// JemallocUnbias is jemalloc 5.3's prof_unbias encoding: the pair is
	// chosen so that jeprof's per-line formula yields the HT sums.
	JemallocUnbias
	// Scaled counts are already unbiased estimates (Go runtime, tcmalloc,
	// heapprofd bytes). Samples then holds the recovered raw count.
	Scaled
	// Unresolved counts are written in an encoding the parser can tell
	// only at the end of the input, after it sent the records (jemalloc's
	// prof_unbias auto-detection compares the header with the sum of all
	// stacks): Profile.Encoding says which, once Parse has returned. A
	// consumer keeps such counts as written and reads them with
	// Profile.Resolve; they must never be unbiased before.
	Unresolved
)

// Counts is one sampled pair of a record: objects and bytes.
type Counts struct {
	// Objects and Bytes are the numbers as the file gives them, read
	// according to Enc: raw sampled sums, or an encoding, or estimates.
	Objects, Bytes float64
	// Enc says how Objects and Bytes must be read.
	Enc Encoding
	// Samples is the raw number of sampled allocations when the parser can
	// recover it (Scaled sources), else 0 and unbias works it out.
	Samples float64
	// SamplesBound marks Samples as an upper bound rather than exact.
	SamplesBound bool
	// Size is the allocation size when all sampled allocations of the
	// record are known to share it, else 0.
	Size float64
	// Classes says whether the allocator sampled each request by its
	// size class while recording the size asked for (gperftools'
	// tcmalloc): Size is then what the allocations hold, and unbias rests
	// their inclusion probability on the class of Size.
	Classes SizeClasses
	// Approx marks Samples (and so the variance built on it) as an
	// approximation that is neither exact nor a bound: tcmalloc counts
	// estimated from a period the file does not carry, Go samples whose
	// size label is missing. unbias carries it to ci.Stats.Approx.
	Approx bool
}

// SizeClasses names an allocator whose sampler saw a request's size class
// rather than the size recorded.
type SizeClasses uint8

const (
	// Recorded sizes are the sizes sampled by (jemalloc, Go: both record
	// the size class itself).
	Recorded SizeClasses = iota
	// TcmallocClasses: gperftools' tcmalloc samples a request of up to
	// 256 KiB by its size class and records the request.
	TcmallocClasses
)

// IsZero reports whether the pair holds nothing.
func (c Counts) IsZero() bool { return c.Objects == 0 && c.Bytes == 0 }

// Frame is one stack frame. Func is empty until symbolized. Frames are
// kept small (24 bytes) because a dump holds one per frame of every stack;
// source lines, when known, are in Profile.Lines.
type Frame struct {
	Addr uint64
	Func string
}

// FrameKind is what a named frame is at the leaf end of a heap stack,
// where the allocator's own frames are dropped (a namer says which).
type FrameKind uint8

const (
	// ProgramFrame is the program's: kept.
	ProgramFrame FrameKind = iota
	// AllocatorFrame is the allocator's (malloc, its internals): dropped
	// from the leaf end, so that an allocation is its caller's.
	AllocatorFrame
	// AllocatorOwnFrame is the allocator getting memory for itself from
	// the system (tcmalloc's sbrk and mmap, the heap profiler's own
	// arena): a record with one among the frames dropped from its leaf
	// end is the memory the allocator hands out, which the program's
	// records already count (gperftools' HEAP_PROFILE_MMAP records both).
	AllocatorOwnFrame
	// AllocatorInnerFrame is the allocator's by its name only, a name a
	// program's own function may have too (a statically linked jemalloc's
	// prof_backtrace_impl, je_malloc_default; a program's arena_alloc):
	// dropped from the leaf end only before any frame of the other two
	// kinds, leafward of the allocator's entry point, where the
	// allocator's internals are. Past an entry point it is the program's.
	AllocatorInnerFrame
)

// AllocatorLead finds the allocator's frames at a stack's leaf end, told
// the stack's frames' kinds leaf first: the frames to drop, so that an
// allocation is its caller's.
type AllocatorLead struct{ entered bool }

// Drop reports whether the next frame, of kind k, is the allocator's. Once
// it is not, no later frame is: the caller stops asking.
func (a *AllocatorLead) Drop(k FrameKind) bool {
	switch k {
	case ProgramFrame:
		return false
	case AllocatorInnerFrame:
		// Past an entry point, a name like an internal's is the program's.
		return !a.entered
	}
	a.entered = true
	return true
}

// LineName is a frame's name by source line (Options.Lines): its
// function and its position, "func file:line" as pprof's -lines names it
// (" :line" when the file is unknown); the function alone when the line
// is not known (0) or there is no function.
func LineName(fn, file string, line int64) string {
	if fn == "" || line <= 0 {
		return fn
	}
	return fn + " " + file + ":" + strconv.FormatInt(line, 10)
}

// SplitLineName splits a name LineName made into its function, file and
// line; ok is false for a name without a line. Function and file names
// may both hold spaces ("operator new(unsigned long)", "C:/Program
// Files/Go/src/runtime/proc.go"), so the file is taken to start at the
// first space before an absolute path, and otherwise after the last space
// (a relative file name with a space is then cut short).
func SplitLineName(name string) (fn, file string, line int64, ok bool) {
	c := strings.LastIndexByte(name, ':')
	if c < 0 || c == len(name)-1 || strings.ContainsFunc(name[c+1:], func(d rune) bool { return d < '0' || d > '9' }) {
		return name, "", 0, false
	}
	line, err := strconv.ParseInt(name[c+1:], 10, 64)
	if err != nil || line <= 0 {
		return name, "", 0, false
	}
	i := fileStart(name[:c])
	if i < 0 {
		return name, "", 0, false
	}
	return name[:i], name[i+1 : c], line, true
}

// fileStart returns the index of the space before the file in s, a name
// by line without its ":line": the first one an absolute path follows,
// else the last one (-1 for none).
func fileStart(s string) int {
	for i := strings.IndexByte(s, ' '); i >= 0; {
		if absPath(s[i+1:]) {
			return i
		}
		j := strings.IndexByte(s[i+1:], ' ')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return strings.LastIndexByte(s, ' ')
}

// absPath reports whether s starts with an absolute path: a slash, a
// backslash or a drive letter's "C:/" (or "C:" and a backslash).
func absPath(s string) bool {
	switch {
	case s == "":
		return false
	case s[0] == '/' || s[0] == '\\':
		return true
	case len(s) >= 3 && s[1] == ':' && (s[2] == '/' || s[2] == '\\'):
		return 'A' <= s[0] && s[0] <= 'Z' || 'a' <= s[0] && s[0] <= 'z'
	}
	return false
}

// LineFunc is the function of a name LineName made: name without its
// " file:line" (name itself when it has none).
func LineFunc(name string) string {
	fn, _, _, _ := SplitLineName(name)
	return fn
}

// Record is one sampled unit of a profile: a stack line of a jemalloc dump,
// a pprof sample, a trace event. A parser hands it to a Sink and may reuse
// it, its Stack and its Pre as soon as the call returns.
type Record struct {
	// Stack is leaf first.
	Stack []Frame
	// StackID, when not 0, identifies Stack within the input: records
	// with the same StackID have the same Stack, so a consumer may look
	// the stack up once per id instead of once per record (a trace's
	// events name their stack by id). 0 means unknown.
	StackID uint64
	// NewStack, with a StackID, says that no earlier record of the input
	// had this Stack: a consumer may store it without looking it up. A
	// jemalloc dump never repeats a stack (a repeat is an error), and
	// looking up a hundred thousand stacks that are all new is a fifth of
	// reading one.
	NewStack bool
	// FrameIDs, when not nil, identifies each frame of Stack within the
	// input (FrameIDs[i] for Stack[i]), densely from 1: frames with the
	// same id are the same, so a consumer may look a frame up once per
	// id instead of once per occurrence (a profile's stacks share its
	// locations' frames).
	FrameIDs []uint32
	// Thread is a thread id or name where the format has one.
	Thread string
	// Type is the allocated type where the format has one.
	Type string
	// Scheme and Rate describe the sampling; Rate is the mean period in
	// bytes (1 for exact profiles).
	Scheme Scheme
	Rate   float64
	// InUse is the live pair, Alloc the accumulated (allocated) pair.
	InUse, Alloc Counts
	// Offset is, for .NET AllocationSampled events, size minus the sampled
	// byte offset (the bytes after the sample point): Approach 2's u.
	Offset float64
	// HasOffset marks Offset as present.
	HasOffset bool
	// Spill and Excess bound how far a producer-weighted record (JFR) may
	// be from its own bytes when its thread's sampling had a gap: a later
	// event of the thread, of another stack, weighed Spill bytes more
	// than the thread's usual weight, bytes this record's stack may have
	// allocated (its upper bound grows by them); this record's own weight
	// is Excess bytes over the usual one, bytes the stack before it may
	// have allocated (its lower bound shrinks by them).
	Spill, Excess float64
	// Time is the event time in nanoseconds from the trace start, when known.
	Time int64
	// Pre, when non-nil, holds statistics heapest itself computed earlier
	// (its own pprof output read back); unbias uses them unchanged.
	Pre *Precomputed
	// Breakdown marks a per-thread part of a record already given (a
	// jemalloc "tN:" line): it counts only towards --by thread, which
	// uses the breakdowns instead of the records. Parsers send them only
	// when Options.Threads is set.
	Breakdown bool
}

// Sink receives a parser's records as they are read, in file order. The
// Record and everything it points to are only valid during the call: a
// sink copies what it keeps. Parsers call it from one goroutine.
type Sink interface {
	Record(rec *Record)
}

// Beginner is a Sink that wants to know what an input holds before its
// first record: a parser that knows it by then (HasInUse and HasAlloc
// settled) calls Begin. A consumer uses it to leave out work on values
// the input does not have; it may not rely on being called.
type Beginner interface {
	Begin(p *Profile)
}

// Begin tells sink what p holds so far, if sink wants to know.
func Begin(sink Sink, p *Profile) {
	if b, ok := sink.(Beginner); ok {
		b.Begin(p)
	}
}

// Reserver is a Sink that can make room for the records to come at once:
// a parser that knows how many it will send at most, before the first
// (a profile.proto's samples), calls Reserve. A consumer sizes its tables
// with it instead of growing them; it may not rely on being called.
type Reserver interface {
	Reserve(records int)
}

// Reserve tells sink how many records are to come at most, if sink
// wants to know.
func Reserve(sink Sink, records int) {
	if r, ok := sink.(Reserver); ok {
		r.Reserve(records)
	}
}

// Narrower is a Sink that reads only some kinds of counts (after Begin):
// a record whose counts of the kinds it reads are zero, whose frames are
// all named and which has no Pre changes nothing in it. A parser may
// leave such a record unsent, counting it in its Profile as sent; the
// sink may not rely on it.
type Narrower interface {
	Reads() (inUse, alloc bool)
}

// Reads returns which kinds of counts sink reads: both, unless it says.
func Reads(sink Sink) (inUse, alloc bool) {
	if n, ok := sink.(Narrower); ok {
		return n.Reads()
	}
	return true, true
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(rec *Record)

// Record calls f(rec).
func (f SinkFunc) Record(rec *Record) { f(rec) }

// Precomputed are a record's statistics as heapest wrote them, one per
// value, indexed like unbias.Value: inuse_space, inuse_objects, alloc_space,
// alloc_objects. Re-reading them instead of re-deriving them from rounded
// pprof values is what makes heapest's pprof output reproduce its intervals
// exactly and merge again.
type Precomputed struct {
	Stats [4]ci.Stats
	// Has marks which of the four values the file carried.
	Has [4]bool
}

// Mapping is one executable mapping of the profiled process, for
// symbolization.
type Mapping struct {
	Start, Limit, Offset uint64
	File                 string
	BuildID              string
	// Line is the 1-based line of the mapping in the input file, when it
	// came from a text maps section (0 otherwise), for error messages.
	Line int
	// Deleted says the maps marked the file " (deleted)": it was removed
	// or replaced after the process mapped it, and what is at its path
	// now may be another build.
	Deleted bool
	// Dev is the mapped file's device ("fd:01", major:minor in hex) where
	// a /proc/<pid>/maps line gives it ("" otherwise): a file at that
	// path on that device written after the profile was is not the file
	// the process mapped.
	Dev string
}

// Source describes one parsed input for output headers and caveats.
type Source struct {
	Path   string
	Format string
	Rate   float64
	// Samples is the total raw sample count (or its bound) over all records.
	Samples float64
	// Detail is format-specific information worth reporting (e.g.
	// "prof_unbias=on (detected)").
	Detail string
	// Writer names the program that wrote the input where Format is
	// shared by several and the input tells which: "jemalloc" for a
	// heap_v2 text of jemalloc 3 (Format "gperftools"), whose sampling
	// is set as jemalloc's, not tcmalloc's. "" otherwise.
	Writer string
	// Build identifies the profiled program's build where known (its main
	// file's build ID, else its path); Process the process, where the
	// input says (see package fleet). Both are set after parsing, for
	// a merge's summary and its same-process guard.
	Build, Process string
	// Time is when the profile was taken, in nanoseconds since the Unix
	// epoch, where the input says (pprof's time_nanos); 0 where not.
	Time int64
	// Recording tells the input's recording apart from every other of its
	// format, where the format says, and is the same in every dump or copy
	// of one recording: a JFR recording's first chunk's start in
	// nanoseconds, a .NET trace's process id and the counter value it
	// started at, Go debug=1 text's last GC (MemStats' LastGC, in
	// nanoseconds: one process's, the same until its next collection).
	// "" where the input does not say (see package fleet).
	Recording string
	// Chunks are the parts of the recording the input holds, where the
	// format has them, each as Recording would name a recording that
	// began with it: a JFR dump's chunks by their start. Two inputs that
	// share one hold the same events.
	Chunks []string
	// Heap names the heap whose live objects the input's in-use values
	// list, where the format says and a running program's dumps list
	// them again and again: a JVM's, by its pid and start time (in
	// milliseconds), for JFR's old object samples, which belong to the
	// JVM, not to a recording. Two inputs of one Heap list objects of one
	// heap twice; "" where the input does not say or has no such list.
	Heap string
	// Salvaged is set when --keep-going kept what preceded a truncation
	// or damage: the input's estimates are then of a part of it.
	Salvaged bool
	// Delta says the input is a delta profile (pprof's ?seconds=N, or
	// pprof -base): its alloc_* values are the allocations of a window,
	// not those since its process started.
	Delta bool
}

// Profile is what a parsed input says about itself besides its records
// (which went to the Sink): where it came from, how it was sampled, and
// what symbolization needs.
type Profile struct {
	Source   Source
	Mappings []Mapping
	// OwnMemoryTwice says the input records the allocator's own memory,
	// got from the system, beside the allocations it serves: gperftools'
	// heap profiler with HEAP_PROFILE_MMAP records tcmalloc's sbrk and
	// mmap calls as well as every malloc (its header's totals are the
	// mallocs'). Stacks of that memory (AllocatorOwnFrame) then count it a
	// second time, and are left out. With HEAP_PROFILE_ONLY_MMAP they are
	// the heap itself, and kept.
	OwnMemoryTwice bool
	// OwnMemorySaid says the input tells whether it does (a heap
	// profile's text, by its header's totals). pprof's conversion of one
	// to proto drops the header: stacks of that memory are kept there,
	// with a warning that they may count it twice.
	OwnMemorySaid bool
	// MapsText is a raw /proc/<pid>/maps copy (jemalloc MAPPED_LIBRARIES)
	// for symbolize to parse when Mappings is empty.
	MapsText []byte
	// MapsLine is the line of the input file on which MapsText begins.
	MapsLine int
	// ReturnAddrs says every frame address is a return address, the
	// leaf's too (gperftools' and jemalloc 3's heap profiles, and Go's
	// debug=1 text: their stacks begin at the caller of malloc): each is
	// looked up one byte earlier, at its call, as pprof's legacy parser
	// does. Elsewhere the leaf is where the allocation happened.
	ReturnAddrs bool
	// AllocatorNamed says the input names its frames, the allocator's
	// among them at the leaf end of its stacks (DHAT's malloc replacements):
	// they are told by their names (symbolize.ByName).
	AllocatorNamed bool
	// Symbols maps addresses to names when the file carries them (jeprof
	// --raw "--- symbol" sections).
	Symbols map[uint64]string
	// Names, when set, names frame addresses the format itself can
	// resolve (a trace's method rundown events, which come after the
	// stacks that use them); it returns "" for an address it cannot name.
	// It is used instead of ELF symbolization, after Parse returned, and
	// is safe for concurrent use. addr is an instruction address: as with
	// ELF symbolization, a caller frame (every frame but the leaf: a
	// return address) is looked up at Addr-1, so that a call that ends a
	// method names that method and not the next one.
	Names func(addr uint64) string
	// NamesByID says Names takes frame addresses as written, caller or
	// not: they are identifiers, not instruction addresses (the location
	// ids of Java heap text).
	NamesByID bool
	// Records and Breakdowns count what went to the Sink.
	Records, Breakdowns int
	// HasInUse and HasAlloc say which pairs the format provides.
	HasInUse, HasAlloc bool
	// DefaultType is the sample type the input says to show by default,
	// as it names it (pprof's default_sample_type: alloc_space for a Go
	// allocs profile); "" where it says none.
	DefaultType string
	// Encoding is how the Counts the parser sent as Unresolved are
	// written (Raw or JemallocUnbias); it applies to no other Counts.
	Encoding Encoding
	// Timed is set when records carry event times (Record.Time), as
	// traces do.
	Timed bool
	// Warnings are caveats found while parsing, printed to stderr.
	Warnings []string
	// Merged, set when the input is itself a merge written by heapest,
	// describes the inputs it was made of.
	Merged *Merged
}

// Merged describes the inputs of a merge: what a merge's header reports,
// kept in the merged file so that a merge of merges reports the inputs
// underneath.
type Merged struct {
	// Inputs counts the inputs merged, Skipped those left out as
	// unreadable (--keep-going).
	Inputs, Skipped int
	// SkippedWhy are the errors of the inputs merges underneath left out
	// (their files' "skipped: " comments), each naming its input.
	SkippedWhy []string
	// Formats counts the inputs per format.
	Formats map[string]int
	// RateMin and RateMax bound the inputs' sampling periods (0: none
	// known).
	RateMin, RateMax float64
	// Builds are the distinct builds of the profiled programs that are
	// known, sorted.
	Builds []string
	// Processes counts the distinct processes.
	Processes int
	// Families counts the inputs underneath per process family (the
	// identity fleet.Family gives: processes forked from one parent share
	// one), so that a merge of merges still finds the family a merge
	// split between its parts. Correlated is the factor the statistics
	// were widened by for the largest one (ci.Stats.Correlate; 0 or 1:
	// none).
	Families   map[string]int
	Correlated float64
	// Keys are, for a merge of one input that is no merge itself, that
	// input's identities as merges compare them (fleet.Keys, a heap's
	// included): a merge of one dump is that dump again to the guard
	// against summing dumps of one process or recording, which its own
	// comment would not tell (a JFR recording's or a trace's contents
	// have no mappings to find it by).
	Keys []string
	// Held are, for a merge of several inputs, the identities (as Keys)
	// of every input underneath, sorted: a merge read beside one of
	// them, or beside another merge of one, would count it twice
	// (fleet.HeldDuplicates). Files written before they were recorded
	// have none.
	Held []string
}

// Resolve returns the encoding a record's Counts must be read with, given
// the Enc it was sent with: enc itself, or p.Encoding for Unresolved.
func (p *Profile) Resolve(enc Encoding) Encoding {
	if enc == Unresolved {
		return p.Encoding
	}
	return enc
}

// SetPrecomputed makes rec a record of statistics computed earlier (by
// heapest: its pprof output, its Parquet rows): Pre, and the plain fields
// too, so that a consumer that ignores Pre still sees the estimates. The
// stack (and its frame ids) is kept; every other field is reset.
func (rec *Record) SetPrecomputed(pre *Precomputed) {
	*rec = Record{Stack: rec.Stack, FrameIDs: rec.FrameIDs, Pre: pre, Scheme: Bernoulli}
	var any ci.Stats
	for v := range pre.Has {
		if pre.Has[v] {
			any = pre.Stats[v]
			break
		}
	}
	switch {
	case any.Complete:
		rec.Scheme = Exact
	case any.NoInterval:
		rec.Scheme = Unknown
	}
	if !any.MixedRate {
		rec.Rate = any.Rate
	}
	rec.InUse = preCounts(pre, 0, 1)
	rec.Alloc = preCounts(pre, 2, 3)
}

// preCounts are the estimates of a pair of values (space, objects) of pre.
func preCounts(pre *Precomputed, space, objects int) Counts {
	if !pre.Has[space] && !pre.Has[objects] {
		return Counts{}
	}
	s := pre.Stats[space]
	if !pre.Has[space] {
		s = pre.Stats[objects]
	}
	c := Counts{Bytes: pre.Stats[space].Estimate, Objects: pre.Stats[objects].Estimate, Enc: Scaled,
		Samples: s.Samples, SamplesBound: s.SamplesBound, Approx: s.Approx}
	if !s.Mixed && pre.Has[space] {
		c.Size = s.Unit
	}
	return c
}
