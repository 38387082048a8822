package symbolize

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
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
}

// systemDebugDirs hold separate debug files of installed packages
// (Debian's *-dbg and *-dbgsym packages install under .build-id there).
var systemDebugDirs = []string{"/usr/lib/debug"}

// Symbolize fills Func, File and Line of every frame of p's records (and
// thread records) that has an address and no name yet. When p has no
// Mappings but a raw maps copy (MapsText), it parses that first and stores
// the result in p.Mappings. Names come first from p.Symbols (a
// symbolized jeprof --raw file), then from the ELF symbol tables and DWARF
// of the mapped files, demangled to pprof's short form. Frames that cannot
// be resolved keep Func "".
//
// As jeprof does, every frame but the leaf is a return address and is
// looked up one byte earlier, so that a call ending its function resolves
// to the caller's line; Frame.Addr itself is left unchanged.
//
// Missing, unreadable, non-ELF or mismatched files are warnings, one per
// file with the number of addresses left unresolved. A file given with
// --binary that cannot be used is an error naming it and what was expected.
func Symbolize(p *parse.Profile, opt Options) (warnings []string, err error) {
	s := &session{
		p: p, opt: opt,
		files: map[string]*fileState{},
		cache: map[frameKey]resolved{},
	}
	var mapsWarning string
	if len(p.Mappings) == 0 && len(p.MapsText) > 0 {
		maps, err := ParseMaps(p.MapsText)
		if err != nil {
			mapsWarning = "MAPPED_LIBRARIES: " + err.Error()
		}
		p.Mappings = maps
	}
	if err := s.setup(); err != nil {
		return nil, err
	}
	s.symbolizeRecords(p.Records)
	s.symbolizeRecords(p.ThreadRecords)
	warnings = s.warnings()
	if mapsWarning != "" {
		warnings = append([]string{mapsWarning}, warnings...)
	}
	return warnings, nil
}

// symbolizeRecords resolves the frames of records and, when asked, drops
// their allocator frames.
func (s *session) symbolizeRecords(recs []parse.Record) {
	for i := range recs {
		s.symbolizeStack(recs[i].Stack)
		if s.opt.DropAllocator {
			recs[i].Stack = s.dropAllocator(recs[i].Stack)
		}
	}
}

// session is the state of one Symbolize call.
type session struct {
	p    *parse.Profile
	opt  Options
	maps []mapState // sorted by Start
	// files holds one state per mapped path: each file is opened once.
	files map[string]*fileState
	cache map[frameKey]resolved
	// outside counts addresses in no mapping and not in p.Symbols.
	outside int
}

type mapState struct {
	parse.Mapping
	file      *fileState
	allocator bool // libjemalloc/libtcmalloc: all its frames are allocator frames
}

// fileState is what came of looking for one mapped file.
type fileState struct {
	path       string // as the mapping names it
	obj        *object
	problem    string // why obj is nil or cannot be trusted
	hint       string
	unresolved int // distinct addresses in this file left without a name
}

type frameKey struct {
	addr uint64
	leaf bool
}

type resolved struct {
	fn, file string
	line     int
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
		s.maps = append(s.maps, mapState{Mapping: m, file: fs, allocator: isAllocatorLib(m.File)})
	}
	sort.SliceStable(s.maps, func(i, j int) bool { return s.maps[i].Start < s.maps[j].Start })
	if s.opt.Binary != "" {
		if err := s.openBinary(mainPath); err != nil {
			return err
		}
	}
	for _, m := range s.maps {
		if m.file.obj == nil && m.file.problem == "" {
			s.locate(m.file, m.Mapping)
		}
	}
	return nil
}

// mainPath is the mapped path --binary stands for: the one with its base
// name, else the first mapping's.
func (s *session) mainPath() string {
	if len(s.p.Mappings) == 0 {
		return ""
	}
	if s.opt.Binary != "" {
		want := filepath.Base(s.opt.Binary)
		for _, m := range s.p.Mappings {
			if filepath.Base(m.File) == want {
				return m.File
			}
		}
	}
	return s.p.Mappings[0].File
}

// openBinary loads --binary for mainPath's mappings. Unlike a file found
// on its own, it must open, be ELF, and fit the mappings it stands for.
func (s *session) openBinary(mainPath string) error {
	path := s.opt.Binary
	o, err := openObject(path)
	if err != nil {
		return fmt.Errorf("--binary %s: %v (expected an ELF executable or shared object)", path, err)
	}
	s.addDebugFile(o)
	fs := s.files[mainPath]
	if fs == nil {
		return s.placeWithoutMaps(o)
	}
	for _, m := range s.maps {
		if m.file == fs && !o.fits(m.Offset) {
			return fmt.Errorf("--binary %s: no executable segment at file offset %#x, where the profile maps %s at %#x-%#x (expected the same build of the profiled program)",
				path, m.Offset, m.File, m.Start, m.Limit)
		}
	}
	fs.obj = o
	return nil
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
	return nil
}

// locate finds the file for a mapping among the candidates (see
// candidates), keeping the first that is ELF and fits the mapping.
func (s *session) locate(fs *fileState, m parse.Mapping) {
	var firstProblem string
	for _, c := range s.candidates(m) {
		o, err := openObject(c)
		if err != nil {
			if firstProblem == "" || c == m.File {
				firstProblem = fmt.Sprintf("cannot open %s: %v", c, err)
				if errors.Is(err, errNotELF) {
					firstProblem = fmt.Sprintf("%s: not an ELF file", c)
				}
			}
			continue
		}
		if m.BuildID != "" && o.buildID != "" && !strings.EqualFold(m.BuildID, o.buildID) {
			firstProblem = fmt.Sprintf("%s: build-id %s does not match the profile's %s", c, o.buildID, m.BuildID)
			continue
		}
		if !o.fits(m.Offset) {
			firstProblem = fmt.Sprintf("%s: no executable segment at file offset %#x as the profile's mapping needs (a different build?)", c, m.Offset)
			continue
		}
		s.addDebugFile(o)
		fs.obj = o
		return
	}
	fs.problem = firstProblem
	fs.hint = "use --symbol-path"
	if fs.path == s.mainPath() {
		fs.hint = "use --binary or --symbol-path"
	}
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

// addDebugFile completes a stripped object with the symbols and DWARF of
// its separate debug file, found by build-id, keeping its own program
// headers.
func (s *session) addDebugFile(o *object) {
	if o.buildID == "" || (len(o.syms) > 0 && o.dw != nil && o.symSrc == ".symtab") {
		return
	}
	for _, c := range s.buildIDPaths(o.buildID) {
		if _, err := os.Stat(c); err != nil {
			continue
		}
		dbg, err := openObject(c)
		if err != nil || (dbg.buildID != "" && dbg.buildID != o.buildID) {
			continue
		}
		if len(dbg.syms) > 0 && o.symSrc != ".symtab" {
			o.syms, o.symSrc = dbg.syms, dbg.symSrc
		}
		if dbg.dw != nil && o.dw == nil {
			o.dw = dbg.dw
		}
		return
	}
}

// symbolizeStack resolves the unnamed frames of one stack, leaf first.
func (s *session) symbolizeStack(stack []parse.Frame) {
	for i := range stack {
		f := &stack[i]
		if f.Func != "" || f.Addr == 0 {
			continue
		}
		k := frameKey{addr: f.Addr, leaf: i == 0}
		r, ok := s.cache[k]
		if !ok {
			r = s.resolve(k)
			s.cache[k] = r
		}
		f.Func, f.File, f.Line = r.fn, r.file, r.line
	}
}

// resolve names one address: from the profile's own symbols, else from the
// mapped file.
func (s *session) resolve(k frameKey) resolved {
	pc := k.addr
	if !k.leaf {
		pc-- // a return address: the call is the byte before
	}
	if name, ok := s.fromProfileSymbols(pc, k.addr); ok {
		return resolved{fn: name}
	}
	m := s.mappingFor(pc)
	if m == nil {
		s.outside++
		return resolved{}
	}
	fs := m.file
	if fs.obj == nil {
		fs.unresolved++
		return resolved{}
	}
	r, ok := fs.obj.resolve(pc - m.Start + m.Offset)
	if !ok {
		fs.unresolved++
	}
	return r
}

// fromProfileSymbols looks pc (then the unadjusted address) up in a
// symbolized profile's table. jeprof writes inlined chains as
// "outer--inner--"; the outermost function is the frame's own.
func (s *session) fromProfileSymbols(pc, addr uint64) (string, bool) {
	if len(s.p.Symbols) == 0 {
		return "", false
	}
	name, ok := s.p.Symbols[pc]
	if !ok {
		name, ok = s.p.Symbols[addr]
	}
	if !ok {
		return "", false
	}
	name, _, _ = strings.Cut(name, "--")
	name = strings.TrimSpace(name)
	if name == "" {
		return "", false
	}
	return Demangle(name), true
}

func (s *session) mappingFor(addr uint64) *mapState {
	ms := s.maps
	i := sort.Search(len(ms), func(i int) bool { return ms[i].Start > addr }) - 1
	if i >= 0 && addr < ms[i].Limit {
		return &ms[i]
	}
	return nil
}

// resolve names a file offset: the function from the symbol table (else
// DWARF), the position from DWARF.
func (o *object) resolve(off uint64) (resolved, bool) {
	vaddr, ok := o.toVaddr(off)
	if !ok {
		return resolved{}, false
	}
	var r resolved
	var dwFn string
	if o.dw != nil {
		r.file, r.line, dwFn = o.dw.lookup(vaddr)
	}
	if sym, ok := o.lookupSymbol(vaddr); ok {
		r.fn = o.demangle(sym.name)
	} else if dwFn != "" {
		r.fn = o.demangle(dwFn)
	}
	return r, r.fn != ""
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
		if fs.unresolved == 0 {
			continue
		}
		switch {
		case fs.obj == nil:
			out = append(out, fmt.Sprintf("%s; %d addresses unsymbolized; %s", fs.problem, fs.unresolved, fs.hint))
		case !fs.obj.hasSymbols():
			out = append(out, fmt.Sprintf("%s: no symbol table or DWARF (stripped); %d addresses unsymbolized; use --symbol-path with a directory holding its debug file", fs.obj.path, fs.unresolved))
		default:
			out = append(out, fmt.Sprintf("%s: %d addresses outside every function symbol (local symbols stripped?); use --symbol-path with a directory holding its debug file", fs.obj.path, fs.unresolved))
		}
	}
	if s.outside > 0 {
		switch {
		case len(s.maps) == 0 && s.opt.Binary != "":
			out = append(out, fmt.Sprintf("the profile has no mappings and %s is position-independent, so its load address is unknown; %d addresses unsymbolized", s.opt.Binary, s.outside))
		case len(s.maps) == 0:
			out = append(out, fmt.Sprintf("the profile has no mappings (no MAPPED_LIBRARIES section?); %d addresses unsymbolized; use --binary for a non-PIE executable", s.outside))
		default:
			out = append(out, fmt.Sprintf("%d addresses lie outside every executable mapping of the profile; left unsymbolized", s.outside))
		}
	}
	return out
}
