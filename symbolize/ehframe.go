package symbolize

import (
	"cmp"
	"debug/elf"
	"encoding/binary"
	"errors"
	"slices"
	"sort"
)

// A stripped file has no symbol for most of its code, but it keeps the
// unwind tables of .eh_frame, which C and C++ exceptions and unwinders
// need: one FDE (frame description entry) per function, with the range
// of addresses the function's code covers. That tells heapest where the
// function an unnamed address lies in starts, so that every address of
// one function is one row of a --by func report, named by the function's
// start (sub_ADDRESS, as disassemblers name functions they have no
// symbol for) rather than one row per return address.

// funcRanges is the code ranges of a file's FDEs, sorted by start.
type funcRanges []codeRange

// codeRange is one function's code: [start, end).
type codeRange struct{ start, end uint64 }

// find returns the start of the range holding vaddr.
func (r funcRanges) find(vaddr uint64) (uint64, bool) {
	i := sort.Search(len(r), func(i int) bool { return r[i].start > vaddr }) - 1
	if i < 0 || vaddr >= r[i].end {
		return 0, false
	}
	return r[i].start, true
}

// readFuncRanges reads the ranges of the FDEs in ef's .eh_frame; none when
// it has none or they cannot be read.
func readFuncRanges(ef *elf.File) funcRanges {
	sec := ef.Section(".eh_frame")
	if sec == nil || sec.Type == elf.SHT_NOBITS {
		return nil
	}
	data, err := sec.Data()
	if err != nil {
		return nil
	}
	e := ehReader{data: data, base: sec.Addr, order: ef.ByteOrder, ptr: 8}
	if ef.Class == elf.ELFCLASS32 {
		e.ptr = 4
	}
	r, err := e.ranges()
	if err != nil {
		return nil
	}
	return r
}

// ehReader walks the entries of an .eh_frame section loaded at base.
type ehReader struct {
	data  []byte
	base  uint64
	order binary.ByteOrder
	ptr   int // the size of an absolute pointer
}

var errEHFrame = errors.New("malformed .eh_frame")

// DWARF pointer encodings (the low nibble is the format, the high one
// what the value is relative to).
const (
	ehAbsPtr   = 0x00
	ehUData2   = 0x02
	ehUData4   = 0x03
	ehUData8   = 0x04
	ehSData2   = 0x0a
	ehSData4   = 0x0b
	ehSData8   = 0x0c
	ehPCRel    = 0x10
	ehOmit     = 0xff
	ehIndirect = 0x80
)

// ranges reads every FDE's range, each CIE's pointer encoding once.
func (e *ehReader) ranges() (funcRanges, error) {
	var out funcRanges
	encs := map[int]byte{} // CIE offset: its FDEs' pointer encoding
	for off := 0; off+4 <= len(e.data); {
		length := uint64(e.order.Uint32(e.data[off:]))
		body := off + 4
		if length == 0 {
			break // the terminator
		}
		if length == 0xffffffff {
			return out, errEHFrame // 64-bit DWARF: not in .eh_frame in practice
		}
		end := body + int(length)
		if length > uint64(len(e.data)) || end > len(e.data) || body+4 > end {
			return out, errEHFrame
		}
		id := e.order.Uint32(e.data[body:])
		if id == 0 {
			enc, err := e.cieEncoding(e.data[body+4 : end])
			if err != nil {
				return out, err
			}
			encs[off] = enc
		} else {
			cie := body - int(id)
			enc, ok := encs[cie]
			if !ok {
				return out, errEHFrame // CIEs precede their FDEs
			}
			start, n, err := e.pointer(enc, body+4, end)
			if err != nil {
				return out, err
			}
			size, _, err := e.pointer(enc&0x0f, body+4+n, end)
			if err != nil {
				return out, err
			}
			if start+size < start {
				return out, errEHFrame // past the end of the address space
			}
			if size > 0 {
				out = append(out, codeRange{start, start + size})
			}
		}
		off = end
	}
	slices.SortFunc(out, func(a, b codeRange) int { return cmp.Compare(a.start, b.start) })
	return out, nil
}

// cieEncoding reads a CIE (after its id) as far as its 'R' augmentation,
// the encoding of its FDEs' addresses (absolute pointers without one).
func (e *ehReader) cieEncoding(b []byte) (byte, error) {
	if len(b) < 1 {
		return 0, errEHFrame
	}
	version := b[0]
	b = b[1:]
	aug := 0
	for aug < len(b) && b[aug] != 0 {
		aug++
	}
	if aug == len(b) {
		return 0, errEHFrame
	}
	augmentation := string(b[:aug])
	b = b[aug+1:]
	if len(augmentation) == 0 || augmentation[0] != 'z' {
		return ehAbsPtr, nil // no augmentation data: absolute pointers
	}
	var ok bool
	if b, ok = skipLEB(b); !ok { // code alignment
		return 0, errEHFrame
	}
	if b, ok = skipLEB(b); !ok { // data alignment
		return 0, errEHFrame
	}
	if version == 1 {
		if len(b) < 1 {
			return 0, errEHFrame
		}
		b = b[1:] // return address register
	} else if b, ok = skipLEB(b); !ok {
		return 0, errEHFrame
	}
	if b, ok = skipLEB(b); !ok { // augmentation data length
		return 0, errEHFrame
	}
	for _, c := range augmentation[1:] {
		switch c {
		case 'R':
			if len(b) < 1 {
				return 0, errEHFrame
			}
			return b[0], nil
		case 'L':
			if len(b) < 1 {
				return 0, errEHFrame
			}
			b = b[1:]
		case 'P':
			if len(b) < 1 {
				return 0, errEHFrame
			}
			n := e.size(b[0] & 0x0f)
			if n <= 0 || len(b) < 1+n {
				return 0, errEHFrame
			}
			b = b[1+n:]
		case 'S', 'B':
		default:
			return 0, errEHFrame // an augmentation whose data size is unknown
		}
	}
	return ehAbsPtr, nil
}

// size is the size of a fixed-size pointer format (0 for LEB128 ones).
func (e *ehReader) size(format byte) int {
	switch format {
	case ehAbsPtr:
		return e.ptr
	case ehUData2, ehSData2:
		return 2
	case ehUData4, ehSData4:
		return 4
	case ehUData8, ehSData8:
		return 8
	}
	return 0
}

// pointer decodes a pointer encoded as enc at data[at:], within limit,
// and returns it with its size. FDE addresses are fixed-size, absolute or
// relative to where they are: the LEB128 formats (1 and 9) and the
// other bases are read as damage.
func (e *ehReader) pointer(enc byte, at, limit int) (uint64, int, error) {
	if enc == ehOmit || enc&ehIndirect != 0 || (enc&0x70 != 0 && enc&0x70 != ehPCRel) {
		return 0, 0, errEHFrame // encodings FDE addresses do not use
	}
	n := e.size(enc & 0x0f)
	if n == 0 || at+n > limit {
		return 0, 0, errEHFrame
	}
	b := e.data[at : at+n]
	var v uint64
	switch enc & 0x0f {
	case ehAbsPtr:
		if n == 4 {
			v = uint64(e.order.Uint32(b))
		} else {
			v = e.order.Uint64(b)
		}
	case ehUData2:
		v = uint64(e.order.Uint16(b))
	case ehSData2:
		v = uint64(int64(int16(e.order.Uint16(b))))
	case ehUData4:
		v = uint64(e.order.Uint32(b))
	case ehSData4:
		v = uint64(int64(int32(e.order.Uint32(b))))
	default: // 8 bytes, signed or not
		v = e.order.Uint64(b)
	}
	if enc&0x70 == ehPCRel {
		v += e.base + uint64(at)
	}
	return v, n, nil
}

// skipLEB skips one LEB128 number.
func skipLEB(b []byte) ([]byte, bool) {
	for i, c := range b {
		if c < 0x80 {
			return b[i+1:], true
		}
	}
	return nil, false
}
