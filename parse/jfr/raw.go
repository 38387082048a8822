package jfr

import (
	"errors"
	"fmt"

	"github.com/grafana/jfr-parser/parser/types/def"
)

// The library reads the events heapest needs most, but it skips
// jdk.OldObjectSample and the jdk.types.OldObject constant pool its
// objects are in. rawReader reads those itself, from the chunk bytes and
// the metadata the library parsed, with the encodings of the JFR format
// (compressed integers, which every JDK writes; the chunk header says so).

// Reserved event type ids of the JFR format.
const (
	typeMetadata   = 0
	typeCheckpoint = 1
)

// rawReader reads JFR values from one chunk. Its first error sticks and
// says at which chunk byte it happened.
type rawReader struct {
	b   []byte
	pos int
	err error
	// budget bounds the values read, so that metadata describing
	// deeply nested empty types cannot make skipping loop for long.
	budget int
}

func (r *rawReader) failf(format string, args ...any) {
	if r.err == nil {
		r.err = &chunkError{pos: r.pos, msg: fmt.Sprintf(format, args...)}
	}
}

// chunkError is a failure at a byte of the chunk, located by the caller
// in the file.
type chunkError struct {
	pos int
	msg string
}

func (e *chunkError) Error() string { return e.msg }

// varlong reads a compressed integer: 7 bits per byte, high bit set when
// more follow, and a ninth byte of 8 bits.
func (r *rawReader) varlong() uint64 {
	if r.err != nil {
		return 0
	}
	var v uint64
	for shift := uint(0); shift < 64; shift += 7 {
		if r.pos >= len(r.b) {
			r.failf("truncated integer")
			return 0
		}
		c := r.b[r.pos]
		r.pos++
		if shift == 56 {
			return v | uint64(c)<<56
		}
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
	}
	return v
}

// count reads an array or string length and checks that at least min
// bytes per element remain.
func (r *rawReader) count(min int) int {
	n := r.varlong()
	if r.err != nil {
		return 0
	}
	left := uint64(len(r.b) - r.pos)
	if min > 0 && n > left/uint64(min) || n > left+1 {
		r.failf("length %d exceeds the %d bytes left in the chunk", n, left)
		return 0
	}
	return int(n)
}

func (r *rawReader) skip(n int) {
	if r.err != nil {
		return
	}
	if n > len(r.b)-r.pos {
		r.failf("truncated value (%d bytes expected)", n)
		return
	}
	r.pos += n
}

// skipString skips a string: an encoding byte, then its bytes.
func (r *rawReader) skipString() {
	if r.err != nil {
		return
	}
	if r.pos >= len(r.b) {
		r.failf("truncated string")
		return
	}
	enc := r.b[r.pos]
	r.pos++
	switch enc {
	case 0, 1: // null, empty
	case 2: // constant pool reference
		r.varlong()
	case 3, 5: // UTF-8, Latin-1
		r.skip(r.count(1))
	case 4: // char array
		n := r.count(1)
		for i := 0; i < n && r.err == nil; i++ {
			r.varlong()
		}
	default:
		r.pos--
		r.failf("unknown string encoding %d", enc)
	}
}

// kind is how a type's values are written.
type kind uint8

const (
	kindClass  kind = iota // a composite: its fields, in order
	kindByte               // boolean, byte: one byte
	kindVarint             // short, char, int, long: compressed
	kindFloat              // four bytes
	kindDouble             // eight bytes
	kindString
)

// kinds maps the primitive types of a chunk's metadata to their encoding.
type kinds struct {
	tm    *def.TypeMap
	byID  map[def.TypeID]kind
	depth int
}

func newKinds(tm *def.TypeMap) *kinds {
	k := &kinds{tm: tm, byID: map[def.TypeID]kind{}}
	for name, c := range tm.NameMap {
		switch name {
		case "boolean", "byte":
			k.byID[c.ID] = kindByte
		case "short", "char", "int", "long":
			k.byID[c.ID] = kindVarint
		case "float":
			k.byID[c.ID] = kindFloat
		case "double":
			k.byID[c.ID] = kindDouble
		case "java.lang.String":
			k.byID[c.ID] = kindString
		}
	}
	return k
}

// maxDepth bounds the nesting of composite values; the JDK's deepest is 3.
const maxDepth = 16

// skipField skips one field's value (an array of them when f.Array).
func (r *rawReader) skipField(f *def.Field, k *kinds, depth int) {
	n := 1
	if f.Array {
		n = r.count(0)
	}
	for i := 0; i < n && r.err == nil; i++ {
		if r.budget--; r.budget < 0 {
			r.failf("metadata describes values too deeply nested to read")
			return
		}
		if f.ConstantPool {
			r.varlong()
			continue
		}
		r.skipType(f.Type, k, depth)
	}
}

func (r *rawReader) skipType(t def.TypeID, k *kinds, depth int) {
	kd, ok := k.byID[t]
	if !ok {
		kd = kindClass
	}
	switch kd {
	case kindByte:
		r.skip(1)
	case kindVarint:
		r.varlong()
	case kindFloat:
		r.skip(4)
	case kindDouble:
		r.skip(8)
	case kindString:
		r.skipString()
	default:
		c := k.tm.IDMap[t]
		if c == nil {
			r.failf("value of type %d, which the metadata does not define", t)
			return
		}
		if depth >= maxDepth {
			r.failf("type %s nested more than %d deep", c.Name, maxDepth)
			return
		}
		for i := range c.Fields {
			r.skipField(&c.Fields[i], k, depth+1)
		}
	}
}

// event is one event's place in the chunk: at is where its header
// starts, start where its fields do.
type event struct {
	typ            uint64
	at, start, end int
}

// scanEvents walks the event headers of a chunk (size, type) from the end
// of the chunk header, without decoding the events, and calls fn for each.
func scanEvents(b []byte, fn func(ev event) error) error {
	pos := headerSize
	for pos < len(b) {
		r := rawReader{b: b, pos: pos}
		size := r.varlong()
		typ := r.varlong()
		if r.err != nil {
			return r.err
		}
		if size == 0 || size > uint64(len(b)-pos) || r.pos > pos+int(size) {
			return &chunkError{pos: pos, msg: fmt.Sprintf("event size %d does not fit the %d bytes left in the chunk", size, len(b)-pos)}
		}
		if err := fn(event{typ: typ, at: pos, start: r.pos, end: pos + int(size)}); err != nil {
			return err
		}
		pos += int(size)
	}
	return nil
}

// readPools reads every constant pool of a checkpoint event, calling entry
// for each constant of a pool class wants (returning its reader, positioned
// on the constant's value) and skipping the others.
func readPools(b []byte, ev event, k *kinds, wants func(c *def.Class) bool, entry func(c *def.Class, id uint64, r *rawReader)) error {
	r := rawReader{b: b[:ev.end], pos: ev.start, budget: 4*len(b) + 1<<20}
	r.varlong() // start time
	r.varlong() // duration
	r.varlong() // delta to the previous checkpoint
	r.skip(1)   // checkpoint kind (flush, chunk header, ...)
	pools := r.count(2)
	for i := 0; i < pools && r.err == nil; i++ {
		cid := def.TypeID(r.varlong())
		n := r.count(1)
		c := k.tm.IDMap[cid]
		if r.err == nil && c == nil {
			r.failf("constant pool of type %d, which the metadata does not define", cid)
		}
		for j := 0; j < n && r.err == nil; j++ {
			id := r.varlong()
			if wants(c) {
				entry(c, id, &r)
				continue
			}
			// A pool's constant is one value of its type: the fields of a
			// composite, or a primitive itself (the java.lang.String pool).
			r.skipType(c.ID, k, 0)
		}
	}
	if r.err == nil && r.pos != ev.end {
		r.failf("checkpoint event ends at byte %d, its size says %d", r.pos, ev.end)
	}
	return r.err
}

// errNoField is returned when an event lacks a field heapest needs.
var errNoField = errors.New("field missing or of an unexpected type")
