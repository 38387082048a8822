package symbolize

import (
	"cmp"
	"debug/dwarf"
	"debug/elf"
	"io"
	"slices"
	"sort"
)

// dwarfInfo indexes a file's compilation units by address range. A unit's
// line table and functions are read the first time an address falls in it,
// so a large binary costs only the units its stacks touch.
type dwarfInfo struct {
	d     *dwarf.Data
	units []unitRange // sorted by lo
	cus   []*unit
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
}

// inlRange is an inlined call not itself inside another inlined call: for
// a pc in it, the function's own source position is the call site.
type inlRange struct {
	lo, hi uint64
	file   string
	line   int
}

// attrMIPSLinkageName is DW_AT_MIPS_linkage_name, which older GCC emits
// instead of DW_AT_linkage_name.
const attrMIPSLinkageName dwarf.Attr = 0x2007

// loadDWARF indexes ef's DWARF, or returns nil when it has none (or it is
// unreadable: the symbol table then still names functions).
func loadDWARF(ef *elf.File) (info *dwarfInfo) {
	defer func() {
		if recover() != nil { // malformed DWARF must not stop the run
			info = nil
		}
	}()
	if ef.Section(".debug_info") == nil && ef.Section(".zdebug_info") == nil {
		return nil
	}
	d, err := ef.DWARF()
	if err != nil {
		return nil
	}
	info = &dwarfInfo{d: d}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag == dwarf.TagCompileUnit {
			ranges, _ := d.Ranges(e)
			for _, rg := range ranges {
				if rg[1] > rg[0] {
					info.units = append(info.units, unitRange{lo: rg[0], hi: rg[1], cu: len(info.cus)})
				}
			}
			info.cus = append(info.cus, &unit{off: e.Offset})
		}
		r.SkipChildren()
	}
	sort.Slice(info.units, func(i, j int) bool { return info.units[i].lo < info.units[j].lo })
	return info
}

// lookup returns the source position and function of vaddr. file is ""
// when no line row covers it, fn "" when no function does.
func (di *dwarfInfo) lookup(vaddr uint64) (file string, line int, fn string) {
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
// outermost inlined calls.
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
	if lr, err := di.d.LineReader(cu); err == nil && lr != nil {
		files = u.readRows(lr)
	}
	if cu.Children {
		di.walk(r, u, files)
	}
	u.sortAll()
}

// readRows reads the unit's line table into u.rows and u.files and returns
// the table's file entries, which inlined calls refer to by index.
func (u *unit) readRows(lr *dwarf.LineReader) []*dwarf.LineFile {
	index := map[*dwarf.LineFile]int32{}
	var le dwarf.LineEntry
	for {
		if err := lr.Next(&le); err == io.EOF || err != nil {
			break
		}
		row := lineRow{pc: le.Address, file: endSequence, line: int32(le.Line)}
		if !le.EndSequence {
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
		}
		u.rows = append(u.rows, row)
	}
	return lr.Files()
}

// walk reads the unit's entries after the unit entry itself, keeping the
// tags of the open entries to know whether an inlined call is outermost.
func (di *dwarfInfo) walk(r *dwarf.Reader, u *unit, files []*dwarf.LineFile) {
	open := []dwarf.Tag{dwarf.TagCompileUnit}
	for len(open) > 0 {
		e, err := r.Next()
		if err != nil || e == nil {
			return
		}
		if e.Tag == 0 { // end of the current entry's children
			open = open[:len(open)-1]
			continue
		}
		switch e.Tag {
		case dwarf.TagSubprogram:
			if name := di.entryName(e, 0); name != "" {
				ranges, _ := di.d.Ranges(e)
				for _, rg := range ranges {
					u.funcs = append(u.funcs, funcRange{lo: rg[0], hi: rg[1], name: name})
				}
			}
		case dwarf.TagInlinedSubroutine:
			if !insideInlined(open) {
				di.addInlined(u, e, files)
			}
			// Calls inlined into this one are not outermost: skip them.
			if e.Children {
				r.SkipChildren()
			}
			continue
		}
		if e.Children {
			open = append(open, e.Tag)
		}
	}
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
	ranges, _ := di.d.Ranges(e)
	for _, rg := range ranges {
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
