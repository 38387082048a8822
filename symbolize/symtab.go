package symbolize

import (
	"bytes"
	"cmp"
	"debug/elf"
	"math"
	"slices"
	"sort"
)

// symbol is one code symbol of a symbol table: its address range and where
// its (mangled) name lies in the table's name string. 24 bytes, so that a
// large C++ binary's hundreds of thousands of symbols stay compact in the
// cache of loaded files.
type symbol struct {
	addr, size    uint64
	name, nameLen uint32
}

// symbolTable is a file's code symbols sorted by address, their names
// packed into one string: only the names of the symbols kept, not the
// whole string table.
type symbolTable struct {
	syms  []symbol
	names string
	src   string // ".symtab", ".dynsym", ".gnu_debugdata" (with .dynsym) or ""
}

// name returns symbol i's mangled name.
func (t *symbolTable) name(i int) string {
	s := t.syms[i]
	return t.names[s.name : s.name+s.nameLen]
}

// rawSymbol is a code symbol as read, before aliases are resolved. It
// holds no pointer (its name is a place in the string table), so that
// sorting many of them moves plain memory, without write barriers.
type rawSymbol struct {
	addr, size    uint64
	name, nameLen uint32 // in the string table's data
	info          uint8
}

// readSymbols returns the code symbols of .symtab, or, when the file was
// stripped, of .dynsym together with those of its MiniDebugInfo
// (.gnu_debugdata, see miniDebugSymbols), sorted by address with aliases
// resolved.
func readSymbols(ef *elf.File) symbolTable {
	if s := ef.SectionByType(elf.SHT_SYMTAB); s != nil {
		if raw, strs := readCodeSymbols(ef, s); len(raw) > 0 {
			return packSymbols(raw, strs, s.Name)
		}
	}
	var (
		raw  []rawSymbol
		strs []byte
		src  string
	)
	if s := ef.SectionByType(elf.SHT_DYNSYM); s != nil {
		raw, strs = readCodeSymbols(ef, s)
		src = s.Name
	}
	// Both tables are kept: MiniDebugInfo leaves out what .dynsym has.
	if mini, miniStrs := miniDebugSymbols(ef); len(mini) > 0 {
		raw, strs = joinSymbols(raw, strs, mini, miniStrs)
		src = ".gnu_debugdata"
	}
	if len(raw) == 0 {
		return symbolTable{}
	}
	return packSymbols(raw, strs, src)
}

// readCodeSymbols reads the defined code symbols of one symbol table
// section straight from its entries (debug/elf's Symbols would make a
// string of every symbol's name, data and file symbols included), and
// returns them with the string table their names are in.
func readCodeSymbols(ef *elf.File, s *elf.Section) ([]rawSymbol, []byte) {
	if int(s.Link) >= len(ef.Sections) || s.Link == 0 {
		return nil, nil
	}
	data, err := s.Data()
	if err != nil {
		return nil, nil
	}
	strs, err := ef.Sections[s.Link].Data()
	if err != nil || uint64(len(strs)) > math.MaxUint32 {
		return nil, nil
	}
	exec := make([]bool, len(ef.Sections))
	for i, sec := range ef.Sections {
		exec[i] = sec.Flags&elf.SHF_EXECINSTR != 0
	}
	size := 24
	if ef.Class == elf.ELFCLASS32 {
		size = 16
	}
	// Sized for every entry: growing by append would allocate several
	// times as much for a large table.
	out := make([]rawSymbol, 0, len(data)/size)
	// Entry 0 is the reserved null symbol.
	for off := size; off+size <= len(data); off += size {
		if r, ok := codeSymbol(ef, data[off:off+size], strs, exec); ok {
			out = append(out, r)
		}
	}
	return out, strs
}

// codeSymbol decodes one symbol table entry and keeps it when it is a
// defined code symbol: a function, or an untyped label in an executable
// section (assembly entry points such as ld.so's _dl_start_user), as nm
// lists them.
func codeSymbol(ef *elf.File, e, strs []byte, exec []bool) (rawSymbol, bool) {
	bo := ef.ByteOrder
	var (
		nameOff uint32
		r       rawSymbol
		shndx   uint16
	)
	if ef.Class == elf.ELFCLASS32 {
		nameOff = bo.Uint32(e[0:])
		r.addr = uint64(bo.Uint32(e[4:]))
		r.size = uint64(bo.Uint32(e[8:]))
		r.info, shndx = e[12], bo.Uint16(e[14:])
	} else {
		nameOff = bo.Uint32(e[0:])
		r.info, shndx = e[4], bo.Uint16(e[6:])
		r.addr = bo.Uint64(e[8:])
		r.size = bo.Uint64(e[16:])
	}
	if elf.SectionIndex(shndx) == elf.SHN_UNDEF || r.addr == 0 || uint64(nameOff) >= uint64(len(strs)) {
		return r, false
	}
	name := strs[nameOff:]
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	if len(name) == 0 {
		return r, false
	}
	switch elf.ST_TYPE(r.info) {
	case elf.STT_FUNC, elf.STT_GNU_IFUNC:
	case elf.STT_NOTYPE:
		// ARM and RISC-V mapping symbols ($x, $d) and local labels (.L)
		// are not names.
		if name[0] == '$' || bytes.HasPrefix(name, []byte(".L")) {
			return r, false
		}
		if int(shndx) >= len(exec) || !exec[shndx] {
			return r, false
		}
	default:
		return r, false
	}
	if i := bytes.IndexByte(name, '@'); i > 0 {
		name = name[:i] // symbol version: memcpy@@GLIBC_2.14
	}
	r.name, r.nameLen = nameOff, uint32(len(name))
	return r, true
}

// packSymbols sorts raw by address, keeps the best-named of several at one
// address (see better), and copies the kept names into one string.
func packSymbols(raw []rawSymbol, strs []byte, src string) symbolTable {
	slices.SortFunc(raw, func(a, b rawSymbol) int {
		if c := cmp.Compare(a.addr, b.addr); c != 0 {
			return c
		}
		if better(a, b, strs) {
			return -1
		}
		if better(b, a, strs) {
			return 1
		}
		return 0
	})
	kept := raw[:0]
	total := 0
	for i, r := range raw {
		if i > 0 && raw[i-1].addr == r.addr {
			continue
		}
		kept = append(kept, r)
		total += int(r.nameLen)
	}
	if uint64(total) > math.MaxUint32 {
		return symbolTable{}
	}
	buf := make([]byte, 0, total)
	syms := make([]symbol, len(kept))
	for i, r := range kept {
		syms[i] = symbol{addr: r.addr, size: r.size, name: uint32(len(buf)), nameLen: r.nameLen}
		buf = append(buf, r.nameIn(strs)...)
	}
	return symbolTable{syms: syms, names: string(buf), src: src}
}

// better orders aliases at one address: functions before labels, sized
// before unsized, global before weak before local, fewer leading
// underscores, then by name so the choice does not depend on table order.
func better(a, b rawSymbol, strs []byte) bool {
	fa, fb := elf.ST_TYPE(a.info) != elf.STT_NOTYPE, elf.ST_TYPE(b.info) != elf.STT_NOTYPE
	if fa != fb {
		return fa
	}
	if (a.size > 0) != (b.size > 0) {
		return a.size > 0
	}
	ra, rb := bindRank(a.info), bindRank(b.info)
	if ra != rb {
		return ra < rb
	}
	na, nb := a.nameIn(strs), b.nameIn(strs)
	ua, ub := underscores(na), underscores(nb)
	if ua != ub {
		return ua < ub
	}
	return bytes.Compare(na, nb) < 0
}

// nameIn returns the symbol's name in the string table strs.
func (r rawSymbol) nameIn(strs []byte) []byte {
	return strs[r.name : r.name+r.nameLen]
}

func bindRank(info uint8) int {
	switch elf.ST_BIND(info) {
	case elf.STB_GLOBAL:
		return 0
	case elf.STB_WEAK:
		return 1
	}
	return 2
}

func underscores(s []byte) int {
	n := 0
	for n < len(s) && s[n] == '_' {
		n++
	}
	return n
}

// lookup returns the index of the symbol holding vaddr, or -1; beyond says
// vaddr lies past the symbol's end, beyond the next 16-byte boundary.
func (t *symbolTable) lookup(vaddr uint64) (i int, beyond bool) {
	syms := t.syms
	i = sort.Search(len(syms), func(i int) bool { return syms[i].addr > vaddr }) - 1
	if i < 0 {
		return -1, false
	}
	// A symbol without a size runs to the next one; a sized one that ends
	// before vaddr may still sit inside an earlier, larger one.
	for k, j := 0, i; k < 4 && j >= 0; k, j = k+1, j-1 {
		s := &syms[j]
		if (s.size == 0 && j == i) || (s.size > 0 && vaddr < s.addr+s.size) {
			return j, false
		}
	}
	// Just past a function's end is its alignment padding: a return
	// address there comes from a call to a function that does not return
	// (abort, a throw) ending the function, and belongs to it. Past the
	// next 16-byte boundary (C compilers' alignment; Go's is 32, others'
	// up to 64) may start a function the table does not name instead:
	// beyond says so, for the caller to ask the unwind tables.
	if s := &syms[i]; vaddr-(s.addr+s.size) < maxPadding {
		return i, vaddr >= alignUp(s.addr+s.size, 16)
	}
	return -1, false
}

// maxPadding bounds the alignment padding after a function (compilers
// align functions to at most 64 bytes).
const maxPadding = 64

// alignUp rounds x up to a multiple of a (a power of two).
func alignUp(x, a uint64) uint64 { return (x + a - 1) &^ (a - 1) }
