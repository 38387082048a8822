package symbolize

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"

	"github.com/ulikunitz/xz"
)

// maxMiniDebugInfo bounds the decompressed size of a .gnu_debugdata
// section. MiniDebugInfo holds only a symbol table (Fedora's largest, for
// big C++ libraries, decompress to a few MiB); the bound keeps a damaged or
// hostile section from filling memory.
const maxMiniDebugInfo = 64 << 20

// miniDebugSymbols returns the code symbols of the MiniDebugInfo embedded in
// a stripped file (the .gnu_debugdata section: an xz-compressed ELF file
// whose .symtab holds the functions .dynsym lacks, the static ones), with
// the string table their names are in. nil when the file has none or it
// cannot be read: the file is then named from .dynsym alone.
func miniDebugSymbols(ef *elf.File) ([]rawSymbol, []byte) {
	s := ef.Section(".gnu_debugdata")
	if s == nil || s.Type == elf.SHT_NOBITS {
		return nil, nil
	}
	inner, err := openMiniDebugInfo(s)
	if err != nil {
		return nil, nil
	}
	defer inner.Close()
	symtab := inner.SectionByType(elf.SHT_SYMTAB)
	if symtab == nil {
		return nil, nil
	}
	return readCodeSymbols(inner, symtab)
}

// openMiniDebugInfo decompresses a .gnu_debugdata section and opens the ELF
// file inside.
func openMiniDebugInfo(s *elf.Section) (*elf.File, error) {
	zr, err := xz.NewReader(s.Open())
	if err != nil {
		return nil, fmt.Errorf(".gnu_debugdata: %v", err)
	}
	data, err := io.ReadAll(io.LimitReader(zr, maxMiniDebugInfo+1))
	if err != nil {
		return nil, fmt.Errorf(".gnu_debugdata: %v", err)
	}
	if len(data) > maxMiniDebugInfo {
		return nil, errors.New(".gnu_debugdata: decompresses to more than 64 MiB")
	}
	return elf.NewFile(bytes.NewReader(data))
}

// joinSymbols appends the symbols b (names in strsB) to a (names in strsA),
// returning both with one string table.
func joinSymbols(a []rawSymbol, strsA []byte, b []rawSymbol, strsB []byte) ([]rawSymbol, []byte) {
	base := uint64(len(strsA))
	if base+uint64(len(strsB)) > 1<<32-1 {
		return a, strsA
	}
	strs := make([]byte, 0, len(strsA)+len(strsB))
	strs = append(append(strs, strsA...), strsB...)
	for _, r := range b {
		r.name += uint32(base)
		a = append(a, r)
	}
	return a, strs
}
