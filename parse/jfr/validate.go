package jfr

import (
	"fmt"

	"github.com/grafana/jfr-parser/parser/types/def"
)

// The library sizes slices by the counts it reads (constant pools, arrays,
// strings, metadata) before checking them against the bytes that remain,
// and follows the constant pool chain without checking for loops. A
// damaged count of four billion makes it allocate tens of gigabytes, which
// is not a panic that recover can catch but the end of the process; a loop
// in the chain never ends. So before the library sees a chunk, validate
// walks what the library will read, the way the library reads it, and
// checks every count against the bytes that remain and the chain for
// loops. Where the library would read a layout differently from the JFR
// format (float as a compressed integer, a ChunkHeader pool skipped as 68
// bytes, composite values only one level deep), validate reads it the
// library's way, or refuses layouts on which the two readings could part.

// boundEvents are the event types the library decodes (the others it
// skips by their size).
var boundEvents = map[string]bool{
	"jdk.ExecutionSample": true, "profiler.WallClockSample": true, "profiler.Malloc": true, "profiler.Free": true,
	"jdk.ObjectAllocationInNewTLAB": true, "jdk.ObjectAllocationOutsideTLAB": true, "jdk.ObjectAllocationSample": true,
	"profiler.LiveObject": true, "jdk.JavaMonitorEnter": true, "jdk.ThreadPark": true, "jdk.ActiveSetting": true,
	"jdk.InitialSystemProperty": true,
}

// libKind is how the library reads a value of a type.
type libKind uint8

const (
	libComposite libKind = iota
	libBool              // one byte
	libVarint            // short, int, long, and float (read as an integer)
	libString
	libUnsupported // byte, char, double: the library fails on them
)

// validator checks one chunk against what the library will do with it.
type validator struct {
	b      []byte
	tm     def.TypeMap
	kinds  map[def.TypeID]libKind
	starts map[int]uint64 // event start → type
}

// scanned is what validate learned of a chunk besides its soundness.
type scanned struct {
	tm *def.TypeMap
	// counts are the events by type.
	counts map[uint64]int
	// checkpoints, old, jvm, begins, ends and blocked are the places of
	// the checkpoint, jdk.OldObjectSample, jdk.JVMInformation,
	// jdk.ThreadStart, jdk.ThreadEnd and blockedEvents events, which the
	// library does not hand over.
	checkpoints, old, jvm, begins, ends, blocked []event
	// k are tm's value kinds, made once (kindsOf).
	k *kinds
}

// kindsOf returns the chunk's value kinds (newKinds), made on first need.
func (s *scanned) kindsOf() *kinds {
	if s.k == nil {
		s.k = newKinds(s.tm)
	}
	return s.k
}

// blockedEvents are the events of a thread waiting (for a monitor, parked
// or asleep), with their durations: a thread so blocked allocates nothing.
var blockedEvents = map[string]bool{"jdk.JavaMonitorWait": true, "jdk.ThreadPark": true, "jdk.ThreadSleep": true}

// validate checks a chunk: its metadata, its constant pool chain, and every
// event the library decodes; and returns the chunk's metadata and where
// the events heapest reads itself are.
func validate(b []byte) (*scanned, error) {
	out := &scanned{counts: map[uint64]int{}}
	v := &validator{b: b, starts: map[int]uint64{}}
	err := scanEvents(b, func(ev event) error {
		out.counts[ev.typ]++
		switch ev.typ {
		case typeMetadata:
			v.starts[ev.at] = ev.typ
		case typeCheckpoint:
			v.starts[ev.at] = ev.typ
			out.checkpoints = append(out.checkpoints, ev)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	meta := int(be64(b[24:]))
	if t, ok := v.starts[meta]; !ok || t != typeMetadata {
		return nil, &chunkError{pos: 24, msg: fmt.Sprintf("the metadata offset %d is not the start of a metadata event", meta)}
	}
	if err := v.metadata(meta); err != nil {
		return nil, err
	}
	if err := v.pools(int(be64(b[16:]))); err != nil {
		return nil, err
	}
	out.tm = &v.tm
	err = scanEvents(b, func(ev event) error {
		c := v.tm.IDMap[def.TypeID(ev.typ)]
		switch {
		case c == nil:
		case c.Name == "jdk.OldObjectSample":
			out.old = append(out.old, ev)
		case c.Name == "jdk.JVMInformation":
			out.jvm = append(out.jvm, ev)
		case c.Name == "jdk.ThreadStart":
			out.begins = append(out.begins, ev)
		case c.Name == "jdk.ThreadEnd":
			out.ends = append(out.ends, ev)
		case blockedEvents[c.Name]:
			out.blocked = append(out.blocked, ev)
		case boundEvents[c.Name]:
			r := rawReader{b: v.b[:ev.end], pos: ev.start}
			for i := range c.Fields {
				v.field(&r, &c.Fields[i])
			}
			return r.err
		}
		return nil
	})
	return out, err
}

func be64(b []byte) uint64 {
	return uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
		uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
}

// metadata reads the metadata event at pos as the library does: its
// string table, then an element tree of root, metadata and region, the
// classes under metadata, their fields, and the fields' annotations (read
// flat: an annotation's own children would throw the library off).
func (v *validator) metadata(pos int) error {
	r := rawReader{b: v.b, pos: pos}
	r.varlong() // size
	r.varlong() // type
	r.varlong() // start
	r.varlong() // duration
	r.varlong() // id
	n := r.count(1)
	strs := make([]string, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		strs = append(strs, r.libString())
	}
	root := v.element(&r, strs, false)
	if r.err == nil && root.name != "root" {
		r.failf("metadata: expected the root element, got %q", root.name)
	}
	v.tm.IDMap, v.tm.NameMap = map[def.TypeID]*def.Class{}, map[string]*def.Class{}
	for i := 0; i < root.children && r.err == nil; i++ {
		e := v.element(&r, strs, false)
		switch e.name {
		case "metadata":
			for j := 0; j < e.children && r.err == nil; j++ {
				v.class(&r, strs)
			}
		case "region":
			if e.children != 0 {
				r.failf("metadata: a region element with children")
			}
		default:
			r.failf("metadata: unexpected element %q", e.name)
		}
	}
	if r.err != nil {
		return r.err
	}
	v.kinds = map[def.TypeID]libKind{}
	for name, c := range v.tm.NameMap {
		switch name {
		case "boolean":
			v.kinds[c.ID] = libBool
		case "short", "int", "long", "float":
			v.kinds[c.ID] = libVarint
		case "java.lang.String":
			v.kinds[c.ID] = libString
		case "byte", "char", "double":
			v.kinds[c.ID] = libUnsupported
		}
	}
	return nil
}

// class reads one class element and its fields.
func (v *validator) class(r *rawReader, strs []string) {
	e := v.element(r, strs, true)
	if r.err != nil {
		return
	}
	c, err := def.NewClass(e.attrs, e.children)
	if err != nil {
		r.failf("metadata: class: %v", err)
		return
	}
	for k := 0; k < e.children && r.err == nil; k++ {
		f := v.element(r, strs, true)
		if r.err == nil && f.name == "field" {
			fd, err := def.NewField(f.attrs)
			if err != nil {
				r.failf("metadata: field of %s: %v", c.Name, err)
				return
			}
			c.Fields = append(c.Fields, fd)
		}
		for l := 0; l < f.children && r.err == nil; l++ {
			if a := v.element(r, strs, false); a.children != 0 {
				r.failf("metadata: an annotation with children")
			}
		}
	}
	v.tm.IDMap[c.ID], v.tm.NameMap[c.Name] = c, c
}

type element struct {
	name     string
	attrs    map[string]string
	children int
}

func (v *validator) element(r *rawReader, strs []string, attrs bool) element {
	var e element
	name := r.varlong()
	if r.err == nil && name >= uint64(len(strs)) {
		r.failf("metadata: string index %d out of %d", name, len(strs))
		return e
	}
	if r.err != nil {
		return e
	}
	e.name = strs[name]
	n := r.count(2)
	if attrs {
		e.attrs = make(map[string]string, n)
	}
	for i := 0; i < n && r.err == nil; i++ {
		k, val := r.varlong(), r.varlong()
		if r.err == nil && (k >= uint64(len(strs)) || val >= uint64(len(strs))) {
			r.failf("metadata: string index out of %d", len(strs))
		}
		if r.err == nil && attrs {
			e.attrs[strs[k]] = strs[val]
		}
	}
	e.children = r.count(1)
	return e
}

// pools follows the constant pool chain from the header's offset as the
// library does, checking that every link is a checkpoint event and that
// the chain has no loop.
func (v *validator) pools(pos int) error {
	seen := map[int]bool{}
	for {
		if t, ok := v.starts[pos]; !ok || t != typeCheckpoint || seen[pos] {
			return &chunkError{pos: 16, msg: fmt.Sprintf("the constant pool chain reaches offset %d, which is not a checkpoint event or was seen before", pos)}
		}
		seen[pos] = true
		r := rawReader{b: v.b, pos: pos}
		r.varlong() // size
		r.varlong() // type
		r.varlong() // start
		r.varlong() // duration
		delta := int64(r.varlong())
		r.varlong() // checkpoint kind
		n := r.count(2)
		for i := 0; i < n && r.err == nil; i++ {
			c := v.tm.IDMap[def.TypeID(r.varlong())]
			switch {
			case r.err != nil:
			case c == nil:
				r.failf("constant pool of a type the metadata does not define")
			case c.Name == "jdk.types.ChunkHeader":
				// The library skips 68 bytes here, which is right only
				// when nothing follows in this checkpoint.
				if i != n-1 {
					r.failf("a ChunkHeader pool that is not the last of its checkpoint")
				}
			default:
				entries := r.count(1)
				for j := 0; j < entries && r.err == nil; j++ {
					r.varlong() // id
					if c.Name == "java.lang.String" {
						r.libString()
						continue
					}
					// Other types without fields: the library reads
					// the ids alone.
					for f := range c.Fields {
						v.field(&r, &c.Fields[f])
					}
				}
			}
		}
		if r.err != nil {
			return r.err
		}
		if delta == 0 {
			return nil
		}
		pos += int(delta)
		if pos <= 0 {
			return nil
		}
	}
}

// field reads one field's value (an array of them) as the library does.
func (v *validator) field(r *rawReader, f *def.Field) {
	n := 1
	if f.Array {
		n = r.count(1)
	}
	for i := 0; i < n && r.err == nil; i++ {
		if f.ConstantPool {
			r.varlong()
			continue
		}
		switch v.kinds[f.Type] {
		case libBool:
			r.skip(1)
		case libVarint:
			r.varlong()
		case libString:
			r.libString()
		case libUnsupported:
			r.failf("a field of a type the reader does not support")
		default:
			v.composite(r, f.Type)
		}
	}
}

// composite reads a value of a composite type: the library reads one
// level only, and one value per field whatever the field's dimension.
func (v *validator) composite(r *rawReader, t def.TypeID) {
	c := v.tm.IDMap[t]
	if c == nil || len(c.Fields) == 0 {
		r.failf("a value of type %d, which the metadata does not define", t)
		return
	}
	for i := range c.Fields {
		f := &c.Fields[i]
		if f.Array {
			r.failf("an array inside a composite value (%s.%s)", c.Name, f.Name)
			return
		}
		if f.ConstantPool {
			r.varlong()
			continue
		}
		switch v.kinds[f.Type] {
		case libBool:
			r.skip(1)
		case libVarint:
			r.varlong()
		case libString:
			r.libString()
		default:
			r.failf("a composite value nested in another (%s.%s)", c.Name, f.Name)
			return
		}
	}
}

// libString reads a string the way the library does, returning it only
// for the metadata's string table (encodings 0, 1, 3 and 4 there; 5 too
// elsewhere, which the table does not need).
func (r *rawReader) libString() string {
	if r.err != nil {
		return ""
	}
	if r.pos >= len(r.b) {
		r.failf("truncated string")
		return ""
	}
	enc := r.b[r.pos]
	r.pos++
	switch enc {
	case 0, 1:
		return ""
	case 3, 5:
		n := r.count(1)
		if r.err != nil {
			return ""
		}
		s := string(r.b[r.pos : r.pos+n])
		r.pos += n
		return s
	case 4:
		n := r.count(1)
		rs := make([]rune, 0, n)
		for i := 0; i < n && r.err == nil; i++ {
			rs = append(rs, rune(r.varlong()))
		}
		return string(rs)
	}
	r.pos--
	r.failf("unknown string encoding %d", enc)
	return ""
}
