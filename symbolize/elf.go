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
	"sort"
	"strings"
	"sync"
)

// segment is one PT_LOAD program header: where a range of the file is
// placed in the ELF virtual address space.
type segment struct {
	off, filesz, vaddr, memsz, align uint64
	exec                             bool
}

// symbol is one function symbol of a symbol table.
type symbol struct {
	addr, size uint64
	name       string // as stored (mangled)
	short      string // Demangle(name), filled on first use
}

// object is one loaded ELF file: its program headers, its sorted function
// symbols and, when present, its DWARF. It is read once per process (see
// objects) and queried for many addresses.
type object struct {
	path    string
	typ     elf.Type
	buildID string
	segs    []segment
	syms    []symbol
	symSrc  string // ".symtab", ".dynsym" or ""
	dw      *dwarfInfo
	// demangled caches Demangle per mangled name: a name is demangled once
	// however many addresses resolve to it.
	demangled map[string]string

	// mu guards the lazily filled parts (DWARF units, short names, a
	// debug file's tables) of an object shared through the cache.
	mu sync.Mutex
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

// forgetObjects empties the cache (benchmarks measure loading with it).
func forgetObjects() {
	objects.Lock()
	objects.m = map[objectKey]*object{}
	objects.Unlock()
}

var (
	// errNotELF marks a file that is readable but not an ELF object.
	errNotELF = errors.New("not an ELF file")
	// errNoFile marks a file that does not exist.
	errNoFile = errors.New("no such file")
)

// openObject reads path's program headers, symbol table and DWARF.
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
	o = &object{path: path, typ: ef.Type, demangled: map[string]string{}}
	o.segs = loadSegments(ef)
	o.buildID = readBuildID(ef)
	o.syms, o.symSrc = readSymbols(ef)
	o.dw = loadDWARF(ef)
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
	if x, ok := o.debugOnlyText(); ok {
		in := x.vaddr & 0xfff
		x.off, x.filesz = mapOff+in, x.memsz
		return x, off >= mapOff && off < x.off+x.filesz
	}
	// Code is looked up: executable segments first, since the page a
	// mapping starts on may also hold the end of the segment before
	// (linkers that do not page-align segments in the file, like lld).
	for _, exec := range []bool{true, false} {
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
func (o *object) debugOnlyText() (segment, bool) {
	var text segment
	n := 0
	for _, s := range o.segs {
		if s.exec {
			text = s
			n++
		}
	}
	return text, n == 1 && text.filesz == 0 && text.memsz > 0
}

// fits reports whether a mapping at file offset mapOff can be a mapping of
// this file's code: some executable segment starts its pages there or
// covers it.
func (o *object) fits(mapOff uint64) bool {
	s, ok := o.segmentFor(mapOff, mapOff)
	return ok && s.exec
}

// sizeMatches reports whether a mapping of length n at file offset mapOff
// has the length the kernel gives the executable segment there, for some
// page size from 4 KiB to 64 KiB. Another build of a file almost always
// has code of another length, so a mismatch warns that names may be wrong.
func (o *object) sizeMatches(mapOff, n uint64) bool {
	s, ok := o.segmentFor(mapOff, mapOff)
	if !ok {
		return false
	}
	for page := uint64(4096); page <= 65536; page *= 2 {
		lo := s.vaddr &^ (page - 1)
		hi := (s.vaddr + s.memsz + page - 1) &^ (page - 1)
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

// readSymbols returns the function symbols of .symtab, or of .dynsym when
// the file was stripped, sorted by address with aliases resolved.
func readSymbols(ef *elf.File) ([]symbol, string) {
	if syms, err := ef.Symbols(); err == nil {
		if out := functionSymbols(ef, syms); len(out) > 0 {
			return out, ".symtab"
		}
	}
	if syms, err := ef.DynamicSymbols(); err == nil {
		if out := functionSymbols(ef, syms); len(out) > 0 {
			return out, ".dynsym"
		}
	}
	return nil, ""
}

// functionSymbols keeps defined code symbols, sorted by address; of
// several at one address it keeps the best-named (see better). Code
// symbols are functions, and untyped labels in executable sections
// (assembly entry points such as ld.so's _dl_start_user), as nm lists them.
func functionSymbols(ef *elf.File, syms []elf.Symbol) []symbol {
	var fn []elf.Symbol
	for _, s := range syms {
		if !isCodeSymbol(ef, s) {
			continue
		}
		if i := strings.IndexByte(s.Name, '@'); i > 0 {
			s.Name = s.Name[:i] // symbol version: memcpy@@GLIBC_2.14
		}
		fn = append(fn, s)
	}
	sort.Slice(fn, func(i, j int) bool {
		if fn[i].Value != fn[j].Value {
			return fn[i].Value < fn[j].Value
		}
		return better(fn[i], fn[j])
	})
	out := make([]symbol, 0, len(fn))
	for i, s := range fn {
		if i > 0 && fn[i-1].Value == s.Value {
			continue
		}
		out = append(out, symbol{addr: s.Value, size: s.Size, name: s.Name})
	}
	return out
}

func isCodeSymbol(ef *elf.File, s elf.Symbol) bool {
	if s.Section == elf.SHN_UNDEF || s.Value == 0 || s.Name == "" {
		return false
	}
	switch elf.ST_TYPE(s.Info) {
	case elf.STT_FUNC, elf.STT_GNU_IFUNC:
		return true
	case elf.STT_NOTYPE:
		// ARM and RISC-V mapping symbols ($x, $d) and local labels (.L)
		// are not names.
		if s.Name[0] == '$' || strings.HasPrefix(s.Name, ".L") {
			return false
		}
		i := int(s.Section)
		return i < len(ef.Sections) && ef.Sections[i].Flags&elf.SHF_EXECINSTR != 0
	}
	return false
}

// better orders aliases at one address: functions before labels, sized
// before unsized, global
// before weak before local, fewer leading underscores, then by name so the
// choice does not depend on table order.
func better(a, b elf.Symbol) bool {
	fa, fb := elf.ST_TYPE(a.Info) != elf.STT_NOTYPE, elf.ST_TYPE(b.Info) != elf.STT_NOTYPE
	if fa != fb {
		return fa
	}
	if (a.Size > 0) != (b.Size > 0) {
		return a.Size > 0
	}
	ra, rb := bindRank(a), bindRank(b)
	if ra != rb {
		return ra < rb
	}
	ua, ub := underscores(a.Name), underscores(b.Name)
	if ua != ub {
		return ua < ub
	}
	return a.Name < b.Name
}

func bindRank(s elf.Symbol) int {
	switch elf.ST_BIND(s.Info) {
	case elf.STB_GLOBAL:
		return 0
	case elf.STB_WEAK:
		return 1
	}
	return 2
}

func underscores(s string) int {
	n := 0
	for n < len(s) && s[n] == '_' {
		n++
	}
	return n
}

// lookupSymbol returns the index of the function symbol holding vaddr, or
// -1.
func (o *object) lookupSymbol(vaddr uint64) int {
	syms := o.syms
	i := sort.Search(len(syms), func(i int) bool { return syms[i].addr > vaddr }) - 1
	if i < 0 {
		return -1
	}
	// A symbol without a size runs to the next one; a sized one that ends
	// before vaddr may still sit inside an earlier, larger one.
	for k, j := 0, i; k < 4 && j >= 0; k, j = k+1, j-1 {
		s := &syms[j]
		if (s.size == 0 && j == i) || (s.size > 0 && vaddr < s.addr+s.size) {
			return j
		}
	}
	// Just past a function's end is its alignment padding: a return
	// address there comes from a call to a function that does not return
	// (abort, a throw) ending the function, and belongs to it.
	if s := &syms[i]; vaddr-(s.addr+s.size) < maxPadding {
		return i
	}
	return -1
}

// symbolName returns symbol i's demangled name, demangling it once.
func (o *object) symbolName(i int) string {
	s := &o.syms[i]
	if s.short == "" {
		s.short = Demangle(s.name)
	}
	return s.short
}

// maxPadding bounds the alignment padding after a function (compilers
// align functions to at most 64 bytes).
const maxPadding = 64

// demangle returns the short demangled form of a DWARF function name,
// cached.
func (o *object) demangle(name string) string {
	if d, ok := o.demangled[name]; ok {
		return d
	}
	d := Demangle(name)
	o.demangled[name] = d
	return d
}

// hasSymbols reports whether the file can name functions at all.
func (o *object) hasSymbols() bool {
	return len(o.syms) > 0 || (o.dw != nil && len(o.dw.units) > 0)
}
