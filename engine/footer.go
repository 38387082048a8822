package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
)

// The Parquet footer is Thrift (compact protocol), and parquet-go's
// decoder allocates every list at the length the file declares: a damaged
// footer that claims a list of 10⁹ elements ends the process out of
// memory before any error can be returned. checkFooter walks the footer's
// encoding first, without knowing its schema, and refuses a length longer
// than the bytes left to hold it.

// maxFooter bounds the footer heapest reads: far above any real file's
// (a few KiB per row group).
const maxFooter = 64 << 20

// checkFooter checks the framing of the footer of a Parquet file of size
// bytes read from r.
func checkFooter(r io.ReaderAt, size int64) error {
	if size < 12 {
		return errors.New("too short for a Parquet file")
	}
	var tail [8]byte
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return err
	}
	if string(tail[4:]) != "PAR1" {
		return errors.New("no PAR1 magic at the end")
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > size-12 || n > maxFooter {
		return fmt.Errorf("footer of %d bytes in a file of %d", n, size)
	}
	b := make([]byte, n)
	if _, err := r.ReadAt(b, size-8-n); err != nil {
		return err
	}
	s := skimmer{b: b}
	if err := s.structure(0); err != nil {
		return fmt.Errorf("damaged footer at byte %d of %d: %w", s.pos, n, err)
	}
	return nil
}

// skimmer walks Thrift compact-protocol data.
type skimmer struct {
	b   []byte
	pos int
}

var errShort = errors.New("a length beyond the end of the footer")

func (s *skimmer) byte() (byte, error) {
	if s.pos >= len(s.b) {
		return 0, errShort
	}
	s.pos++
	return s.b[s.pos-1], nil
}

func (s *skimmer) varint() (uint64, error) {
	v, n := binary.Uvarint(s.b[s.pos:])
	if n <= 0 {
		return 0, errors.New("bad varint")
	}
	s.pos += n
	return v, nil
}

// skip moves past n bytes, or fails if there are not that many.
func (s *skimmer) skip(n uint64) error {
	if n > uint64(len(s.b)-s.pos) {
		return errShort
	}
	s.pos += int(n)
	return nil
}

// maxDepth bounds nesting: Parquet's footer nests a few levels.
const maxDepth = 64

func (s *skimmer) structure(depth int) error {
	if depth > maxDepth {
		return errors.New("nested too deep")
	}
	for {
		h, err := s.byte()
		if err != nil {
			return err
		}
		if h == 0 {
			return nil // STOP
		}
		if h>>4 == 0 { // long form: the field id follows
			if _, err := s.varint(); err != nil {
				return err
			}
		}
		if err := s.value(h&0x0f, depth); err != nil {
			return err
		}
	}
}

// value skips one value of compact type t.
func (s *skimmer) value(t byte, depth int) error {
	switch t {
	case 1, 2: // booleans in a field header
		return nil
	case 3:
		return s.skip(1)
	case 4, 5, 6:
		_, err := s.varint()
		return err
	case 7:
		return s.skip(8)
	case 8:
		n, err := s.varint()
		if err != nil {
			return err
		}
		return s.skip(n)
	case 9, 10:
		return s.list(depth)
	case 11:
		return s.dict(depth)
	case 12:
		return s.structure(depth + 1)
	}
	return fmt.Errorf("unknown Thrift type %d", t)
}

// list skips a list or set: every element takes at least one byte.
func (s *skimmer) list(depth int) error {
	h, err := s.byte()
	if err != nil {
		return err
	}
	n, t := uint64(h>>4), h&0x0f
	if n == 15 {
		if n, err = s.varint(); err != nil {
			return err
		}
	}
	if n > uint64(len(s.b)-s.pos) {
		return errShort
	}
	for range n {
		if err := s.element(t, depth); err != nil {
			return err
		}
	}
	return nil
}

// element skips one element of a list or map of compact type t: unlike
// a field's, a boolean element takes a byte.
func (s *skimmer) element(t byte, depth int) error {
	if t == 1 || t == 2 {
		return s.skip(1)
	}
	return s.value(t, depth+1)
}

// dict skips a map.
func (s *skimmer) dict(depth int) error {
	n, err := s.varint()
	if err != nil || n == 0 {
		return err
	}
	if n > uint64(len(s.b)-s.pos) {
		return errShort
	}
	kv, err := s.byte()
	if err != nil {
		return err
	}
	for range n {
		if err := s.element(kv>>4, depth); err != nil {
			return err
		}
		if err := s.element(kv&0x0f, depth); err != nil {
			return err
		}
	}
	return nil
}

// maxPage bounds the size a page header may claim, compressed or not:
// parquet-go allocates it whole. Real pages are a few MiB at most.
const maxPage = 256 << 20

// checkPages walks every column chunk's page headers (Thrift too, and
// decoded by parquet-go with the same trust as the footer) before any is
// read: each must be well framed within its chunk, and claim no more
// than maxPage; and the values a chunk's data pages claim must be the
// footer's count for it, which for a column of one value a row is the
// row group's rows. parquet-go assembles rows from what the pages claim:
// a page claiming more values than the row group has rows made it read
// rows past the other columns' ends, whose values then came from
// whatever its buffers held before, different from run to run.
func checkPages(f *parquet.File, r io.ReaderAt, size int64) error {
	leaves := f.Schema().Columns()
	for i, rg := range f.Metadata().RowGroups {
		for j, c := range rg.Columns {
			m := c.MetaData
			start := m.DataPageOffset
			if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < start {
				start = m.DictionaryPageOffset
			}
			end := start + m.TotalCompressedSize
			if start < 4 || m.TotalCompressedSize < 0 || end > size-8 || end < start {
				return fmt.Errorf("row group %d, column %d: chunk at %d of %d bytes outside the file", i, j, start, m.TotalCompressedSize)
			}
			values, err := checkChunk(r, start, end)
			if err != nil {
				return fmt.Errorf("row group %d, column %d: %w", i, j, err)
			}
			if values != m.NumValues || j < len(leaves) && !repeated(f, leaves[j]) && values != rg.NumRows {
				return fmt.Errorf("row group %d, column %d: its pages hold %d values, its metadata says %d, in %d rows", i, j, values, m.NumValues, rg.NumRows)
			}
		}
	}
	return nil
}

// repeated reports whether the leaf column at path may hold several
// values in a row (a list's elements).
func repeated(f *parquet.File, path []string) bool {
	leaf, ok := f.Schema().Lookup(path...)
	return !ok || leaf.MaxRepetitionLevel > 0
}

// checkChunk checks the pages of the chunk in [start, end), and returns
// the values its data pages claim.
func checkChunk(r io.ReaderAt, start, end int64) (values int64, err error) {
	b := make([]byte, end-start)
	if _, err := r.ReadAt(b, start); err != nil {
		return 0, err
	}
	for pos := 0; pos < len(b); {
		s := skimmer{b: b[pos:]}
		h, err := s.pageHeader()
		if err != nil {
			return 0, fmt.Errorf("page header at byte %d: %w", pos, err)
		}
		if h.size < 0 || h.compressed < 0 || h.size > maxPage || h.compressed > maxPage {
			return 0, fmt.Errorf("page at byte %d claims %d bytes (%d compressed)", pos, h.size, h.compressed)
		}
		if h.values < 0 {
			return 0, fmt.Errorf("page at byte %d claims %d values", pos, h.values)
		}
		values += h.values
		pos += s.pos
		if h.compressed > int64(len(b)-pos) {
			return 0, fmt.Errorf("page at byte %d runs past its chunk", pos)
		}
		pos += int(h.compressed)
	}
	return values, nil
}

// pageHeader is what checkChunk reads of a page header: its sizes, and
// the values a data page holds (0 for other pages).
type pageHeader struct{ size, compressed, values int64 }

// pageHeader reads a PageHeader: fields 2 and 3 are the uncompressed and
// compressed sizes, 5 and 8 the headers of data pages (v1 and v2), whose
// field 1 is their number of values.
func (s *skimmer) pageHeader() (pageHeader, error) {
	var h pageHeader
	err := s.fieldsInto(func(id int16, v uint64) {
		switch id {
		case 2:
			h.size = zigzag(v)
		case 3:
			h.compressed = zigzag(v)
		}
	}, func(id int16) (func(id int16, v uint64), bool) {
		if id != 5 && id != 8 {
			return nil, false
		}
		return func(id int16, v uint64) {
			if id == 1 {
				h.values = zigzag(v)
			}
		}, true
	})
	return h, err
}

func zigzag(v uint64) int64 { return int64(v>>1) ^ -int64(v&1) }

// fields walks one struct, calling fn with each top-level integer field.
func (s *skimmer) fields(fn func(id int16, v uint64)) error {
	return s.fieldsInto(fn, func(int16) (func(int16, uint64), bool) { return nil, false })
}

// fieldsInto is fields, walking into the struct fields for which into
// gives a function, called with their integer fields.
func (s *skimmer) fieldsInto(fn func(id int16, v uint64), into func(id int16) (func(id int16, v uint64), bool)) error {
	var id int16
	for {
		h, err := s.byte()
		if err != nil {
			return err
		}
		if h == 0 {
			return nil
		}
		if d := h >> 4; d != 0 {
			id += int16(d)
		} else {
			v, err := s.varint()
			if err != nil {
				return err
			}
			id = int16(zigzag(v))
		}
		t := h & 0x0f
		if t == 4 || t == 5 || t == 6 {
			v, err := s.varint()
			if err != nil {
				return err
			}
			fn(id, v)
			continue
		}
		if inner, ok := into(id); ok && t == 12 {
			if err := s.fields(inner); err != nil {
				return err
			}
			continue
		}
		if err := s.value(t, 1); err != nil {
			return err
		}
	}
}
