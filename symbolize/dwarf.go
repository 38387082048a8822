package symbolize

import (
	"cmp"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// dwarfInfo indexes a file's compilation units by address range. A unit's
// line table and functions are read the first time an address falls in it,
// so a large binary costs only the units its stacks touch. The last few
// files read are kept (dwarfCache): the dumps of a fleet map the same
// libraries. Its methods are safe for concurrent use.
type dwarfInfo struct {
	mu    sync.Mutex // the units read so far, and demangled
	d     *dwarf.Data
	units []unitRange // sorted by lo
	cus   []*unit
	// lines says whether positions are wanted: without them a unit's line
	// table is not read. inlines says whether the calls inlined at an
	// address are wanted (inlinedAt). Without either, only a unit's
	// functions are.
	lines, inlines bool
	// demangled caches Demangle per DWARF function name.
	demangled map[string]string
	// names caches nameAt per entry.
	names map[dwarf.Offset]string
	// split says some unit's entries are in a split DWARF file (.dwo,
	// -gsplit-dwarf), which is not read: its line table is, from the
	// unit's skeleton in the file itself, but not its functions or
	// inlined calls.
	split bool
}

type unitRange struct {
	lo, hi uint64
	cu     int
}

// unit is one compilation unit's line rows, functions and outermost inlined
// calls, each sorted by address.
type unit struct {
	off    dwarf.Offset
	loaded bool
	rows   []lineRow
	files  []string // rows' file names by index
	funcs  []funcRange
	inl    []inlRange
	// subs are, with inlines, the ranges of every inlined call, each
	// function's in the order of its entries (outer calls before the
	// calls inlined into them: see inlinedAt).
	subs []inlSub
}

// lineRow is one row of a line table, 16 bytes so that the binary searches
// over large units stay in cache.
type lineRow struct {
	pc   uint64
	file int32 // index in unit.files; endSequence: no code from pc on
	line int32
}

const endSequence = -1

type funcRange struct {
	lo, hi uint64
	name   string // linkage (mangled) name when known, else the plain name
	// subs are the function's inlined calls: unit.subs[from:to].
	from, to int32
}

// inlSub is one range of an inlined call: the function inlined, its depth
// (0 for a call inlined into the function itself, 1 for one inlined into
// that, ...) and where it was called from (file "" when not read).
type inlSub struct {
	lo, hi uint64
	depth  int32
	line   int32
	entry  dwarf.Offset // the call's entry, named when a chain needs it
	file   string
}

// inlFrame is one call inlined at an address: its function (a linkage
// name, to be demangled) and, with lines, the position in it.
type inlFrame struct {
	fn, file string
	line     int
}

// inlRange is an inlined call not itself inside another inlined call: for
// a pc in it, the function's own source position is the call site.
type inlRange struct {
	lo, hi uint64
	file   string
	line   int
}

// attrGNUDwoName is DW_AT_GNU_dwo_name, a split unit's .dwo file before
// DWARF 5.
const attrGNUDwoName dwarf.Attr = 0x2130

// tagGNUCallSite is DW_TAG_GNU_call_site, which GCC emits before DWARF 5.
const tagGNUCallSite dwarf.Tag = 0x4109

// attrMIPSLinkageName is DW_AT_MIPS_linkage_name, which older GCC emits
// instead of DW_AT_linkage_name.
const attrMIPSLinkageName dwarf.Attr = 0x2007

// dwarfSections are the DWARF sections symbolization reads: entries,
// their abbreviations and strings, line tables and address ranges. The
// others (.debug_frame, .debug_loc*, .debug_types, ...) are never
// decompressed.
var dwarfSections = []string{"abbrev", "info", "str", "line", "ranges", "addr", "line_str", "rnglists", "str_offsets"}

// dwarfLoads counts loadDWARF calls, for tests that check DWARF is read
// only when needed.
var dwarfLoads atomic.Int64

// hasDWARF reports whether ef has debug entries to read.
func hasDWARF(ef *elf.File) bool {
	return ef.Section(".debug_info") != nil || ef.Section(".zdebug_info") != nil
}

// loadDWARF opens path's DWARF and indexes its compilation units, or
// returns nil when it has none (or it is unreadable: the symbol table then
// still names functions).
func loadDWARF(path string, lines, inlines bool) (info *dwarfInfo) {
	st, err := os.Stat(path)
	if err != nil {
		return nil
	}
	key := dwarfKey{objectKey{path: path, size: st.Size(), mtime: st.ModTime().UnixNano()}, lines, inlines}
	if dw, ok := dwarfCache.get(key); ok {
		return dw
	}
	defer func() { dwarfCache.put(key, info) }()
	dwarfLoads.Add(1)
	defer func() {
		if recover() != nil { // malformed DWARF must not stop the run
			info = nil
		}
	}()
	ef, err := elf.Open(path)
	if err != nil {
		return nil
	}
	defer ef.Close()
	d, entries, err := readDWARF(ef, lines)
	if err != nil {
		return nil
	}
	info = &dwarfInfo{d: d, lines: lines, inlines: inlines, demangled: map[string]string{}}
	info.indexUnits(entries)
	return info
}

// readDWARF loads the sections in dwarfSections, and returns with them
// the offsets of the units' first entries (see unitEntries). Relocatable
// objects, whose debug sections need relocating, go through debug/elf's
// DWARF.
func readDWARF(ef *elf.File, lines bool) (*dwarf.Data, []dwarf.Offset, error) {
	if ef.Type == elf.ET_REL {
		d, err := ef.DWARF()
		if err != nil {
			return nil, nil, err
		}
		s := ef.Section(".debug_info")
		if s == nil {
			return d, nil, nil
		}
		b, err := s.Data()
		return d, unitEntries(b, ef.ByteOrder), err
	}
	names := dwarfSections
	if !lines {
		// Names need no line table, the largest section after the
		// entries: it is not decompressed. (.debug_line_str stays: DWARF 5
		// entries name their files in it.)
		names = slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == "line" })
	}
	data, err := sectionsData(ef, names)
	if err != nil {
		return nil, nil, err
	}
	d, err := dwarf.New(data["abbrev"], nil, nil, data["info"], data["line"], nil, data["ranges"], data["str"])
	if err != nil {
		return nil, nil, err
	}
	for _, name := range []string{"addr", "line_str", "rnglists", "str_offsets"} {
		if b, ok := data[name]; ok {
			if err := d.AddSection(".debug_"+name, b); err != nil {
				return nil, nil, err
			}
		}
	}
	return d, unitEntries(data["info"], ef.ByteOrder), nil
}

// sectionsData reads (and decompresses) the named DWARF sections, by name
// without the .debug_ prefix, each in its own goroutine: Go's linker
// compresses them, and decompressing .debug_info and .debug_line at once
// takes about as long as .debug_info alone.
func sectionsData(ef *elf.File, names []string) (map[string][]byte, error) {
	bufs := make([][]byte, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		s := ef.Section(".debug_" + name)
		if s == nil {
			s = ef.Section(".zdebug_" + name)
		}
		if s == nil || s.Type == elf.SHT_NOBITS {
			continue
		}
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil {
					errs[i] = fmt.Errorf("%s: %v", s.Name, r)
				}
			}()
			bufs[i], errs[i] = s.Data()
		})
	}
	wg.Wait()
	data := map[string][]byte{}
	for i, name := range names {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if bufs[i] != nil {
			data[name] = bufs[i]
		}
	}
	return data, nil
}

// unitEntries returns the offset of the first entry of each unit of a
// .debug_info section: the unit's own entry, past the unit header. It
// reads the headers as debug/dwarf does (zero-length padding units are
// skipped) and stops at the first it cannot read.
func unitEntries(info []byte, bo binary.ByteOrder) []dwarf.Offset {
	var out []dwarf.Offset
	for off := uint64(0); off+4 <= uint64(len(info)); {
		n, is64, hdr := uint64(bo.Uint32(info[off:])), false, uint64(4)
		if n == 0xffffffff {
			if off+12 > uint64(len(info)) {
				break
			}
			n, is64, hdr = bo.Uint64(info[off+4:]), true, 12
		}
		if n > uint64(len(info))-off-hdr {
			break
		}
		if n > 0 {
			if size, ok := unitHeaderSize(info[off+hdr:off+hdr+n], bo, is64); ok {
				out = append(out, dwarf.Offset(off+hdr+size))
			}
		}
		off += hdr + n
	}
	return out
}

// unitHeaderSize is the length of a unit header after its unit_length
// field: version, (DWARF 5) unit type and address size, abbreviation
// offset, (before 5) address size, and the fields some DWARF 5 unit types
// add.
func unitHeaderSize(u []byte, bo binary.ByteOrder, is64 bool) (uint64, bool) {
	if len(u) < 2 {
		return 0, false
	}
	offSize := uint64(4)
	if is64 {
		offSize = 8
	}
	version := bo.Uint16(u)
	if version < 2 || version > 5 {
		return 0, false
	}
	size := 2 + offSize + 1
	if version >= 5 && len(u) >= 3 {
		size = 2 + 2 + offSize
		switch u[2] {
		case 4, 5: // DW_UT_skeleton, DW_UT_split_compile: unit id
			size += 8
		case 2, 6: // DW_UT_type, DW_UT_split_type: signature, type offset
			size += 8 + offSize
		}
	}
	// The unit must hold its header and at least one entry.
	return size, size < uint64(len(u))
}

// indexUnits reads the address ranges of every compilation unit from its
// unit entry alone, jumping from unit to unit: none of their children are
// decoded until an address falls in the unit.
func (di *dwarfInfo) indexUnits(entries []dwarf.Offset) {
	r := di.d.Reader()
	for _, off := range entries {
		r.Seek(off)
		e, err := r.Next()
		if err != nil || e == nil {
			continue
		}
		if e.Tag == dwarf.TagCompileUnit || e.Tag == dwarf.TagSkeletonUnit {
			if e.Tag == dwarf.TagSkeletonUnit || e.Val(dwarf.AttrDwoName) != nil || e.Val(attrGNUDwoName) != nil {
				di.split = true
			}
			ranges, _ := di.d.Ranges(e)
			for _, rg := range ranges {
				if rg[1] > rg[0] {
					di.units = append(di.units, unitRange{lo: rg[0], hi: rg[1], cu: len(di.cus)})
				}
			}
			di.cus = append(di.cus, &unit{off: e.Offset})
		}
	}
	sort.Slice(di.units, func(i, j int) bool { return di.units[i].lo < di.units[j].lo })
}

// lookup returns the source position and function of vaddr. file is ""
// when no line row covers it (always, when lines are not wanted), fn ""
// when no function does.
func (di *dwarfInfo) lookup(vaddr uint64) (file string, line int, fn string) {
	di.mu.Lock()
	defer di.mu.Unlock()
	u := di.unitFor(vaddr)
	if u == nil {
		return "", 0, ""
	}
	if r, ok := u.row(vaddr); ok {
		file, line = u.files[r.file], int(r.line)
	}
	if in, ok := u.inlined(vaddr); ok {
		file, line = in.file, in.line
	}
	if f, ok := u.function(vaddr); ok {
		fn = f.name
	}
	return file, line, fn
}

func (di *dwarfInfo) unitFor(vaddr uint64) *unit {
	us := di.units
	i := sort.Search(len(us), func(i int) bool { return us[i].lo > vaddr }) - 1
	for k := 0; k < 4 && i >= 0; k, i = k+1, i-1 {
		if vaddr < us[i].hi {
			u := di.cus[us[i].cu]
			if !u.loaded {
				di.load(u)
			}
			return u
		}
	}
	return nil
}

// load reads a unit's line table and walks its entries for functions and
// outermost inlined calls (only for functions when lines are not wanted).
func (di *dwarfInfo) load(u *unit) {
	u.loaded = true
	defer func() {
		if recover() != nil { // keep what was read before the damage
			u.sortAll()
		}
	}()
	r := di.d.Reader()
	r.Seek(u.off)
	cu, err := r.Next()
	if err != nil || cu == nil {
		return
	}
	var files []*dwarf.LineFile
	if di.lines {
		if lr, err := di.d.LineReader(cu); err == nil && lr != nil {
			absFiles(lr.Files(), cu)
			files = u.readRows(lr)
		}
	}
	if cu.Children {
		di.walk(r, u, files)
	}
	u.sortAll()
}

// absFiles makes the line table's relative file names absolute from the
// unit's compilation directory. A DWARF 5 table (GCC 11 and later) names
// its directories relative to that directory, and debug/dwarf joins a
// file's name to its directory only: "gcc -g src/prog.c" gave
// "src/prog.c", found from no other working directory (heapest list).
func absFiles(files []*dwarf.LineFile, cu *dwarf.Entry) {
	dir, _ := cu.Val(dwarf.AttrCompDir).(string)
	if !path.IsAbs(dir) {
		return
	}
	for _, f := range files {
		if f != nil && f.Name != "" && !path.IsAbs(f.Name) {
			f.Name = path.Join(dir, f.Name)
		}
	}
}

// readRows reads the unit's line table into u.rows and u.files and returns
// the table's file entries, which inlined calls refer to by index.
func (u *unit) readRows(lr *dwarf.LineReader) []*dwarf.LineFile {
	index := map[*dwarf.LineFile]int32{}
	// Consecutive rows are mostly in one file: the last is remembered.
	var lastFile *dwarf.LineFile
	lastIndex := int32(-1)
	var le dwarf.LineEntry
	for {
		if err := lr.Next(&le); err == io.EOF || err != nil {
			break
		}
		row := lineRow{pc: le.Address, file: endSequence, line: int32(le.Line)}
		if !le.EndSequence && lastIndex >= 0 && le.File == lastFile {
			row.file = lastIndex
		} else if !le.EndSequence {
			n, ok := index[le.File]
			if !ok {
				n = int32(len(u.files))
				name := ""
				if le.File != nil {
					name = le.File.Name
				}
				u.files = append(u.files, name)
				index[le.File] = n
			}
			row.file = n
			lastFile, lastIndex = le.File, n
		}
		u.rows = append(u.rows, row)
	}
	return lr.Files()
}

// walk reads the unit's entries after the unit entry itself, keeping the
// tags of the open entries to know whether an inlined call is outermost,
// and, with inlines, every inlined call of each function.
func (di *dwarfInfo) walk(r *dwarf.Reader, u *unit, files []*dwarf.LineFile) {
	open := []dwarf.Tag{dwarf.TagCompileUnit}
	// fns are the open subprograms' first funcRange, -1 for one not
	// recorded: its inlined calls end where it closes.
	var fns []int
	for len(open) > 0 {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag == 0 { // end of the current entry's children
			if open[len(open)-1] == dwarf.TagSubprogram {
				u.closeSubs(fns[len(fns)-1])
				fns = fns[:len(fns)-1]
			}
			open = open[:len(open)-1]
			continue
		}
		switch e.Tag {
		case dwarf.TagSubprogram:
			first := -1
			if name := di.entryName(e, 0); name != "" {
				ranges := codeRanges(di.d, e)
				if len(ranges) > 0 {
					first = len(u.funcs)
				}
				for _, rg := range ranges {
					u.funcs = append(u.funcs, funcRange{lo: rg[0], hi: rg[1], name: name, from: int32(len(u.subs))})
				}
			}
			switch {
			case !e.Children:
				u.closeSubs(first)
			case first < 0:
				// No code (a declaration, an abstract instance): nothing
				// below it has any either.
				r.SkipChildren()
				continue
			default:
				fns = append(fns, first)
			}
		case dwarf.TagStructType, dwarf.TagClassType, dwarf.TagUnionType, dwarf.TagEnumerationType,
			dwarf.TagSubroutineType, dwarf.TagFormalParameter, dwarf.TagVariable, dwarf.TagCallSite, tagGNUCallSite:
			// Types (a C++ unit's most entries: member declarations, whose
			// definitions are at the unit's or a namespace's level) and
			// what a function's code holds besides blocks and inlined
			// calls hold no code: their entries are not decoded.
			if e.Children {
				r.SkipChildren()
			}
			continue
		case dwarf.TagInlinedSubroutine:
			outermost := !insideInlined(open)
			if di.lines && outermost {
				di.addInlined(u, e, files)
			}
			if di.inlines {
				di.addSub(u, e, files, inlinedDepth(open))
			} else if e.Children {
				// Calls inlined into this one are not outermost: skip them.
				r.SkipChildren()
				continue
			}
		}
		if e.Children {
			open = append(open, e.Tag)
		}
	}
	for _, f := range fns { // entries cut short
		u.closeSubs(f)
	}
}

// codeRanges are an entry's address ranges that hold code: an empty one
// (an inlined call the optimizer emptied) starts where another entry's
// code does, and found first it would hide that entry's.
func codeRanges(d *dwarf.Data, e *dwarf.Entry) [][2]uint64 {
	ranges, _ := d.Ranges(e)
	return slices.DeleteFunc(ranges, func(rg [2]uint64) bool { return rg[1] <= rg[0] })
}

// closeSubs ends the inlined calls of the subprogram whose first
// funcRange is first (none: -1) where unit.subs ends now.
func (u *unit) closeSubs(first int) {
	if first < 0 {
		return
	}
	for i := first; i < len(u.funcs) && u.funcs[i].from == u.funcs[first].from && u.funcs[i].to == 0; i++ {
		u.funcs[i].to = int32(len(u.subs))
	}
}

// inlinedDepth is how many inlined calls an entry is inside, within its
// function.
func inlinedDepth(open []dwarf.Tag) int32 {
	var n int32
	for i := len(open) - 1; i >= 0 && open[i] != dwarf.TagSubprogram; i-- {
		if open[i] == dwarf.TagInlinedSubroutine {
			n++
		}
	}
	return n
}

// addSub records an inlined call's ranges, entry and call site. Its
// function is named only if a chain needs it (inlinedAt): a unit holds
// many more inlined calls than the addresses of a profile touch, and
// following each call's origin was most of reading a C++ unit.
func (di *dwarfInfo) addSub(u *unit, e *dwarf.Entry, files []*dwarf.LineFile, depth int32) {
	file := ""
	idx, ok1 := e.Val(dwarf.AttrCallFile).(int64)
	line, ok2 := e.Val(dwarf.AttrCallLine).(int64)
	if ok1 && idx >= 0 && idx < int64(len(files)) && files[idx] != nil {
		file = files[idx].Name
	}
	if !ok2 {
		line = 0
	}
	for _, rg := range codeRanges(di.d, e) {
		u.subs = append(u.subs, inlSub{lo: rg[0], hi: rg[1], depth: depth, line: int32(line), entry: e.Offset, file: file})
	}
}

// inlinedAt returns the calls inlined at vaddr, innermost first: each
// called function, and with lines its position (the innermost's from the
// line table, each other's at the call it inlined), not the function
// vaddr lies in (lookup names that one).
func (di *dwarfInfo) inlinedAt(vaddr uint64) []inlFrame {
	di.mu.Lock()
	defer di.mu.Unlock()
	u := di.unitFor(vaddr)
	if u == nil {
		return nil
	}
	f, ok := u.function(vaddr)
	if !ok || f.to <= f.from {
		return nil
	}
	// The calls containing vaddr, outermost first: entries come in that
	// order, each call's range inside its caller's.
	var chain []inlSub
	for _, sub := range u.subs[f.from:f.to] {
		if sub.lo <= vaddr && vaddr < sub.hi && int(sub.depth) == len(chain) {
			chain = append(chain, sub)
		}
	}
	if len(chain) == 0 {
		return nil
	}
	out := make([]inlFrame, 0, len(chain))
	for i := range chain {
		fr := inlFrame{fn: di.nameAt(chain[i].entry)}
		if di.lines {
			if i+1 < len(chain) {
				fr.file, fr.line = chain[i+1].file, int(chain[i+1].line)
			} else if row, ok := u.row(vaddr); ok {
				fr.file, fr.line = u.files[row.file], int(row.line)
			}
		}
		if fr.fn != "" { // a call whose function has no name: not a frame
			out = append(out, fr)
		}
	}
	slices.Reverse(out)
	return out
}

// nameAt is the function name of the entry at off (entryName), cached:
// many inlined calls share one origin.
func (di *dwarfInfo) nameAt(off dwarf.Offset) string {
	if name, ok := di.names[off]; ok {
		return name
	}
	r := di.d.Reader()
	r.Seek(off)
	name := ""
	if e, err := r.Next(); err == nil && e != nil {
		name = di.entryName(e, 0)
	}
	if di.names == nil {
		di.names = map[dwarf.Offset]string{}
	}
	di.names[off] = name
	return name
}

func insideInlined(open []dwarf.Tag) bool {
	for i := len(open) - 1; i >= 0; i-- {
		switch open[i] {
		case dwarf.TagInlinedSubroutine:
			return true
		case dwarf.TagSubprogram:
			return false
		}
	}
	return false
}

func (di *dwarfInfo) addInlined(u *unit, e *dwarf.Entry, files []*dwarf.LineFile) {
	idx, ok1 := e.Val(dwarf.AttrCallFile).(int64)
	line, ok2 := e.Val(dwarf.AttrCallLine).(int64)
	if !ok1 || !ok2 || idx < 0 || idx >= int64(len(files)) || files[idx] == nil {
		return
	}
	for _, rg := range codeRanges(di.d, e) {
		u.inl = append(u.inl, inlRange{lo: rg[0], hi: rg[1], file: files[idx].Name, line: int(line)})
	}
}

// entryName returns a subprogram's linkage name, else its name, following
// DW_AT_specification and DW_AT_abstract_origin (out-of-line definitions
// and concrete copies of inlined functions name themselves there).
func (di *dwarfInfo) entryName(e *dwarf.Entry, depth int) string {
	for _, a := range []dwarf.Attr{dwarf.AttrLinkageName, attrMIPSLinkageName, dwarf.AttrName} {
		if s, ok := e.Val(a).(string); ok && s != "" {
			return s
		}
	}
	if depth >= 4 {
		return ""
	}
	for _, a := range []dwarf.Attr{dwarf.AttrSpecification, dwarf.AttrAbstractOrigin} {
		off, ok := e.Val(a).(dwarf.Offset)
		if !ok {
			continue
		}
		r := di.d.Reader()
		r.Seek(off)
		ref, err := r.Next()
		if err != nil || ref == nil {
			continue
		}
		if s := di.entryName(ref, depth+1); s != "" {
			return s
		}
	}
	return ""
}

func (u *unit) sortAll() {
	slices.SortStableFunc(u.rows, func(a, b lineRow) int {
		if c := cmp.Compare(a.pc, b.pc); c != 0 {
			return c
		}
		// A sequence's end before the next one's start at the same pc.
		return cmp.Compare(seqRank(a), seqRank(b))
	})
	sort.Slice(u.funcs, func(i, j int) bool { return u.funcs[i].lo < u.funcs[j].lo })
	sort.Slice(u.inl, func(i, j int) bool { return u.inl[i].lo < u.inl[j].lo })
}

func seqRank(r lineRow) int {
	if r.file == endSequence {
		return 0
	}
	return 1
}

// row returns the line row in force at pc: the last row at or before it,
// unless that row ends a sequence.
func (u *unit) row(pc uint64) (lineRow, bool) {
	rows := u.rows
	i := sort.Search(len(rows), func(i int) bool { return rows[i].pc > pc }) - 1
	if i < 0 || rows[i].file == endSequence {
		return lineRow{}, false
	}
	return rows[i], true
}

func (u *unit) function(pc uint64) (funcRange, bool) {
	fs := u.funcs
	i := sort.Search(len(fs), func(i int) bool { return fs[i].lo > pc }) - 1
	// Nested functions (lambdas in blocks, GNU nested functions) start
	// after their parent: look back a little for one that contains pc.
	for k := 0; k < 8 && i >= 0; k, i = k+1, i-1 {
		if pc < fs[i].hi {
			return fs[i], true
		}
	}
	return funcRange{}, false
}

func (u *unit) inlined(pc uint64) (inlRange, bool) {
	in := u.inl
	i := sort.Search(len(in), func(i int) bool { return in[i].lo > pc }) - 1
	if i >= 0 && pc < in[i].hi {
		return in[i], true
	}
	return inlRange{}, false
}

// demangle returns the short demangled form of a DWARF function name,
// cached.
func (di *dwarfInfo) demangle(name string) string {
	di.mu.Lock()
	defer di.mu.Unlock()
	if d, ok := di.demangled[name]; ok {
		return d
	}
	d := Demangle(name)
	di.demangled[name] = d
	return d
}

// dwarfKey is what a loaded dwarfInfo was read for: a file as the object
// cache knows it (a file replaced at its path is read again), and what was
// wanted of it.
type dwarfKey struct {
	file           objectKey
	lines, inlines bool
}

// dwarfCache keeps the DWARF of the last files read, nil for one that has
// none: a merge of a fleet's dumps, each symbolized on its own, reads a
// library shared by all of them once. Its size bounds the memory: a
// large library's decompressed sections take tens of MB.
var dwarfCache = &lruDWARF{max: 4}

type lruDWARF struct {
	mu      sync.Mutex
	max     int
	entries []dwarfEntry // most recently used last
}

type dwarfEntry struct {
	key dwarfKey
	dw  *dwarfInfo
}

func (c *lruDWARF) get(k dwarfKey) (*dwarfInfo, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.entries {
		if e.key == k {
			c.entries = append(append(c.entries[:i:i], c.entries[i+1:]...), e)
			return e.dw, true
		}
	}
	return nil, false
}

func (c *lruDWARF) put(k dwarfKey, dw *dwarfInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if e.key == k {
			return // read twice at once: the first kept
		}
	}
	if len(c.entries) == c.max {
		c.entries = c.entries[1:]
	}
	c.entries = append(c.entries, dwarfEntry{k, dw})
}
