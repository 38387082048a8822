package symbolize

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/heapest/heapest/parse"
)

func TestIsAllocatorFunc(t *testing.T) {
	yes := []string{
		"malloc", "calloc", "realloc", "free", "posix_memalign", "aligned_alloc", "memalign", "valloc",
		"operator new", "operator new[]", "operator new(unsigned long)", "mallocx", "rallocx", "xallocx",
		"je_prof_backtrace", "prof_backtrace_impl", "imalloc_body", "ialloc", "arena_malloc_hard",
		"tcache_alloc_small_hard", "malloc_default", "__libc_malloc", "tc_malloc", "tc_newarray",
		"jemalloc::alloc", "tcmalloc::Sampler::RecordAllocation", "_rjem_malloc", "__rust_alloc",
		"__rg_alloc", "newImpl", "newImpl<false>", "TCMalloc_ThreadCache::Allocate",
		"_rjem_je_prof_backtrace", "<tikv_jemallocator::Jemalloc as core::alloc::global::GlobalAlloc>::alloc",
		"<dhat::Alloc as core::alloc::global::GlobalAlloc>::alloc",
		"alloc::alloc::exchange_malloc", "<alloc::alloc::Global as core::alloc::Allocator>::allocate",
		"do_rallocx", "fallback_impl", "fallback_impl<false>", "je_calloc", "_rjem_je_malloc_default",
		"alloc::boxed::box_new_uninit", "alloc::boxed::Box<T>::new", "<alloc::boxed::Box>::new",
	}
	no := []string{"", "main", "alloc_a", "std::vector::push_back", "my_malloc_wrapper", "operator delete", "freeList", "mallory",
		"<alloc::raw_vec::RawVec>::grow_one", "alloc::vec::Vec::push", "alloc::boxed::Box<T>::leak", "<alloc::boxed::Box>::into_raw"}
	for _, n := range []string{"runtime.mallocgc", "runtime.mallocgcSmallNoscan", "runtime.newobject", "runtime.makeslice", "runtime.growslice"} {
		if !IsGoAllocatorFunc(n) || IsAllocatorFunc(n) {
			t.Errorf("%q: a Go allocator (dropped where named from its address) %v, any input's %v", n, IsGoAllocatorFunc(n), IsAllocatorFunc(n))
		}
	}
	for _, n := range []string{"runtime.main", "runtime.malg", "main.newobject"} {
		if IsGoAllocatorFunc(n) {
			t.Errorf("IsGoAllocatorFunc(%q) = true", n)
		}
	}
	for _, n := range yes {
		if !IsAllocatorFunc(n) {
			t.Errorf("IsAllocatorFunc(%q) = false, want true", n)
		}
	}
	for _, n := range no {
		if IsAllocatorFunc(n) {
			t.Errorf("IsAllocatorFunc(%q) = true, want false", n)
		}
	}
}

// The functions where gperftools' tcmalloc gets memory for itself, as
// Debian's libtcmalloc names them (its HEAP_PROFILE_MMAP stacks), and the
// allocator's entry points and internals that are not.
func TestIsAllocatorOwnFunc(t *testing.T) {
	for _, n := range []string{"SbrkSysAllocator::Alloc", "MmapSysAllocator::Alloc(unsigned long, unsigned long*, unsigned long)",
		"DefaultSysAllocator::Alloc", "TCMalloc_SystemAlloc", "LowLevelAlloc::AllocWithArena",
		"(anonymous namespace)::DoAllocWithArena", "tcmalloc::MetaDataAlloc",
		"(anonymous namespace)::DefaultPagesAllocator::MapPages(int, unsigned long)"} {
		if !IsAllocatorOwnFunc(n) {
			t.Errorf("IsAllocatorOwnFunc(%q) = false, want true", n)
		}
		// With tcmalloc linked statically no library mapping marks
		// them as the allocator's: their names must.
		if !IsAllocatorFunc(n) {
			t.Errorf("IsAllocatorFunc(%q) = false, want true", n)
		}
	}
	for _, n := range []string{"malloc", "tc_malloc", "tcmalloc::PageHeap::GrowHeap", "tcmalloc::allocate_full_malloc_oom",
		"AddressMap::Insert", "main", "MySysAllocator::Allocate", "", "mmap"} {
		if IsAllocatorOwnFunc(n) {
			t.Errorf("IsAllocatorOwnFunc(%q) = true, want false", n)
		}
	}
}

// TestAllocatorInner checks which allocator names are an internal's, a
// name a program's function may have too (dropped only before the
// allocator's entry point), and which are the allocator's wherever they
// stand.
func TestAllocatorInner(t *testing.T) {
	for _, tc := range []struct {
		name         string
		alloc, inner bool
	}{
		{"prof_backtrace_impl", true, true}, {"je_prof_backtrace", true, true}, {"arena_malloc_hard", true, true},
		{"malloc_buffer", true, true}, {"tc_like_user", true, true}, {"_rjem_je_prof_backtrace", true, true},
		{"malloc", true, false}, {"je_malloc_default", true, false}, {"malloc_default", true, false},
		{"je_calloc", true, false}, {"tc_new", true, false}, {"tcmalloc::allocate_full_malloc_oom", true, false},
		{"TCMalloc_SystemAlloc", true, false}, {"__rust_alloc", true, false}, {"main", false, false},
	} {
		if alloc, inner := allocatorClass(tc.name); alloc != tc.alloc || inner != tc.inner {
			t.Errorf("allocatorClass(%q) = %v, %v; want %v, %v", tc.name, alloc, inner, tc.alloc, tc.inner)
		}
	}
}

func TestDropAllocator(t *testing.T) {
	// Frames are written leaf first as "name" or "@addr" for an unresolved
	// address; 0x7f00… lies in a libjemalloc mapping, 0x5500… in the
	// program.
	maps := []parse.Mapping{
		{Start: 0x7f0000000000, Limit: 0x7f0000100000, File: "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"},
		{Start: 0x550000000000, Limit: 0x550000100000, File: "/opt/app"},
	}
	tests := []struct{ in, want string }{
		{"je_prof_backtrace,malloc,alloc_a,main", "alloc_a,main"},
		{"@7f0000000010,@7f0000000020,malloc,alloc_a,main", "alloc_a,main"},
		{"@7f0000000010,@550000000010,main", "@550000000010,main"},
		{"prof_alloc_prep,imalloc_body,operator_new_wrapper,malloc,main", "operator_new_wrapper,malloc,main"},
		{"operator new,std::vector::push_back,main", "std::vector::push_back,main"},
		{"malloc,free", "free"},
		// Past the allocator's entry point, a name like an internal's
		// is the program's: after libjemalloc's frames, after malloc,
		// after the je_malloc_default a static malloc tail-calls.
		{"@7f0000000010,prof_record_event,main", "prof_record_event,main"},
		{"prof_backtrace_impl,je_prof_backtrace,je_malloc_default,prof_record_event,main", "prof_record_event,main"},
		{"prof_backtrace_impl,malloc,arena_alloc,main", "arena_alloc,main"},
		{"je_prof_backtrace,do_rallocx,malloc_buffer,main", "malloc_buffer,main"},
		{"je_prof_backtrace,fallback_impl<false>,u_new,main", "u_new,main"},
		{"je_calloc,tc_like_user,main", "tc_like_user,main"},
		{"tc_malloc,tc_like_user,main", "tc_like_user,main"},
		{"alloc::boxed::box_new_uninit,app::Registry::fill,main", "app::Registry::fill,main"},
		{"malloc", "malloc"},
		{"alloc_a,main", "alloc_a,main"},
		{"", ""},
	}
	for _, tc := range tests {
		p := &testProfile{Mappings: maps, Records: []parse.Record{{Stack: frames(t, tc.in)}}}
		if _, err := Symbolize(p, Options{DropAllocator: true}); err != nil {
			t.Fatal(err)
		}
		if got := describe(p.Records[0].Stack); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
	}
}

// frames reads a comma-separated leaf-first stack of names and "@hex"
// unresolved addresses.
func frames(t *testing.T, s string) []parse.Frame {
	var out []parse.Frame
	if s == "" {
		return nil
	}
	for i, w := range strings.Split(s, ",") {
		if hex, ok := strings.CutPrefix(w, "@"); ok {
			a, err := strconv.ParseUint(hex, 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, parse.Frame{Addr: a})
			continue
		}
		out = append(out, parse.Frame{Addr: uint64(0x1000 + i), Func: w})
	}
	return out
}

func describe(st []parse.Frame) string {
	var w []string
	for _, f := range st {
		if f.Func == "" {
			w = append(w, "@"+strconv.FormatUint(f.Addr, 16))
		} else {
			w = append(w, f.Func)
		}
	}
	return strings.Join(w, ",")
}

func TestDropAllocatorGeneratedDump(t *testing.T) {
	// The generated dumps' first four frames are inside libjemalloc: they
	// go by their mapping whether or not the library is on this machine.
	for _, name := range []string{"je530_mixed_unbias-on.heap", "je530_threads_unbias-off.heap"} {
		recs, maps := dumpStacks(t, samplesDir()+"/jemalloc/generated/"+name)
		p := &testProfile{Records: recs, MapsText: maps}
		warnings, err := Symbolize(p, Options{DropAllocator: true})
		if err != nil {
			t.Fatal(err)
		}
		var jem parse.Mapping
		for _, m := range p.Mappings {
			if strings.Contains(m.File, "libjemalloc") {
				jem = m
			}
		}
		if jem.File == "" {
			t.Fatalf("%s: no libjemalloc mapping", name)
		}
		for _, r := range p.Records {
			if leaf := r.Stack[0]; leaf.Addr >= jem.Start && leaf.Addr < jem.Limit && len(r.Stack) > 1 {
				t.Errorf("%s: leaf %#x still inside libjemalloc", name, leaf.Addr)
			}
		}
		mentioned := false
		for _, w := range warnings {
			if strings.Contains(w, "/opt/heaplab/") && strings.Contains(w, "--binary") {
				mentioned = true
			}
		}
		if !mentioned {
			t.Errorf("%s: warnings %q do not name the missing program", name, warnings)
		}
	}
}

// TestAllocatorLibraryNotRead checks that frames dropped for lying in an
// allocator library are not resolved: the library is not even read. Here
// it is not an ELF file, which is an error once something reads it.
func TestAllocatorLibraryNotRead(t *testing.T) {
	lib := filepath.Join(t.TempDir(), "libjemalloc.so.2")
	if err := os.WriteFile(lib, []byte("not an ELF file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	profile := func() *testProfile {
		return &testProfile{
			Records:  []parse.Record{{Stack: []parse.Frame{{Addr: 0x7f0000000010}, {Addr: 0x7f0000000020}, {Addr: 0x401234}}}},
			MapsText: []byte("7f0000000000-7f0000100000 r-xp 00000000 fe:00 1 " + lib + "\n"),
		}
	}
	p := profile()
	warnings, err := Symbolize(p, Options{DropAllocator: true})
	if err != nil {
		t.Fatalf("dropped frames read %s: %v", lib, err)
	}
	if got := describe(p.Records[0].Stack); got != "@401234" {
		t.Errorf("stack %q, want @401234", got)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "1 address outside") {
		t.Errorf("warnings %q: want one for the address outside every mapping", warnings)
	}
	if _, err := Symbolize(profile(), Options{}); err == nil || !strings.Contains(err.Error(), lib) {
		t.Errorf("kept frames: err %v, want one naming %s", err, lib)
	}
}

// An allocator library's frame kept below a frame outside it (an exit
// handler of the library under libc) stays unnamed, the library unread,
// and the warning says which library and how to name it.
func TestAllocatorFrameKeptBelow(t *testing.T) {
	lib := filepath.Join(t.TempDir(), "libjemalloc.so.2")
	if err := os.WriteFile(lib, []byte("not an ELF file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &testProfile{
		Records:  []parse.Record{{Stack: []parse.Frame{{Func: "__cxa_finalize"}, {Addr: 0x7f0000000020}, {Func: "_dl_fini"}}}},
		MapsText: []byte("7f0000000000-7f0000100000 r-xp 00000000 fe:00 1 " + lib + "\n"),
	}
	warnings, err := Symbolize(p, Options{DropAllocator: true})
	if err != nil {
		t.Fatalf("a kept allocator frame read %s: %v", lib, err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], lib) || !strings.Contains(warnings[0], "--keep-allocator-frames") {
		t.Errorf("warnings %q: want one naming %s and --keep-allocator-frames", warnings, lib)
	}
}

// libtcmalloc's frames are named although dropped, to tell the memory
// tcmalloc gets for itself from what it hands out (namesOwnMemory): a
// file at its path that is no ELF object leaves them unnamed, with a
// warning, instead of stopping the report.
func TestTcmallocLibraryDamaged(t *testing.T) {
	lib := filepath.Join(t.TempDir(), "libtcmalloc.so.4")
	if err := os.WriteFile(lib, []byte("not an ELF file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &testProfile{
		Records: []parse.Record{
			{Stack: []parse.Frame{{Addr: 0x7f0000000010}, {Addr: 0x1234}}},
			{Stack: []parse.Frame{{Func: "__cxa_finalize"}, {Addr: 0x7f0000000020}, {Func: "_dl_fini"}}},
		},
		MapsText: []byte("7f0000000000-7f0000100000 r-xp 00000000 fe:00 1 " + lib + "\n"),
	}
	warnings, err := Symbolize(p, Options{DropAllocator: true})
	if err != nil {
		t.Fatalf("a damaged %s stopped the report: %v", lib, err)
	}
	if got := describe(p.Records[0].Stack); got != "@1234" {
		t.Errorf("stack %q, want @1234: its frame in the library dropped", got)
	}
	if w := strings.Join(warnings, "\n"); !strings.Contains(w, lib) || !strings.Contains(w, "not an ELF") {
		t.Errorf("warnings %q: want one saying %s is no ELF file", warnings, lib)
	}
}

// ByName keeps an input's own names and tells its allocator frames by
// them, by function when the frames are named by line, and only with Drop.
func TestByName(t *testing.T) {
	for _, tt := range []struct {
		name string
		drop bool
		kind parse.FrameKind
	}{
		{"malloc", true, parse.AllocatorFrame},
		{"malloc", false, parse.ProgramFrame},
		{"operator new(unsigned long)", true, parse.AllocatorFrame},
		{"<dhat::Alloc as core::alloc::global::GlobalAlloc>::alloc dhat-0.3.3/src/lib.rs:1389", true, parse.AllocatorFrame},
		{"site_a p.c:5", true, parse.ProgramFrame},
		{"TCMalloc_SystemAlloc", true, parse.AllocatorOwnFrame},
	} {
		name, kind := ByName{Drop: tt.drop}.Name(parse.Frame{Addr: 1, Func: tt.name}, true)
		if name != tt.name || kind != tt.kind {
			t.Errorf("ByName{%v}.Name(%q) = %q, %v; want the name, %v", tt.drop, tt.name, name, kind, tt.kind)
		}
	}
}

// TestInnerNamesNeedAllocatorCode checks that a function named like an
// allocator's internal is the allocator's only in a file that holds an
// allocator's code: gperftools' HEAPPROFILE stacks begin at malloc's
// caller, so a program's prof_record_event is their leaf, with no entry
// point before it; in a program that links jemalloc statically
// (je_malloc_default among its symbols), its prof_ functions are
// jemalloc's.
func TestInnerNamesNeedAllocatorCode(t *testing.T) {
	const src = `
#include <stdlib.h>
__attribute__((noinline)) void *%[1]s(int n) { return malloc(n); }
__attribute__((noinline)) void *caller(int n) { return %[1]s(n) ; }
%[2]s
int main(int argc, char **argv) { return caller(argc) != 0; }
`
	dir := t.TempDir()
	const static = "__attribute__((noinline, used)) void *je_malloc_default(int n) { return malloc(n); }"
	for _, tc := range []struct {
		name, leaf, extra, want string
	}{
		{"program", "prof_record_event", "", "prof_record_event,caller,main"},
		{"static-jemalloc", "prof_record_event", static, "caller,main"},
		// A static jemalloc's last call, by name: the program's here.
		{"program-do_rallocx", "do_rallocx", "", "do_rallocx,caller,main"},
		{"static-do_rallocx", "do_rallocx", static, "caller,main"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := build(t, "gcc", dir, tc.name, fmt.Sprintf(src, tc.leaf, tc.extra), "-O1", "-fno-optimize-sibling-calls")
			base := uint64(0x550000000000)
			p := &testProfile{
				Records:  []parse.Record{{Stack: stackIn(t, bin, loadBias(t, bin, base), tc.leaf, "caller", "main")}},
				MapsText: []byte(mapsFor(t, bin, base)),
			}
			if _, err := Symbolize(p, Options{DropAllocator: true}); err != nil {
				t.Fatal(err)
			}
			if got := describe(p.Records[0].Stack); got != tc.want {
				t.Errorf("stack %q, want %q", got, tc.want)
			}
		})
	}
}
