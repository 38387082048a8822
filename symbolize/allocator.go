package symbolize

import (
	"path/filepath"
	"strings"

	"github.com/heapest/heapest/parse"
)

// allocatorNames are the allocation entry points jeprof's
// RemoveUninterestingFrames and pprof's legacy heap parser drop, plus the
// libc and Rust allocator shims and gperftools' exported tc_ functions. A
// name is looked up as it is and without jemalloc's prefixes (je_calloc).
var allocatorNames = map[string]bool{
	"malloc": true, "calloc": true, "realloc": true, "free": true, "cfree": true,
	"posix_memalign": true, "__posix_memalign": true, "aligned_alloc": true,
	"memalign": true, "valloc": true, "pvalloc": true, "reallocarray": true,
	"mallocx": true, "rallocx": true, "xallocx": true, "dallocx": true,
	"sdallocx": true, "sdallocx_noflags": true, "nallocx": true,
	"operator new": true, "operator new[]": true, "newImpl": true,
	"__builtin_new": true, "__builtin_vec_new": true, "do_malloc": true,
	"do_malloc_or_cpp_alloc": true, "DoSampledAllocation": true,
	"__libc_calloc": true, "__libc_realloc": true, "__libc_memalign": true,
	"__rust_alloc": true, "__rust_alloc_zeroed": true, "__rust_realloc": true,
	"tc_malloc": true, "tc_calloc": true, "tc_realloc": true, "tc_memalign": true,
	"tc_posix_memalign": true, "tc_valloc": true, "tc_pvalloc": true,
	"tc_new": true, "tc_newarray": true, "tc_new_nothrow": true, "tc_newarray_nothrow": true,
	"tc_malloc_skip_new_handler": true, "tc_new_aligned": true, "tc_newarray_aligned": true,
	"tc_new_aligned_nothrow": true, "tc_newarray_aligned_nothrow": true,
	// Rust's Box::new since 1.83 (it was exchange_malloc's caller).
	"alloc::boxed::box_new_uninit": true,
}

// staticEntries are the functions of a statically linked jemalloc that
// its entry points call last, often as a tail call that leaves the entry
// point's frame out of the stack (malloc_default: malloc's; do_rallocx:
// realloc's and rallocx's; fallback_impl: operator new's), its prefixes
// taken off (je_malloc_default, _rjem_je_malloc_default). They end the
// allocator's frames as an entry point does, but a program's function may
// have their names: in a file they are the allocator's only where it
// holds an allocator's code, as internals' names are (object.funcName).
var staticEntries = map[string]bool{"malloc_default": true, "do_rallocx": true, "fallback_impl": true}

// allocatorPrefixes start names no program's own function has: the
// allocators' namespaces and Rust's global-allocator shims and std entry
// points (alloc::alloc::alloc, exchange_malloc, Global::allocate: Rust's
// operator new; Box::new), and dhat-rs's allocator.
var allocatorPrefixes = []string{
	"__libc_malloc", "jemalloc::", "tcmalloc::",
	"__rg_", "__rdl_", "tikv_jemallocator::", "<tikv_jemallocator::",
	"<jemallocator::", "jemallocator::", "alloc::alloc::", "<alloc::alloc::Global",
	// Box::new (and new_uninit, new_in): Rust's new T, whose frame stays
	// where it is not inlined (debug builds), in the legacy and v0 forms.
	"alloc::boxed::Box<T>::new", "<alloc::boxed::Box>::new", "<alloc::boxed::Box<T>>::new", "alloc::boxed::Box::new",
	"<dhat::Alloc as ", // dhat-rs's global allocator, which records every allocation
}

// innerPrefixes start the names of a statically linked allocator's
// internals, which stand leafward of its entry points: jemalloc's (je_,
// prof_, imalloc…, arena_, tcache_, malloc_; _rjem_ in Rust's
// tikv-jemalloc-sys) and gperftools' (tc_). A program may name its own
// functions so (prof_record_event, arena_alloc, malloc_buffer): a frame
// named so is the allocator's only until the stack has reached one of
// its entry points (FrameKind AllocatorInnerFrame).
var innerPrefixes = []string{
	"je_", "prof_", "imalloc", "ialloc", "irallocx_", "ixallocx_", "arena_",
	"tcache_", "malloc_", "tc_", "_rjem_",
}

// staticEntry reports whether a name is a static jemalloc's last call
// (staticEntries), prefixes aside.
func staticEntry(name string) bool { return staticEntries[shortName(jemallocUnprefixed(name))] }

// jemallocUnprefixed is a name without the prefixes jemalloc's build
// gives its exported functions (--with-jemalloc-prefix=je_, as Redis
// links it) and its internals (je_), in Rust's tikv-jemalloc-sys
// (_rjem_, _rjem_je_).
func jemallocUnprefixed(name string) string {
	for _, p := range []string{"_rjem_je_", "_rjem_", "je_"} {
		if strings.HasPrefix(name, p) {
			return name[len(p):]
		}
	}
	return name
}

// goAllocatorNames are the Go runtime's allocation entry points. A Go
// stack symbolized here from its addresses (debug=1 text with --binary)
// has them at its leaf end, and the allocation belongs to their caller, as
// pprof shows it. A Go profile that names its own frames does not: the
// runtime trimmed them, and a runtime.mallocgc left there is a real site.
var goAllocatorNames = map[string]bool{
	"runtime.newobject": true, "runtime.newarray": true, "runtime.makeslice": true,
	"runtime.makeslicecopy": true, "runtime.growslice": true, "runtime.makemap": true,
	"runtime.makemap_small": true, "runtime.makechan": true, "runtime.rawstring": true,
	"runtime.rawbyteslice": true, "runtime.rawruneslice": true, "runtime.rawstringtmp": true,
	"runtime.concatstrings": true, "runtime.concatstring2": true, "runtime.concatstring3": true,
	"runtime.concatstring4": true, "runtime.concatstring5": true, "runtime.slicebytetostring": true,
	"runtime.stringtoslicebyte": true, "runtime.stringtoslicerune": true, "runtime.convT": true,
	"runtime.convTnoptr": true, "runtime.convTstring": true, "runtime.convTslice": true,
	"runtime.convT16": true, "runtime.convT32": true, "runtime.convT64": true,
	"runtime.mapassign": true, "runtime.mapassign_fast32": true, "runtime.mapassign_fast64": true,
	"runtime.mapassign_faststr": true, "runtime.hashGrow": true, "runtime.growWork": true,
}

// IsGoAllocatorFunc reports whether name is one of the Go runtime's
// allocation entry points (runtime.mallocgc and its size-class variants
// too).
func IsGoAllocatorFunc(name string) bool {
	return goAllocatorNames[name] || strings.HasPrefix(name, "runtime.mallocgc")
}

// IsAllocatorFunc reports whether a (demangled) function name is an
// allocator entry point or internal, whose frames are dropped from the leaf
// end of heap stacks (an internal's only before an entry point:
// allocatorClass).
func IsAllocatorFunc(name string) bool {
	alloc, _ := allocatorClass(name)
	return alloc
}

// allocatorClass says whether a (demangled) function name is an
// allocator's, and whether it is so only as an allocator's internal
// (innerPrefixes): a name a program's function may have too.
func allocatorClass(name string) (alloc, inner bool) {
	if name == "" {
		return false, false
	}
	if short := shortName(jemallocUnprefixed(name)); allocatorNames[shortName(name)] || allocatorNames[short] || staticEntries[short] {
		return true, false
	}
	for _, p := range allocatorPrefixes {
		if strings.HasPrefix(name, p) {
			return true, false
		}
	}
	// An allocator getting memory for itself is the allocator too: with
	// tcmalloc linked statically, no libtcmalloc mapping says so.
	if strings.Contains(name, "TCMalloc") || IsAllocatorOwnFunc(name) {
		return true, false
	}
	for _, p := range innerPrefixes {
		if strings.HasPrefix(name, p) {
			return true, true
		}
	}
	return false, false
}

// IsAllocatorOwnFunc reports whether a (demangled) function name is where
// an allocator gets memory for itself from the system: gperftools'
// tcmalloc growing its page heap (TCMalloc_SystemAlloc and its
// SysAllocators' sbrk and mmap) and its LowLevelAlloc arena (the heap
// profiler's own tables, tcmalloc's metadata; its pages from
// DefaultPagesAllocator::MapPages). gperftools'
// HEAP_PROFILE_MMAP records those mmap and sbrk calls beside the
// allocations they serve, and its documentation has pprof --ignore them.
func IsAllocatorOwnFunc(name string) bool {
	short := shortName(name)
	return name == "TCMalloc_SystemAlloc" || strings.HasSuffix(short, "SysAllocator::Alloc") ||
		strings.HasPrefix(name, "LowLevelAlloc::") || strings.Contains(name, "DoAllocWithArena") ||
		name == "tcmalloc::MetaDataAlloc" || strings.Contains(name, "DefaultPagesAllocator::MapPages")
}

// shortName drops a parameter list ("operator new(unsigned long)" as
// jeprof's symbol sections print it) and template arguments.
func shortName(name string) string {
	if i := strings.IndexAny(name, "(<"); i > 0 && !strings.HasPrefix(name, "operator()") {
		name = name[:i]
	}
	return strings.TrimSpace(name)
}

// ByName is the Namer of an input that names its own frames, the
// allocator's among them (parse.Profile.AllocatorNamed): it keeps the
// names and, with Drop, tells allocator frames by them (IsAllocatorFunc,
// the function of a name by line: parse.LineFunc).
type ByName struct{ Drop bool }

// Need does nothing: the frames are named.
func (ByName) Need(uint64, bool) {}

// Resolve does nothing.
func (ByName) Resolve() error { return nil }

// Name returns f's own name and what kind of frame it is.
func (n ByName) Name(f parse.Frame, _ bool) (string, parse.FrameKind) {
	fn := parse.LineFunc(f.Func)
	alloc, inner := allocatorClass(fn)
	alloc = alloc && n.Drop
	return f.Func, frameKind(alloc, inner, alloc && IsAllocatorOwnFunc(fn))
}

// Unresolved does nothing.
func (ByName) Unresolved(uint64) {}

// isAllocatorLib reports whether a mapped file is an allocator library, all
// of whose code is allocator frames.
func isAllocatorLib(path string) bool {
	base := filepath.Base(path)
	return strings.HasPrefix(base, "libjemalloc") || strings.HasPrefix(base, "libtcmalloc")
}

// namesOwnMemory reports whether an allocator library's frames are named
// although dropped: gperftools' HEAP_PROFILE_MMAP records libtcmalloc's
// own mmap and sbrk calls, told apart by their functions' names.
func namesOwnMemory(path string) bool {
	return strings.HasPrefix(filepath.Base(path), "libtcmalloc")
}

// isAllocatorFrame reports whether a frame is an allocator frame: any
// frame of an allocator library, or an allocator function by name
// (inner: by an internal's name only, see allocatorClass).
func (s *session) isAllocatorFrame(f parse.Frame) (alloc, inner bool) {
	if m := s.mappingFor(f.Addr); m != nil && m.allocator {
		return true, false
	}
	return allocatorClass(f.Func)
}
