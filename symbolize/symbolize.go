package symbolize

import (
	"debug/elf"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/heapest/heapest/parse"
)

// Options say where to find the files a profile's mappings name when they
// are not where the profile says (a dump taken on another machine).
type Options struct {
	// Binary (--binary PATH) is used for the main executable: the mapping
	// whose path has the same base name, else the first mapping.
	Binary string
	// SymbolPath (--symbol-path DIR) directories are searched for mapped
	// files by base name, by their full path under the directory, and for
	// separate debug files by build-id (.build-id/xx/yyyy.debug).
	SymbolPath []string
	// DropAllocator drops allocator frames from the leaf end of each stack
	// (see IsAllocatorFunc), keeping at least one frame.
	DropAllocator bool
	// Lines names each resolved frame address by its function and its
	// source position, "func file:line" (parse.LineName), from the DWARF
	// line tables (an address inside inlined code gets the position of the
	// outermost inlined call, in the function named). Frames named by the
	// input are taken as named by lines too (parse.Options.Lines). Without
	// it DWARF is read only for addresses no symbol covers: function names
	// come from the symbol tables, which costs a small part of reading
	// debug sections.
	Lines bool
	// NoInlines (--no-inlines, pprof's -noinlines) names a frame address
	// by its function alone. Without it, the calls inlined at the address
	// are frames of their own, innermost first, read from the DWARF of C,
	// C++ and Rust binaries (inlined call chains in a jeprof --raw symbol
	// section too), as jeprof and pprof show them. Go binaries are named
	// from their symbol tables alone: Go programs are profiled through
	// runtime/pprof, whose profiles carry their inlined calls, and the
	// DWARF a Go binary carries would be read whole for them. So are the
	// files whose DWARF is only in a system debug directory (systemDebug).
	NoInlines bool
}

// systemDebugDirs hold separate debug files of installed packages
// (Debian's *-dbg and *-dbgsym packages install under .build-id there).
var systemDebugDirs = []string{"/usr/lib/debug"}

// Session names the frames of one profile. Its use is in three steps,
// so that each distinct address is resolved once and in address order
// (which keeps the binary searches over symbol and line tables in cache):
// Need for every distinct stack, Resolve once, then Names for every
// distinct stack again.
//
// Names come first from p.Symbols (a symbolized jeprof --raw file), then
// from the ELF symbol tables of the mapped files, then from their DWARF,
// demangled to pprof's short form. As jeprof does, every frame but the leaf
// is a return address and is looked up one byte earlier, so that a call
// ending its function resolves to the caller's line.
//
// Missing, unreadable, non-ELF or mismatched files are warnings, one per
// file with the number of addresses left unresolved. A file given with
// --binary that cannot be used is an error naming it and what was expected.
// Files are opened only for the addresses that need them: with
// opt.DropAllocator, frames dropped because they lie in an allocator
// library (libjemalloc) are not resolved, so that library is not read.
type Session struct {
	s           *session
	mapsWarning string
	pending     []pendingAddr
	// expect is how many addresses Expect announced, until the first
	// one that can be named sizes the index for them.
	expect int
}

// Open prepares the symbolization of p. When p has no Mappings but a raw
// maps copy (MapsText), it parses that first and stores the result in
// p.Mappings.
func Open(p *parse.Profile, opt Options) (*Session, error) {
	s := newSession(p, opt)
	ss := &Session{s: s}
	if len(p.Mappings) == 0 && len(p.MapsText) > 0 {
		maps, err := ParseMaps(p.MapsText)
		if err != nil {
			ss.mapsWarning = "MAPPED_LIBRARIES: " + err.Error()
		}
		p.Mappings = maps
	}
	if err := s.setup(); err != nil {
		return nil, fmt.Errorf("%s: %w", p.Source.Path, err)
	}
	s.callers = newAddrIndex(1024)
	s.leaves = newAddrIndex(256)
	return ss, nil
}

// Need registers a frame address that will need a name; leaf says it is
// the top of its stack (the allocation point) rather than a return
// address. With opt.DropAllocator, addresses in an allocator library are
// not registered: their frames are dropped whatever their names (the few
// kept below a frame outside it stay unnamed: see warnings).
func (ss *Session) Need(addr uint64, leaf bool) {
	if !ss.wanted(addr, leaf) {
		return // not indexed, sorted or looked up again
	}
	s := ss.s
	if ss.expect > 0 {
		if s.callers.n == 0 && len(s.callers.keys) < 2*ss.expect {
			s.callers = newAddrIndex(ss.expect)
		}
		ss.expect = 0
	}
	index := s.callers
	if leaf {
		index = s.leaves
	}
	if n, added := index.lookup(addr, int32(len(ss.pending))); added {
		ss.pending = append(ss.pending, pendingAddr{addr: addr, leaf: leaf, n: n})
	}
}

// NeedHandle is Need for a caller that registers each distinct address
// once per position (leaf or not): it returns the address's handle for
// NameHandle, and false when no file can name it (Name then gives what
// it is). Such addresses are not indexed: neither registering nor naming
// them looks them up.
func (ss *Session) NeedHandle(addr uint64, leaf bool) (uint32, bool) {
	if !ss.wanted(addr, leaf) {
		return 0, false
	}
	n := int32(len(ss.pending))
	ss.pending = append(ss.pending, pendingAddr{addr: addr, leaf: leaf, n: n})
	return uint32(n), true
}

// wanted reports whether a frame address is to be resolved: not an
// allocator library's frame dropped unnamed, and one the profile's symbols
// or a mapped file can name.
func (ss *Session) wanted(addr uint64, leaf bool) bool {
	s := ss.s
	if addr == 0 || s.opt.DropAllocator && s.allocatorLib && ss.unnamedAllocator(addr) {
		return false
	}
	return len(s.p.Symbols) > 0 || s.mayName(addr, leaf)
}

// NameHandle is Name for a frame whose address NeedHandle registered as
// handle h.
func (ss *Session) NameHandle(h uint32) (name string, kind parse.FrameKind) {
	r := &ss.s.results[h]
	return r.fn, frameKind(r.alloc, r.inner, r.own)
}

// Expect says that about n distinct addresses will be registered, most
// of them return addresses: the index of those is made for them at the
// first that a file can name, instead of grown by doubling. (Nothing is
// made when no file can name any.)
func (ss *Session) Expect(n int) { ss.expect = n }

func (ss *Session) inAllocatorLib(addr uint64) bool { return ss.s.inAllocatorLib(addr) }

// unnamedAllocator reports whether addr lies in an allocator library whose
// frames are dropped unnamed: libjemalloc's. libtcmalloc's are named, to
// tell its own memory from what it hands out (IsAllocatorOwnFunc).
func (ss *Session) unnamedAllocator(addr uint64) bool {
	m := ss.s.mappingFor(addr)
	return m != nil && m.allocator && !m.namesOwn
}

// inAllocatorLib reports whether addr lies in an allocator library.
func (s *session) inAllocatorLib(addr uint64) bool {
	m := s.mappingFor(addr)
	return m != nil && m.allocator
}

// Resolve names every address Need registered. It fails when a mapped file
// exists but cannot be used.
func (ss *Session) Resolve() error {
	s, pending := ss.s, ss.pending
	s.results = make([]resolved, len(pending))
	// An address that is both a leaf and a return address gets its
	// position as a return address, the usual case: leaves sort first.
	sortPending(pending)
	for _, q := range pending {
		r, inl := s.resolve(q.addr, q.leaf)
		switch {
		case !s.opt.DropAllocator:
			r.alloc = false
		case r.allocKnown:
			if s.inAllocatorLib(q.addr) {
				r.alloc, r.inner = true, false
			}
		default:
			// Named here from the address: Go's runtime entry points too.
			r.alloc, r.inner = s.isAllocatorFrame(parse.Frame{Addr: q.addr, Func: r.fn})
			if IsGoAllocatorFunc(r.fn) {
				r.alloc, r.inner = true, false
			}
		}
		r.own = r.alloc && IsAllocatorOwnFunc(r.fn)
		if s.opt.Lines { // after the allocator's names were matched
			r.fn = parse.LineName(r.fn, r.file, int64(r.line))
		}
		if len(inl) > 0 {
			if s.inlined == nil {
				s.inlined = map[int32]inlinedCalls{}
			}
			s.inlined[q.n] = s.inlinedCalls(inl)
		}
		s.results[q.n] = r
	}
	ss.pending = nil
	return s.fatal
}

// inlinedCalls are the calls inlined at an address, named (by line with
// Options.Lines): innermost first, and how many of the innermost are the
// allocator's (Rust's alloc::alloc::alloc inlined into RawVec's code),
// with Options.DropAllocator.
type inlinedCalls struct {
	names []string
	alloc int
}

func (s *session) inlinedCalls(inl []inlFrame) inlinedCalls {
	out := inlinedCalls{names: make([]string, len(inl))}
	lead := s.opt.DropAllocator
	for i, f := range inl {
		// An internal's name (allocatorClass) inlined into the program's
		// code is the program's: the allocator's entry points are calls.
		alloc, inner := allocatorClass(f.fn)
		if lead = lead && alloc && !inner; lead {
			out.alloc++
		}
		out.names[i] = f.fn
		if s.opt.Lines {
			out.names[i] = parse.LineName(f.fn, f.file, int64(f.line))
		}
	}
	return out
}

// Inlined returns the functions inlined at frame f's address, innermost
// first: frames of their own before f's in its stack (nil for none, or
// for a frame the input named); alloc of the innermost are the
// allocator's, dropped where f is the first frame its stack keeps.
func (ss *Session) Inlined(f parse.Frame, leaf bool) (names []string, alloc int) {
	s := ss.s
	if f.Func != "" || f.Addr == 0 {
		return nil, 0
	}
	index := s.callers
	if leaf {
		index = s.leaves
	}
	if n, ok := index.find(f.Addr); ok {
		in := s.inlined[n]
		return in.names, in.alloc
	}
	return nil, 0
}

// AnyInlined reports whether any address resolved has inlined calls.
func (ss *Session) AnyInlined() bool { return len(ss.s.inlined) > 0 }

// InlinedHandle is Inlined for a frame whose address NeedHandle took.
func (ss *Session) InlinedHandle(h uint32) (names []string, alloc int) {
	in := ss.s.inlined[int32(h)]
	return in.names, in.alloc
}

// Name returns a frame's name ("" when it has none: the frame's own Func,
// else what Resolve found) and, with opt.DropAllocator, whether it is an
// allocator frame, to be dropped from the leaf end of its stack, and of
// those one where the allocator gets memory for itself.
func (ss *Session) Name(f parse.Frame, leaf bool) (name string, kind parse.FrameKind) {
	s := ss.s
	if f.Func == "" && f.Addr != 0 {
		index := s.callers
		if leaf {
			index = s.leaves
		}
		if n, ok := index.find(f.Addr); ok {
			r := s.results[n]
			return r.fn, frameKind(r.alloc, r.inner, r.own)
		}
	}
	fn := f.Func
	if s.opt.Lines {
		f.Func = parse.LineFunc(fn)
	}
	alloc, inner := s.isAllocatorFrame(f)
	alloc = alloc && s.opt.DropAllocator
	return fn, frameKind(alloc, inner, alloc && IsAllocatorOwnFunc(f.Func))
}

// frameKind is an allocator frame's kind, or a program's frame.
func frameKind(alloc, inner, own bool) parse.FrameKind {
	switch {
	case own:
		return parse.AllocatorOwnFrame
	case alloc && inner:
		return parse.AllocatorInnerFrame
	case alloc:
		return parse.AllocatorFrame
	}
	return parse.ProgramFrame
}

// Unresolved counts a frame address that stays unnamed in the report, for
// Warnings. The caller tells each address once.
func (ss *Session) Unresolved(addr uint64) {
	if addr == 0 {
		return
	}
	switch m := ss.s.mappingFor(addr); {
	case m != nil:
		m.file.unresolved++
	case impossibleCode(addr):
		ss.s.garbage++
	default:
		ss.s.outside++
	}
}

// impossibleCode reports whether no code can be at addr in a user
// process: below 64 KiB (Linux's mmap_min_addr) or above 2^56 (the
// largest user address space, x86-64's with five-level paging). An
// unwinder that walks frames without frame pointers returns such
// addresses (0x1, 0x42, 0xfffffffffffffff0: gperftools' generic_fp in a
// libtcmalloc built without them).
func impossibleCode(addr uint64) bool { return addr < 1<<16 || addr >= 1<<56 }

// Warnings says, per file, why addresses stayed unresolved.
func (ss *Session) Warnings() []string {
	w := ss.s.warnings()
	if ss.mapsWarning != "" {
		w = append([]string{ss.mapsWarning}, w...)
	}
	return w
}

type pendingAddr struct {
	addr uint64
	leaf bool
	n    int32
}

// session is the state of one Symbolize call.
type session struct {
	p    *parse.Profile
	opt  Options
	maps []mapState // sorted by Start
	// allocatorLib says some mapping is an allocator library.
	allocatorLib bool
	// files holds one state per mapped path: each file is opened once.
	files map[string]*fileState
	// callers and leaves index results by address: each distinct address
	// is resolved once as a return address and once as a leaf.
	callers, leaves *addrIndex
	results         []resolved
	// inlined are, by index in results, the names of the calls inlined
	// at the addresses that have any (Session.Inlined).
	inlined map[int32]inlinedCalls
	// inlinesOf caches inlines per file.
	inlinesOf map[*object]bool
	// outside counts unresolved addresses in no mapping; garbage those
	// of them no code can be at (impossibleCode).
	outside, garbage int
	// fatal is set when a mapped file exists but is unusable.
	fatal error
	// dwarf holds the DWARF loaded by this call, by file path (nil when
	// a file's could not be read): it is dropped with the session.
	dwarf map[string]*dwarfInfo
	// last is the index+1 in maps of the mapping mappingFor found last: a
	// frame address is asked for three times in a row (Need, Name,
	// ModuleKey), and the frames of a stack lie mostly in a few mappings.
	last int
}

type mapState struct {
	parse.Mapping
	file      *fileState
	allocator bool // libjemalloc/libtcmalloc: all its frames are allocator frames
	namesOwn  bool // an allocator library whose frames are named all the same (namesOwnMemory)
	// text is the file's executable segment once an address was found in
	// it, when the file has only the one (see toVaddr).
	text segment
	// module and whole are what ModuleKey gives for this mapping, made
	// on its first call: one string and one mapping for all its
	// addresses.
	module string
	whole  parse.Mapping
}

// toVaddr is o.toVaddr for an offset in this mapping of o. Nearly every
// address of a mapping falls in the file's one executable segment, which
// is remembered.
func (m *mapState) toVaddr(o *object, off uint64) (uint64, bool) {
	if t := &m.text; t.exec && off >= t.pageStart() && off < t.off+t.filesz {
		return off - t.off + t.vaddr, true
	}
	seg, ok := o.segmentFor(m.Offset, off)
	if !ok {
		return 0, false
	}
	if seg.exec && o.execSegments == 1 && !o.debugOnly {
		m.text = seg
	}
	return off - seg.off + seg.vaddr, true
}

// fileState is what came of looking for one mapped file.
// usablePath reports whether a mapped path names a file that could hold
// symbols (not a device, an anonymous or deleted mapping).
func usablePath(path string) bool {
	return strings.HasPrefix(path, "/") && !strings.HasPrefix(path, "/dev/") && !strings.HasSuffix(path, " (deleted)")
}

type fileState struct {
	path       string // as the mapping names it
	located    bool   // locate has run (or --binary supplied obj)
	obj        *object
	problem    string // why obj is nil or cannot be trusted
	hint       string
	unresolved int // distinct addresses in this file left without a name
	// byStart counts the distinct addresses named by their function's
	// start (sub_ADDRESS, from the unwind tables: see ehframe.go).
	byStart int
	caution string // why names from obj may be wrong
	// lined and unlined count, with Options.Lines, the distinct addresses
	// of the program's code named with a source line and without one.
	lined, unlined int
}

func newSession(p *parse.Profile, opt Options) *session {
	return &session{
		p: p, opt: opt,
		files: map[string]*fileState{},
		dwarf: map[string]*dwarfInfo{},
	}
}

type resolved struct {
	fn, file string
	line     int
	// alloc says the frame is an allocator frame (see isAllocatorFrame),
	// decided once per distinct address, and inner that it is by an
	// internal's name only; allocKnown that the name's part of that was
	// already decided (by the object's symbol cache); own that it is the
	// allocator getting memory for itself (IsAllocatorOwnFunc).
	alloc, inner, allocKnown, own bool
}

func (s *session) setup() error {
	mainPath := s.mainPath()
	for _, m := range s.p.Mappings {
		if m.Limit <= m.Start {
			continue
		}
		fs := s.files[m.File]
		if fs == nil {
			fs = &fileState{path: m.File}
			s.files[m.File] = fs
		}
		s.maps = append(s.maps, mapState{Mapping: m, file: fs, allocator: isAllocatorLib(m.File), namesOwn: namesOwnMemory(m.File)})
		s.allocatorLib = s.allocatorLib || isAllocatorLib(m.File)
	}
	sort.SliceStable(s.maps, func(i, j int) bool { return s.maps[i].Start < s.maps[j].Start })
	s.last = 0 // the mappings moved
	if s.opt.Binary != "" {
		if err := s.openBinary(mainPath); err != nil {
			return err
		}
	}
	return nil
}

// mainPath is the mapped path --binary stands for (mainFile).
func (s *session) mainPath() string { return mainFile(s.p.Mappings, s.opt.Binary) }

// mainFile is the profiled program's file among the mappings: the one of
// --binary's name, else the first that is no shared library by its name
// (a library linked to load below the program comes first in the maps),
// else the first.
func mainFile(maps []parse.Mapping, binary string) string {
	if len(maps) == 0 {
		return ""
	}
	if binary != "" {
		want := filepath.Base(binary)
		for _, m := range maps {
			if filepath.Base(m.File) == want {
				return m.File
			}
		}
	}
	for _, m := range maps {
		if !sharedLibrary(m.File) {
			return m.File
		}
	}
	return maps[0].File
}

// sharedLibrary reports whether a file's name is a shared library's
// (libfoo.so, libfoo.so.1.2) or the dynamic loader's (ld-linux-x86-64.so.2).
func sharedLibrary(path string) bool {
	base := filepath.Base(path)
	i := strings.Index(base, ".so")
	return i > 0 && (i+3 == len(base) || base[i+3] == '.') || strings.HasPrefix(base, "ld-")
}

// openBinary loads --binary for mainPath's mappings. Unlike a file found
// on its own, it must open, be ELF, and fit the mappings it stands for.
func (s *session) openBinary(mainPath string) error {
	path := s.opt.Binary
	o, err := loadObject(path)
	if err != nil {
		return fmt.Errorf("--binary %s: %v (expected an ELF executable or shared object)", path, err)
	}
	s.addDebugFile(o)
	fs := s.files[mainPath]
	if fs == nil {
		return s.placeWithoutMaps(o)
	}
	for _, m := range s.maps {
		if m.file == fs && !o.fits(m.Offset, m.Limit-m.Start) {
			return fmt.Errorf("--binary %s: no executable segment at file offset %#x, where the profile maps %s at %#x-%#x (expected the same build of the profiled program)",
				path, m.Offset, m.File, m.Start, m.Limit)
		}
	}
	fs.obj = o
	fs.located = true
	s.checkSize(fs, o)
	s.checkBuild(fs, o, mainPath)
	return nil
}

// checkBuild notes, for a warning, when --binary o is not the build the
// profile maps at mainPath: the build ID the profile gives for it, else
// that of the file there now (which may itself be a later build).
func (s *session) checkBuild(fs *fileState, o *object, mainPath string) {
	if o.buildID == "" {
		return
	}
	for _, m := range s.maps {
		if m.file == fs && m.BuildID != "" {
			if !strings.EqualFold(m.BuildID, o.buildID) {
				fs.caution = fmt.Sprintf("--binary %s: its build ID %s is not %s, the one the profile gives %s; names from it are likely wrong", o.path, short(o.buildID), short(m.BuildID), mainPath)
			}
			return
		}
	}
	ef, err := elf.Open(mainPath)
	if err != nil {
		return // nothing there to compare with
	}
	defer ef.Close()
	for _, m := range s.maps {
		if m.file == fs && (m.Deleted || replacedSince(m.Mapping, s.p.Source.Path)) {
			return // the file there now is not the build that ran: --binary may well be
		}
	}
	if id := readBuildID(ef); id != "" && !strings.EqualFold(id, o.buildID) {
		fs.caution = fmt.Sprintf("--binary %s: its build ID %s is not %s, that of %s, the file the profile maps; if that file is the build that ran, names from --binary are wrong", o.path, short(o.buildID), short(id), mainPath)
	}
}

// short is a build ID cut to the 12 hex digits names show.
func short(id string) string { return id[:min(len(id), 12)] }

// checkSize notes, for a warning, when a file's executable segment does
// not have the length of the profile's mapping of it.
func (s *session) checkSize(fs *fileState, o *object) {
	for _, m := range s.maps {
		if m.file == fs && !o.sizeMatches(m.Offset, m.Limit-m.Start) {
			fs.caution = fmt.Sprintf("%s: its code is not the size of the profile's mapping %#x-%#x (a different build?); names from it may be wrong", o.path, m.Start, m.Limit)
			return
		}
	}
}

// placeWithoutMaps handles --binary for a profile without mappings: a
// non-PIE executable is loaded where its program headers say.
func (s *session) placeWithoutMaps(o *object) error {
	if o.typ != elf.ET_EXEC {
		return nil // warned about in warnings(): a PIE load address is unknown
	}
	fs := &fileState{path: o.path, obj: o}
	s.files[o.path] = fs
	for _, seg := range o.segs {
		if seg.exec {
			m := parse.Mapping{Start: seg.vaddr, Limit: seg.vaddr + seg.filesz, Offset: seg.off, File: o.path}
			s.maps = append(s.maps, mapState{Mapping: m, file: fs})
		}
	}
	sort.SliceStable(s.maps, func(i, j int) bool { return s.maps[i].Start < s.maps[j].Start })
	s.last = 0 // the mappings moved
	return nil
}

// locate finds the file for a mapping among the candidates (see
// candidates), keeping the first that is ELF and fits the mapping.
func (s *session) locate(fs *fileState, m parse.Mapping) {
	if !isFilePath(m.File) && m.BuildID == "" {
		// Nothing to look for: memory no file backs (generated code,
		// the vdso). The warning says so rather than "cannot open".
		fs.problem = fmt.Sprintf("the profile's mapping %#x-%#x names no file", m.Start, m.Limit)
		if m.File != "" {
			fs.problem = fmt.Sprintf("the profile's mapping %s at %#x-%#x is no file", m.File, m.Start, m.Limit)
		}
		return
	}
	// Of several failed candidates the report names the most telling: a
	// file found but wrong beats one that is not ELF beats one not found.
	problem, rank := "", -1
	// Among equals, the mapped path itself is the one to name.
	note := func(r int, c, msg string) {
		if r > rank || (r == rank && c == m.File) {
			problem, rank = msg, r
		}
	}
	for _, c := range s.candidates(m) {
		o, err := loadObject(c)
		switch {
		case errors.Is(err, errNotELF):
			note(2, c, fmt.Sprintf("%s: not an ELF file", c))
		case errors.Is(err, errNoFile) || errors.Is(err, errIsDir) || (err != nil && !exists(c)):
			// Also a path no file can have (a NUL byte, a file as a
			// directory), and a directory (a dump from another machine
			// whose program's path is a directory here): no object is
			// there.
			note(0, c, fmt.Sprintf("cannot open %s: %v", c, err))
		case err != nil:
			note(1, c, fmt.Sprintf("cannot open %s: %v", c, err))
		case m.BuildID != "" && o.buildID != "" && !strings.EqualFold(m.BuildID, o.buildID):
			note(3, c, fmt.Sprintf("%s: build-id %s does not match the profile's %s", c, o.buildID, m.BuildID))
		case !o.fits(m.Offset, m.Limit-m.Start):
			note(3, c, fmt.Sprintf("%s: no executable segment at file offset %#x as the profile's mapping needs (a different build?)", c, m.Offset))
		default:
			s.addDebugFile(o)
			fs.obj = o
			s.checkSize(fs, o)
			switch {
			case c != m.File || fs.caution != "":
			case m.Deleted:
				fs.caution = fmt.Sprintf("%s: the profile's maps say it was deleted or replaced after the process mapped it; its names come from the file there now, wrong if that is another build (--binary or --symbol-path can give the build that ran)", c)
			case replacedSince(m, s.p.Source.Path):
				fs.caution = fmt.Sprintf("%s: written after the profile was (rebuilt or upgraded since?); its names come from the file there now, wrong if that is another build (--binary or --symbol-path can give the build that ran)", c)
			}
			return
		}
	}
	fs.problem = problem
	if rank >= 1 && rank < 3 && s.fatal == nil && usablePath(m.File) && !(s.opt.DropAllocator && isAllocatorLib(m.File)) {
		// The mapped file is there but is no ELF object (or cannot be
		// read): not the "dump from another machine" case, where the file
		// is simply absent, but a wrong or damaged file at that path. (An
		// allocator library read only to tell its own memory apart,
		// namesOwnMemory, whose frames are dropped, is no reason to stop.)
		loc := s.p.Source.Path
		if m.Line > 0 && s.p.MapsLine > 0 {
			loc = fmt.Sprintf("%s:%d", loc, s.p.MapsLine+m.Line-1)
		}
		s.fatal = fmt.Errorf("%s: MAPPED_LIBRARIES: %s (expected an ELF executable or shared library there; --symbol-path DIR can supply the right one)", loc, problem)
	}
	fs.hint = "use --symbol-path"
	if fs.path == s.mainPath() {
		fs.hint = "use --binary or --symbol-path"
	}
}

// exists reports whether something is at path.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// candidates lists where a mapped file may be: by build-id and by name in
// the --symbol-path directories, then at its own path.
func (s *session) candidates(m parse.Mapping) []string {
	var out []string
	if m.BuildID != "" {
		out = append(out, s.buildIDPaths(m.BuildID)...)
	}
	base := filepath.Base(m.File)
	for _, dir := range s.opt.SymbolPath {
		out = append(out, filepath.Join(dir, base))
		if filepath.IsAbs(m.File) {
			out = append(out, filepath.Join(dir, m.File))
		}
	}
	return append(out, m.File)
}

// buildIDPaths are the separate-debug-file paths for a build-id.
func (s *session) buildIDPaths(id string) []string {
	id = strings.ToLower(id)
	if len(id) < 3 {
		return nil
	}
	var out []string
	for _, dir := range append(append([]string{}, s.opt.SymbolPath...), systemDebugDirs...) {
		out = append(out, filepath.Join(dir, ".build-id", id[:2], id[2:]+".debug"))
	}
	return out
}

// debugLinkPaths are where gdb looks for the separate debug file that o's
// .gnu_debuglink names: beside it, in .debug beside it, and under the
// debug directories (--symbol-path first) by its directory; and, as
// --symbol-path's help promises, in each --symbol-path directory itself.
func (s *session) debugLinkPaths(o *object) []string {
	if o.debugLink == "" {
		return nil
	}
	dir := filepath.Dir(o.path)
	out := []string{filepath.Join(dir, o.debugLink), filepath.Join(dir, ".debug", o.debugLink)}
	for _, d := range s.opt.SymbolPath {
		out = append(out, filepath.Join(d, o.debugLink))
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return out
	}
	for _, d := range append(append([]string{}, s.opt.SymbolPath...), systemDebugDirs...) {
		out = append(out, filepath.Join(d, abs, o.debugLink))
	}
	return out
}

// isDebugFileOf reports whether dbg, found at path by o's build-id or
// debug link, is o's debug file: the same build-id where both have one,
// else the CRC-32 the debug link gives (the file's own, read whole).
func isDebugFileOf(dbg, o *object, byLink bool) bool {
	if dbg.buildID != "" && o.buildID != "" {
		return strings.EqualFold(dbg.buildID, o.buildID)
	}
	if !byLink {
		return true
	}
	f, err := os.Open(dbg.path)
	if err != nil {
		return false
	}
	defer f.Close()
	h := crc32.NewIEEE()
	if _, err := io.Copy(h, f); err != nil {
		return false
	}
	return h.Sum32() == o.debugLinkCRC
}

// addDebugFile completes a stripped object with the symbols and DWARF of
// its separate debug file, found by build-id or by its .gnu_debuglink,
// keeping its own program headers. Only the debug file's symbols are read
// now; its DWARF is read when a lookup needs it.
func (s *session) addDebugFile(o *object) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if (o.buildID == "" && o.debugLink == "") || (o.tab.src == ".symtab" && o.dwarfPath != "") {
		return
	}
	var byID []string
	if o.buildID != "" {
		byID = s.buildIDPaths(o.buildID)
	}
	for i, c := range append(byID, s.debugLinkPaths(o)...) {
		if c == o.path {
			continue
		}
		if _, err := os.Stat(c); err != nil {
			continue
		}
		dbg, err := openObject(c)
		if err != nil || !isDebugFileOf(dbg, o, i >= len(byID)) {
			continue
		}
		if len(dbg.tab.syms) > 0 && o.tab.src != ".symtab" {
			o.tab = dbg.tab
			o.short, o.shortAt = nil, nil // indexes of the old table
		}
		if dbg.dwarfPath != "" && o.dwarfPath == "" {
			o.dwarfPath = dbg.dwarfPath
		}
		return
	}
}

// resolve names one address, and the calls inlined there: from the
// profile's own symbols, else from the mapped file.
func (s *session) resolve(addr uint64, leaf bool) (resolved, []inlFrame) {
	pc := instrPC(addr, leaf && !s.p.ReturnAddrs)
	if name, inl, ok := s.fromProfileSymbols(pc, addr); ok {
		return resolved{fn: name}, inl
	}
	m := s.mappingFor(pc)
	if m == nil || !s.usable(m) {
		return resolved{}, nil
	}
	o := m.file.obj
	vaddr, ok := m.toVaddr(o, pc-m.Start+m.Offset)
	if !ok {
		return resolved{}, nil
	}
	r, inl, _ := o.resolveVaddr(vaddr, s.opt.Lines, s.inlines(o), func() *dwarfInfo { return s.dwarfFor(o) })
	switch {
	case !s.opt.Lines || r.fn == "" || s.opt.DropAllocator && m.allocator:
	case r.line > 0:
		m.file.lined++
	default:
		m.file.unlined++
	}
	if r.fn == "" {
		if start, ok := o.funcStart(vaddr); ok {
			r.fn = s.module(m) + "!sub_" + strconv.FormatUint(start, 16)
			if !s.opt.DropAllocator || !m.allocator {
				m.file.byStart++ // an allocator library's frames are dropped: nothing to warn of
			}
		}
	}
	return r, inl
}

// mayName reports whether the file mapped at a frame address can be used
// to name it, locating the file on first use: a dump whose binary is
// absent (from another machine, or stripped) then costs nothing per
// address beyond this lookup.
func (s *session) mayName(addr uint64, leaf bool) bool {
	m := s.mappingFor(instrPC(addr, leaf && !s.p.ReturnAddrs))
	return m != nil && s.usable(m)
}

// instrPC is the instruction a frame address stands for: the address of
// a leaf, the byte before a return address (the call).
func instrPC(addr uint64, leaf bool) uint64 {
	if leaf {
		return addr
	}
	return addr - 1
}

// usable reports whether m's file was found and opened, looking for it on
// first use: a process maps many libraries its sampled stacks never
// enter.
func (s *session) usable(m *mapState) bool {
	if !m.file.located {
		m.file.located = true
		if m.file.obj == nil {
			s.locate(m.file, m.Mapping)
		}
	}
	return m.file.obj != nil
}

// dwarfFor returns o's DWARF, loading it on first use in this call.
func (s *session) dwarfFor(o *object) *dwarfInfo {
	o.mu.Lock()
	path := o.dwarfPath
	o.mu.Unlock()
	if path == "" {
		return nil
	}
	dw, ok := s.dwarf[path]
	if !ok {
		dw = loadDWARF(path, s.opt.Lines, s.inlines(o))
		s.dwarf[path] = dw
	}
	return dw
}

// inlines reports whether o's inlined calls are wanted (Options.NoInlines):
// not in a Go binary, nor from a debug file found only in the system's
// debug directory (systemDebug).
func (s *session) inlines(o *object) bool {
	if s.opt.NoInlines || o.goBinary {
		return false
	}
	want, ok := s.inlinesOf[o]
	if !ok { // once per file: an address asks
		o.mu.Lock()
		path := o.dwarfPath
		o.mu.Unlock()
		want = !s.systemDebug(path)
		if s.inlinesOf == nil {
			s.inlinesOf = map[*object]bool{}
		}
		s.inlinesOf[o] = want
	}
	return want
}

// systemDebug reports whether path lies in a system debug directory
// (/usr/lib/debug: a distribution's -dbgsym and -dbg packages) that no
// --symbol-path names. Such files are read for the names a symbol table
// lacks and for --lines, not for inlined calls: they are the
// distribution's libraries (libc, libstdc++), whose inlined internals a
// heap profile is seldom read for, and their compressed DWARF took 60 ms
// of every run on libc's alone. --symbol-path /usr/lib/debug asks for them.
func (s *session) systemDebug(path string) bool {
	within := func(dir string) bool {
		rel, err := filepath.Rel(dir, path)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
	}
	for _, dir := range s.opt.SymbolPath {
		if within(dir) {
			return false
		}
	}
	for _, dir := range systemDebugDirs {
		if within(dir) {
			return true
		}
	}
	return false
}

// hasNames reports whether o can name functions at all: it has symbols,
// or DWARF with compilation units (as far as this call has read it).
func (s *session) hasNames(o *object) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.tab.syms) > 0 {
		return true
	}
	dw, loaded := s.dwarf[o.dwarfPath]
	if !loaded {
		return o.dwarfPath != ""
	}
	return dw != nil && len(dw.units) > 0
}

// fromProfileSymbols looks pc (then the unadjusted address) up in a
// symbolized profile's table. jeprof writes inlined chains as
// "outer--inner--": the outermost function is the frame's own, the others
// its inlined calls (innermost first, unless Options.NoInlines).
func (s *session) fromProfileSymbols(pc, addr uint64) (string, []inlFrame, bool) {
	if len(s.p.Symbols) == 0 {
		return "", nil, false
	}
	name, ok := s.p.Symbols[pc]
	if !ok {
		name, ok = s.p.Symbols[addr]
	}
	if !ok {
		return "", nil, false
	}
	parts := strings.Split(strings.TrimSuffix(name, "--"), "--")
	name = ShortenDemangled(parts[0])
	if name == "" {
		return "", nil, false
	}
	var inl []inlFrame
	for i := len(parts) - 1; i > 0 && !s.opt.NoInlines; i-- {
		if fn := ShortenDemangled(parts[i]); fn != "" {
			inl = append(inl, inlFrame{fn: fn})
		}
	}
	return name, inl, true
}

// mappingFor returns the mapping addr lies in, nil when none.
func (s *session) mappingFor(addr uint64) *mapState {
	ms := s.maps
	// The last mapping found is the one the search below would find when
	// addr lies in it and the next mapping starts after addr.
	if i := s.last - 1; i >= 0 && ms[i].Start <= addr && addr < ms[i].Limit && (i+1 == len(ms) || ms[i+1].Start > addr) {
		return &ms[i]
	}
	i := sort.Search(len(ms), func(i int) bool { return ms[i].Start > addr }) - 1
	if i >= 0 && addr < ms[i].Limit {
		s.last = i + 1
		return &ms[i]
	}
	return nil
}

// resolve names the file offset off of a mapping at file offset mapOff:
// the function from the symbol table, else from DWARF, and with lines the
// position from DWARF. dwarf supplies the DWARF (nil when there is none);
// it is called only when the symbol table is not enough.
func (o *object) resolve(mapOff, off uint64, lines, inlines bool, dwarf func() *dwarfInfo) (resolved, bool) {
	vaddr, ok := o.toVaddr(mapOff, off)
	if !ok {
		return resolved{}, false
	}
	r, _, ok := o.resolveVaddr(vaddr, lines, inlines, dwarf)
	return r, ok
}

// resolveVaddr is resolve for an ELF virtual address; with inlines, the
// calls inlined there too.
func (o *object) resolveVaddr(vaddr uint64, lines, inlines bool, dwarf func() *dwarfInfo) (r resolved, inl []inlFrame, ok bool) {
	n := o.funcName(vaddr)
	r = resolved{fn: n.name, alloc: n.alloc, inner: n.inner, allocKnown: n.name != ""}
	if r.fn != "" && !lines && !inlines {
		return r, nil, true
	}
	dw := dwarf()
	if dw == nil {
		return r, nil, r.fn != ""
	}
	file, line, fn := dw.lookup(vaddr)
	if lines {
		r.file, r.line = file, line
	}
	if r.fn == "" && fn != "" {
		r.fn = dw.demangle(fn)
	}
	if inlines && r.fn != "" {
		inl = dw.inlinedAt(vaddr)
		for i := range inl {
			inl[i].fn = dw.demangle(inl[i].fn)
		}
	}
	return r, inl, r.fn != ""
}

// unlinedWarning names, with Options.Lines, the files none of whose named
// addresses got a source line ("" when there are none): their frames are
// functions. One warning for all of them, as a dump maps many libraries
// without debug information (libc's, libstdc++'s).
func (s *session) unlinedWarning(paths []string) string {
	var files []string
	for _, p := range paths {
		if fs := s.files[p]; fs.unlined > 0 && fs.lined == 0 {
			files = append(files, filepath.Base(p))
		}
	}
	if len(files) == 0 {
		return ""
	}
	return fmt.Sprintf("--lines: no source line in %s (no DWARF line tables: install the debug symbols, or give their directory with --symbol-path): their frames are functions", strings.Join(files, ", "))
}

// warnings lists, per file, why addresses stayed unresolved.
func (s *session) warnings() []string {
	var out []string
	paths := make([]string, 0, len(s.files))
	for p := range s.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fs := s.files[p]
		if fs.caution != "" {
			out = append(out, fs.caution)
		}
		if fs.obj != nil {
			fs.obj.mu.Lock()
			path := fs.obj.dwarfPath
			fs.obj.mu.Unlock()
			if dw := s.dwarf[path]; path != "" && dw != nil && dw.split && (s.opt.Lines || s.inlines(fs.obj)) {
				out = append(out, fmt.Sprintf("%s: its DWARF is split into .dwo files (-gsplit-dwarf), which heapest does not read: lines come from the file itself, but calls inlined there are not frames, and a frame inside one is at the line of the code inlined", fs.obj.path))
			}
		}
		if fs.byStart > 0 {
			out = append(out, fmt.Sprintf("%s: %s outside every function symbol, each named by where its function starts in the file's unwind tables (…!sub_ADDRESS); use --symbol-path with a directory holding its debug file for real names", fs.obj.path, addresses(fs.byStart)))
		}
		if fs.unresolved == 0 {
			continue
		}
		n := addresses(fs.unresolved)
		hasSymbols := false
		if fs.obj != nil {
			hasSymbols = s.hasNames(fs.obj)
		}
		switch {
		case fs.obj == nil && !fs.located:
			// Only an allocator library's addresses are never looked up
			// (Need): its frames are dropped from the top of stacks, but
			// these lie below a frame outside it (libtcmalloc's exit
			// handler under libc's __cxa_finalize).
			out = append(out, fmt.Sprintf("%s: %s of this allocator library left unnamed: its frames are not looked up, as they are dropped from the top of stacks, but these lie below other frames; --keep-allocator-frames names them", fs.path, n))
		case fs.obj == nil && fs.hint == "":
			out = append(out, fmt.Sprintf("%s; %s unsymbolized", fs.problem, n))
		case fs.obj == nil:
			out = append(out, fmt.Sprintf("%s; %s unsymbolized; %s", fs.problem, n, fs.hint))
		case !hasSymbols:
			out = append(out, fmt.Sprintf("%s: no symbol table or DWARF (stripped); %s unsymbolized; use --symbol-path with a directory holding its debug file", fs.obj.path, n))
		default:
			out = append(out, fmt.Sprintf("%s: %s outside every function symbol (local symbols stripped?); use --symbol-path with a directory holding its debug file", fs.obj.path, n))
		}
	}
	if w := s.unlinedWarning(paths); w != "" {
		out = append(out, w)
	}
	if s.garbage > 0 {
		out = append(out, fmt.Sprintf("%s no code can be at (below 64 KiB, or above user space): the stack unwinder returned garbage, "+
			"as gperftools' TCMALLOC_STACKTRACE_METHOD=generic_fp does in a libtcmalloc built without frame pointers; the stacks holding them are not the program's", addresses(s.garbage)))
	}
	if s.outside > 0 {
		n := addresses(s.outside)
		switch {
		case len(s.maps) == 0 && s.opt.Binary != "":
			out = append(out, fmt.Sprintf("the profile has no mappings and %s is position-independent, so its load address is unknown; %s unsymbolized", s.opt.Binary, n))
		case len(s.maps) == 0:
			out = append(out, fmt.Sprintf("the profile has no mappings (no MAPPED_LIBRARIES section?); %s unsymbolized; use --binary for a non-PIE executable", n))
		default:
			out = append(out, fmt.Sprintf("%s outside every executable mapping of the profile left unsymbolized: code unmapped before the dump (a library the program dlclose'd) or not mapped from a file (generated code)", n))
		}
	}
	return out
}

func addresses(n int) string {
	if n == 1 {
		return "1 address"
	}
	return fmt.Sprintf("%d addresses", n)
}

// ModuleKey is aggregate.ModuleNamer: it names an address by the file it
// is mapped from and its offset in that file, "libfoo.so" (with the
// file's build ID, "libfoo.so[3f2a…]", when the profile or the file gives
// one) and 0x1a2b: the same in every process that loaded that build,
// wherever it was loaded. The mapping is nil when no mapping of a named
// file holds addr. Call it after Resolve, which opens the files whose
// build IDs it may add.
func (ss *Session) ModuleKey(addr uint64) (module string, offset uint64, m *parse.Mapping) {
	ms := ss.s.mappingFor(addr)
	if ms == nil || ms.File == "" {
		return "", 0, nil
	}
	if ms.module == "" {
		ss.s.module(ms)
		ms.whole = ms.Mapping
		if ms.whole.BuildID == "" && ms.file != nil && ms.file.obj != nil {
			ms.whole.BuildID = ms.file.obj.buildID
		}
	}
	return ms.module, addr - ms.Start + ms.Offset, &ms.whole
}

// Build identifies the profiled program's build: its main file's build ID
// where the profile or the file gives one, else the main file's path. ""
// when the profile maps no file.
func (ss *Session) Build() string {
	s := ss.s
	path := s.mainPath()
	for i := range s.maps {
		if m := &s.maps[i]; m.File == path {
			if id := s.buildID(m); id != "" {
				return filepath.Base(path) + "[" + id + "]"
			}
			break
		}
	}
	return path
}

// module names m's file as unnamed frames in it are named: its base name
// and the start of its build ID.
func (s *session) module(m *mapState) string {
	if m.module == "" {
		m.module = filepath.Base(m.File)
		if id := s.buildID(m); id != "" {
			m.module += "[" + id + "]"
		}
	}
	return m.module
}

// buildID is a mapping's build ID, shortened to 12 hex digits (enough to
// tell builds apart in a name): from the profile, else from the file when
// it was opened for symbols.
func (s *session) buildID(m *mapState) string {
	id := m.BuildID
	if id == "" && m.file != nil && m.file.obj != nil {
		id = m.file.obj.buildID
	}
	return short(id)
}
