package symbolize

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
)

// segment is one PT_LOAD program header: where a range of the file is
// placed in the ELF virtual address space.
type segment struct {
	off, filesz, vaddr, memsz, align uint64
	exec                             bool
}

// object is one loaded ELF file: its program headers and its sorted code
// symbols, kept in a process-wide cache (see objects) and queried for many
// addresses. Its DWARF is not kept: a Symbolize call that needs it loads
// it for itself (see loadDWARF), so that the cache holds no debug data.
type object struct {
	path    string
	typ     elf.Type
	buildID string
	// debugLink is the name of its separate debug file and that file's
	// CRC-32, from .gnu_debuglink ("" when it has none).
	debugLink    string
	debugLinkCRC uint32
	segs         []segment
	// debugText is the one executable segment of a separate debug file,
	// whose code was left out (see debugOnlyText); debugOnly says so.
	debugText segment
	debugOnly bool
	// execSegments counts the executable segments.
	execSegments int
	tab          symbolTable
	// dwarfPath is the file holding DWARF for this object's code: the
	// file itself, its separate debug file, or "" when neither has any.
	dwarfPath string
	// goBinary marks a Go program (Options.NoInlines says why).
	goBinary bool

	// mu guards the parts filled later (short names, a debug file's
	// tables) of an object shared through the cache.
	mu sync.Mutex
	// ranges are the code ranges of the functions in its unwind tables,
	// read on first need (rangesRead).
	ranges     funcRanges
	rangesRead bool
	// short caches the demangled names of the symbols hit so far, and
	// whether each is an allocator function: a name is demangled and
	// classified once however many addresses (and inputs of a merge)
	// resolve to it, and names never hit never are. shortAt is, per
	// index in tab, 0 or 1 + the index of its name in short (made on
	// first need; a slice, where a map's growth cost a large run a
	// thousand page faults).
	short   []symName
	shortAt []uint32
	// allocCode says the file holds an allocator's code, once allocKnown
	// (see linksAllocator).
	allocCode, allocKnown bool
}

// symName is a symbol's demangled name and whether it is an allocator
// function, and one by an internal's name only (allocatorClass).
type symName struct {
	name         string
	alloc, inner bool
}

// objectKey identifies a file's content well enough for a process's life.
type objectKey struct {
	path  string
	size  int64
	mtime int64
}

// objects caches loaded files across Symbolize calls, so that several
// dumps of one program (heapest report a.heap b.heap …) load it once. It
// lives as long as the process: heapest is a command, not a server.
var objects = struct {
	sync.Mutex
	m map[objectKey]*object
}{m: map[objectKey]*object{}}

// loadObject returns the object for path from the cache, opening it on a
// miss. Failures are not cached.
func loadObject(path string) (*object, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, describeOpenError(err)
	}
	key := objectKey{path: path, size: st.Size(), mtime: st.ModTime().UnixNano()}
	objects.Lock()
	o := objects.m[key]
	objects.Unlock()
	if o != nil {
		return o, nil
	}
	o, err = openObject(path)
	if err != nil {
		return nil, err
	}
	objects.Lock()
	if prev := objects.m[key]; prev != nil {
		o = prev // another caller loaded it meanwhile
	} else {
		objects.m[key] = o
	}
	objects.Unlock()
	return o, nil
}

// forgetObjects empties the caches of objects and of their DWARF
// (benchmarks measure loading with it; tests count loads).
func forgetObjects() {
	objects.Lock()
	objects.m = map[objectKey]*object{}
	objects.Unlock()
	dwarfCache.mu.Lock()
	dwarfCache.entries = nil
	dwarfCache.mu.Unlock()
}

var (
	// errNotELF marks a file that is readable but not an ELF object.
	errNotELF = errors.New("not an ELF file")
	// errNoFile marks a file that does not exist.
	errNoFile = errors.New("no such file")
	// errIsDir marks a path that is a directory here: no object was ever
	// mapped from it, so it is the absent file of another machine's dump.
	errIsDir = errors.New("a directory here, not a file")
)

// openObject reads path's program headers, build-id and code symbols, and
// notes whether it has DWARF; no debug section is read.
func openObject(path string) (o *object, err error) {
	defer func() {
		// debug/elf is meant to fail cleanly on bad input; this makes sure
		// a file it chokes on is one more unusable file, not a crash.
		if r := recover(); r != nil {
			o, err = nil, fmt.Errorf("malformed ELF: %v", r)
		}
	}()
	// Only regular files: a maps path may name a device or a FIFO, whose
	// reads could block or never end.
	if st, err := os.Stat(path); err != nil {
		return nil, describeOpenError(err)
	} else if st.IsDir() {
		return nil, errIsDir
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, describeOpenError(err)
	}
	defer f.Close()
	var magic [4]byte
	if _, err := f.ReadAt(magic[:], 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, describeOpenError(err)
	}
	if string(magic[:]) != elf.ELFMAG {
		return nil, errNotELF
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		return nil, fmt.Errorf("malformed ELF: %v", err)
	}
	defer ef.Close()
	o = &object{path: path, typ: ef.Type}
	o.segs = loadSegments(ef)
	o.debugText, o.debugOnly = debugOnlyText(o.segs)
	for _, seg := range o.segs {
		if seg.exec {
			o.execSegments++
		}
	}
	o.buildID = readBuildID(ef)
	o.debugLink, o.debugLinkCRC = readDebugLink(ef)
	o.goBinary = ef.Section(".go.buildinfo") != nil || ef.Section(".gopclntab") != nil
	o.tab = readSymbols(ef)
	if hasDWARF(ef) {
		o.dwarfPath = path
	}
	return o, nil
}

// describeOpenError shortens the os error to what a user acts on.
func describeOpenError(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errNoFile
	case errors.Is(err, fs.ErrPermission):
		return errors.New("permission denied")
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func loadSegments(ef *elf.File) []segment {
	var segs []segment
	for _, p := range ef.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		segs = append(segs, segment{
			off: p.Off, filesz: p.Filesz, vaddr: p.Vaddr, memsz: p.Memsz, align: p.Align,
			exec: p.Flags&elf.PF_X != 0,
		})
	}
	return segs
}

// pageStart is the file offset at which the kernel starts mapping s: its
// offset rounded down to the segment alignment (at least 4 KiB pages,
// at most 2 MiB so that odd alignments cannot swallow the whole file).
func (s segment) pageStart() uint64 {
	a := s.align
	if a < 4096 {
		a = 4096
	}
	if a > 2<<20 {
		a = 2 << 20
	}
	return s.off &^ (a - 1)
}

// segmentFor returns the PT_LOAD segment whose mapped file range holds
// off, for a mapping that starts at file offset mapOff.
//
// A separate debug file (objcopy --only-keep-debug) keeps the program
// headers' addresses but not their file offsets or sizes; its one
// executable segment is then taken to start at the mapping, on the page
// of its address, as the kernel mapped the original.
func (o *object) segmentFor(mapOff, off uint64) (segment, bool) {
	if o.debugOnly {
		x := o.debugText
		in := x.vaddr & 0xfff
		x.off, x.filesz = mapOff+in, x.memsz
		return x, off >= mapOff && off < x.off+x.filesz
	}
	// Code is looked up: executable segments first, since the page a
	// mapping starts on may also hold the end of the segment before
	// (linkers that do not page-align segments in the file, like lld).
	for _, exec := range [2]bool{true, false} {
		for _, s := range o.segs {
			if s.exec == exec && off >= s.pageStart() && off < s.off+s.filesz {
				return s, true
			}
		}
	}
	return segment{}, false
}

// debugOnlyText returns the executable segment of a file whose code was
// left out (a separate debug file), if it has exactly one.
func debugOnlyText(segs []segment) (segment, bool) {
	var text segment
	n := 0
	for _, s := range segs {
		if s.exec {
			text = s
			n++
		}
	}
	return text, n == 1 && text.filesz == 0 && text.memsz > 0
}

// fits reports whether a mapping of n bytes at file offset mapOff can be
// a mapping of this file's code: some executable segment starts its pages
// there or covers it, or starts within the mapping. (pprof merges a
// file's adjacent maps lines into one mapping: a non-PIE program's
// read-only first segment and its code after it become one mapping at
// offset 0, which go tool pprof -proto writes for gperftools' text.)
func (o *object) fits(mapOff, n uint64) bool {
	if s, ok := o.segmentFor(mapOff, mapOff); ok && s.exec {
		return true
	}
	_, ok := o.execWithin(mapOff, n)
	return ok
}

// execWithin is the first executable segment that starts within the n
// bytes at file offset mapOff.
func (o *object) execWithin(mapOff, n uint64) (segment, bool) {
	for _, s := range o.segs {
		if s.exec && s.off >= mapOff && s.off-mapOff < n {
			return s, true
		}
	}
	return segment{}, false
}

// sizeMatches reports whether a mapping of length n at file offset mapOff
// has the length the kernel gives the executable segment there (or, for
// a merged mapping, the segments from mapOff to the end of the code in
// it), for some page size from 4 KiB to 64 KiB. Another build of a file
// almost always has code of another length, so a mismatch warns that
// names may be wrong.
func (o *object) sizeMatches(mapOff, n uint64) bool {
	first, ok := o.segmentFor(mapOff, mapOff)
	if !ok {
		return false
	}
	last := first
	if !first.exec {
		if last, ok = o.execWithin(mapOff, n); !ok {
			last = first
		}
	}
	for page := uint64(4096); page <= 65536; page *= 2 {
		lo := first.vaddr &^ (page - 1)
		hi := (last.vaddr + last.memsz + page - 1) &^ (page - 1)
		if hi-lo == n {
			return true
		}
	}
	return false
}

// toVaddr turns a file offset into the ELF virtual address the symbol and
// line tables use.
func (o *object) toVaddr(mapOff, off uint64) (uint64, bool) {
	s, ok := o.segmentFor(mapOff, off)
	if !ok {
		return 0, false
	}
	return off - s.off + s.vaddr, true
}

// readDebugLink returns the .gnu_debuglink section's file name and CRC-32:
// the name, NUL-terminated and padded to four bytes, then the CRC.
func readDebugLink(ef *elf.File) (string, uint32) {
	sec := ef.Section(".gnu_debuglink")
	if sec == nil || sec.Type == elf.SHT_NOBITS {
		return "", 0
	}
	data, err := sec.Data()
	if err != nil {
		return "", 0
	}
	end := bytes.IndexByte(data, 0)
	at := (end + 4) &^ 3
	if end <= 0 || at+4 > len(data) {
		return "", 0
	}
	name := string(data[:end])
	if strings.ContainsRune(name, '/') {
		return "", 0 // a bare file name, by definition
	}
	return name, ef.ByteOrder.Uint32(data[at:])
}

// readBuildID returns the hex GNU build-id note, or "".
func readBuildID(ef *elf.File) string {
	for _, s := range ef.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		if id := findBuildID(data, ef.ByteOrder); id != "" {
			return id
		}
	}
	return ""
}

// findBuildID walks the notes of a note section for NT_GNU_BUILD_ID.
func findBuildID(data []byte, bo binary.ByteOrder) string {
	for len(data) >= 12 {
		nameSz := uint64(bo.Uint32(data[0:4]))
		descSz := uint64(bo.Uint32(data[4:8]))
		typ := bo.Uint32(data[8:12])
		nameEnd := 12 + align4(nameSz)
		descEnd := nameEnd + align4(descSz)
		if nameEnd > uint64(len(data)) || descEnd > uint64(len(data)) {
			return ""
		}
		name := data[12 : 12+nameSz]
		if typ == 3 && bytes.Equal(name, []byte("GNU\x00")) {
			return hex.EncodeToString(data[nameEnd : nameEnd+descSz])
		}
		data = data[descEnd:]
	}
	return ""
}

func align4(n uint64) uint64 { return (n + 3) &^ 3 }

// staticAllocatorSymbols are symbols only a file that holds an
// allocator's code has: jemalloc's (with its je_ prefix, or Rust's
// _rjem_je_) and gperftools' tcmalloc's.
var staticAllocatorSymbols = map[string]bool{
	"je_malloc_default": true, "_rjem_je_malloc_default": true, "je_prof_backtrace": true,
	"_rjem_je_prof_backtrace": true, "prof_backtrace_impl": true, "tc_malloc": true,
}

// linksAllocator reports whether the file holds an allocator's code (a
// jemalloc or tcmalloc linked statically): only there does a function
// named as an allocator's internal (allocatorClass) belong to one. Found
// on first need, with o.mu held.
func (o *object) linksAllocator() bool {
	if o.allocKnown {
		return o.allocCode
	}
	o.allocKnown = true
	for i := range o.tab.syms {
		if name := o.tab.name(i); staticAllocatorSymbols[name] || strings.HasPrefix(name, "_ZN8tcmalloc") {
			o.allocCode = true
			break
		}
	}
	return o.allocCode
}

// funcName returns the demangled name of the symbol holding vaddr, or ""
// when no symbol does, and whether it is an allocator function. Each
// symbol's name is demangled and classified once.
func (o *object) funcName(vaddr uint64) symName {
	o.mu.Lock()
	defer o.mu.Unlock()
	i, beyond := o.tab.lookup(vaddr)
	if i < 0 {
		return symName{}
	}
	if beyond {
		if start, ok := o.readRanges().find(vaddr); ok && start > o.tab.syms[i].addr {
			// Not padding: the code of a function the table does not
			// name (a stripped library's local one, such as libstdc++'s
			// thread entry right after error_code::default_error_condition).
			return symName{}
		}
	}
	if o.shortAt == nil {
		o.shortAt = make([]uint32, len(o.tab.syms))
	}
	if at := o.shortAt[i]; at != 0 {
		return o.short[at-1]
	}
	name := Demangle(o.tab.name(i))
	n := symName{name: name}
	if n.alloc, n.inner = allocatorClass(name); (n.inner || n.alloc && staticEntry(name)) && !o.linksAllocator() {
		// An internal's name in a file without an allocator's code
		// is the program's own function (arena_alloc, prof_flush).
		n.alloc, n.inner = false, false
	}
	o.short = append(o.short, n)
	o.shortAt[i] = uint32(len(o.short))
	return n
}

// funcStart returns the start of the function whose code holds vaddr, by
// the unwind tables (read on first need): for an address no symbol
// covers.
func (o *object) funcStart(vaddr uint64) (uint64, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.readRanges().find(vaddr)
}

// readRanges returns the unwind tables' ranges, reading them on first
// need; o.mu is held.
func (o *object) readRanges() funcRanges {
	if !o.rangesRead {
		o.rangesRead = true
		if ef, err := elf.Open(o.path); err == nil {
			o.ranges = readFuncRanges(ef)
			ef.Close()
		}
	}
	return o.ranges
}
