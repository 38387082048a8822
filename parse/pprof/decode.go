package pprof

// A streaming decoder for profile.proto (github.com/google/pprof
// proto/profile.proto). The top-level fields are read one at a time from
// the input; the tables (strings, functions, locations, mappings, sample
// types) are kept, the samples packed into a sampleBuf (buffer.go) until
// the end of the input says how to read them. Every length is checked
// against the bytes that arrive before it is used.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/heapest/heapest/parse"
)

// maxField bounds one field's length: every field of a profile.proto is
// one sample, location, function, mapping or string, a few KiB at most
// (a long C++ name); a longer one is damage, or a bomb that would have the
// decoder buffer gigabytes before it could tell.
const maxField = 16 << 20

// Field numbers of the messages heapest reads.
const (
	pbProfileSampleType        = 1
	pbProfileSample            = 2
	pbProfileMapping           = 3
	pbProfileLocation          = 4
	pbProfileFunction          = 5
	pbProfileStringTable       = 6
	pbProfileTimeNanos         = 9
	pbProfileDurationNanos     = 10
	pbProfilePeriodType        = 11
	pbProfilePeriod            = 12
	pbProfileComment           = 13
	pbProfileDefaultSampleType = 14

	pbWireVarint = 0
	pbWire64     = 1
	pbWireBytes  = 2
	pbWire32     = 5
)

// pbBuf reads protobuf wire format from a byte slice: one message.
type pbBuf struct {
	b   []byte
	off int
}

var errPbTruncated = errors.New("truncated message")

func (r *pbBuf) done() bool { return r.off >= len(r.b) }

func (r *pbBuf) varint() (uint64, error) {
	// One-byte values (most ids, lengths, small counts) first.
	if r.off < len(r.b) && r.b[r.off] < 0x80 {
		v := uint64(r.b[r.off])
		r.off++
		return v, nil
	}
	var v uint64
	for shift := uint(0); shift < 64; shift += 7 {
		if r.off >= len(r.b) {
			return 0, errPbTruncated
		}
		c := r.b[r.off]
		r.off++
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v, nil
		}
	}
	return 0, errors.New("varint longer than 10 bytes")
}

// key reads a field key.
func (r *pbBuf) key() (field int, wire int, err error) {
	k, err := r.varint()
	if err != nil {
		return 0, 0, err
	}
	return splitKey(k)
}

// splitKey splits a field key into its number and wire type. Field
// numbers 0 and above protobuf's 2^29−1 are invalid, but google/pprof's
// decoder skips them like any unknown field; so does heapest, to read what
// pprof reads.
func splitKey(k uint64) (field int, wire int, err error) {
	return int(k >> 3), int(k & 7), nil
}

// bytes reads a length-delimited field, without copying.
func (r *pbBuf) bytes() ([]byte, error) {
	n, err := r.varint()
	if err != nil {
		return nil, err
	}
	if n > uint64(len(r.b)-r.off) {
		return nil, fmt.Errorf("length %d exceeds the %d bytes that remain", n, len(r.b)-r.off)
	}
	b := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return b, nil
}

// skip passes over a field of the given wire type.
func (r *pbBuf) skip(wire int) error {
	switch wire {
	case pbWireVarint:
		_, err := r.varint()
		return err
	case pbWire64, pbWire32:
		n := 8
		if wire == pbWire32 {
			n = 4
		}
		if len(r.b)-r.off < n {
			return errPbTruncated
		}
		r.off += n
		return nil
	case pbWireBytes:
		_, err := r.bytes()
		return err
	}
	return fmt.Errorf("unsupported wire type %d", wire)
}

// varints reads a repeated varint field, one value or a packed run.
func varints[T int64 | uint64](r *pbBuf, wire int, dst []T) ([]T, error) {
	if wire == pbWireVarint {
		v, err := r.varint()
		return append(dst, T(v)), err
	}
	if wire != pbWireBytes {
		return dst, fmt.Errorf("repeated integer with wire type %d", wire)
	}
	b, err := r.bytes()
	if err != nil {
		return dst, err
	}
	sub := pbBuf{b: b}
	for !sub.done() {
		v, err := sub.varint()
		if err != nil {
			return dst, err
		}
		dst = append(dst, T(v))
	}
	return dst, nil
}

// fields reads a message's varint fields into vals (by field number),
// skipping the others.
func fields(b []byte, vals []uint64) error {
	r := pbBuf{b: b}
	for !r.done() {
		field, wire, err := r.key()
		if err != nil {
			return err
		}
		if field < len(vals) && wire == pbWireVarint {
			vals[field], err = r.varint()
		} else {
			err = r.skip(wire)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// stream reads the top-level fields of a profile.proto from a reader,
// holding at most one field at a time.
type stream struct {
	r   *bufio.Reader
	off int64 // offset in the (decompressed) input of the next unread byte
	// ioErr is the failure of the underlying reader (gzip, size bound), as
	// opposed to bytes that are not profile.proto.
	ioErr   error
	scratch []byte
}

// readErr records a read failure: io.EOF means the input ended early,
// anything else is the reader's own failure.
func (s *stream) readErr(err error) error {
	if err == io.EOF {
		return errPbTruncated
	}
	s.ioErr = err
	return err
}

// varint reads a varint; at a clean end of input it returns io.EOF.
func (s *stream) varint() (uint64, error) {
	var v uint64
	for shift := uint(0); shift < 64; shift += 7 {
		c, err := s.r.ReadByte()
		if err != nil {
			if err == io.EOF && shift == 0 {
				return 0, io.EOF
			}
			return 0, s.readErr(err)
		}
		s.off++
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v, nil
		}
	}
	return 0, errors.New("varint longer than 10 bytes")
}

// buffered reads a whole message field (a sample, location, function,
// mapping, string or value type) when its key, length and bytes are all
// in the reader's buffer, as most are: one look at the buffer instead of
// a read per byte of the key and the length. ok is false, and nothing
// read, otherwise. The bytes are valid until the next read.
func (s *stream) buffered() (field int, b []byte, ok bool) {
	p, _ := s.r.Peek(s.r.Buffered())
	if len(p) < 3 || p[0] >= 0x80 || p[0]&7 != pbWireBytes {
		return 0, nil, false
	}
	switch field = int(p[0] >> 3); field {
	case pbProfileSampleType, pbProfileSample, pbProfileMapping, pbProfileLocation, pbProfileFunction, pbProfileStringTable, pbProfilePeriodType:
	default:
		return 0, nil, false
	}
	n, i, short := shortVarint(p, 1)
	end := i + int(n)
	if !short || end > len(p) {
		return 0, nil, false
	}
	s.r.Discard(end)
	s.off += int64(end)
	return field, p[i:end], true
}

// payload reads a length-delimited field's bytes. They are valid until
// the next read from the stream: a field that fits the reader's buffer is
// not copied.
func (s *stream) payload() ([]byte, error) {
	n, err := s.varint()
	if err == io.EOF {
		err = errPbTruncated
	}
	if err != nil {
		return nil, err
	}
	if n <= uint64(s.r.Size()) {
		b, err := s.r.Peek(int(n))
		if err != nil {
			if err == io.EOF {
				return nil, fmt.Errorf("length %d exceeds the %d bytes that remain", n, len(b))
			}
			return nil, s.readErr(err)
		}
		s.r.Discard(len(b))
		s.off += int64(n)
		return b, nil
	}
	if n > maxField {
		return nil, fmt.Errorf("length %d: no field of a heap profile is that long (each is one sample, location, function, mapping or string)", n)
	}
	// A long field is copied, in steps, so that a length the input does
	// not back costs no more memory than the bytes that do arrive.
	s.scratch = s.scratch[:0]
	for left := int(n); left > 0; {
		step := min(left, 1<<20)
		s.scratch = append(s.scratch, make([]byte, step)...)
		got, err := io.ReadFull(s.r, s.scratch[len(s.scratch)-step:])
		s.off += int64(got)
		if err != nil {
			if err == io.ErrUnexpectedEOF && s.ioErr == nil {
				err = io.EOF
			}
			if err == io.EOF {
				return nil, fmt.Errorf("length %d exceeds the %d bytes that remain", n, int(n)-left+got)
			}
			return nil, s.readErr(err)
		}
		left -= step
	}
	return s.scratch, nil
}

// skip passes over a field of the given wire type.
func (s *stream) skip(wire int) error {
	switch wire {
	case pbWireVarint:
		_, err := s.varint()
		if err == io.EOF {
			err = errPbTruncated
		}
		return err
	case pbWire64, pbWire32:
		n := 8
		if wire == pbWire32 {
			n = 4
		}
		got, err := s.r.Discard(n)
		s.off += int64(got)
		if err != nil {
			return s.readErr(err)
		}
		return nil
	case pbWireBytes:
		_, err := s.payload()
		return err
	}
	return fmt.Errorf("unsupported wire type %d", wire)
}

// pbLocation is a location: its address and its lines (lines[start:end]
// of the profile), innermost first.
type pbLocation struct {
	id, addr   uint64
	start, end int32
}

// pbFunction, pbMapping and pbValueType hold string table indices until
// the table is complete.
type pbFunction struct{ id, name, file uint64 }

type pbMapping struct{ start, limit, offset, file, build uint64 }

type pbValueType struct{ typ, unit uint64 }

// valueType is a sample or period type, resolved to strings.
type valueType struct{ Type, Unit string }

// decoded is a profile.proto read to its end: its tables, and its samples
// packed in the order they came. What depends on the string table (which
// writers put after the samples) is resolved by resolve.
type decoded struct {
	name string

	sampleTypesIdx []pbValueType
	periodTypeIdx  *pbValueType
	Period         int64
	TimeNanos      int64
	DurationNanos  int64
	defaultType    uint64
	commentsIdx    []int64

	strs      strTable
	functions []pbFunction
	locations []pbLocation
	lines     []uint64 // function ids of the locations' lines
	lineNos   []int64  // and their line numbers
	// wantLines names frames by function and source line
	// (parse.Options.Lines).
	wantLines bool
	mappings  []pbMapping

	samples sampleBuf

	// Resolved by resolve.
	SampleType        []valueType
	PeriodType        *valueType
	DefaultSampleType string
	Comments          []string
	Mappings          []parse.Mapping
	stacks            *stackTable
	// labelRole classifies the string table's entries used as label keys
	// (labelBytes, ...), so that a sample's labels are told apart by index.
	labelRole []uint8
}

// decodeStream reads a whole profile.proto from r.
func decodeStream(name string, r *bufio.Reader) (*decoded, error) {
	d := &decoded{name: name}
	s := &stream{r: r}
	for {
		at := s.off
		if field, b, ok := s.buffered(); ok {
			if err := d.message(field, b); err != nil {
				return nil, d.wireError(s, at, field, err)
			}
			continue
		}
		k, err := s.varint()
		if err == io.EOF {
			break
		}
		var field, wire int
		if err == nil {
			field, wire, err = splitKey(k)
		}
		if err == nil {
			err = d.topField(s, field, wire)
		}
		if err != nil {
			return nil, d.wireError(s, at, field, err)
		}
	}
	return d, nil
}

// wireError locates a failure: the reader's own (a truncated gzip stream,
// the size bound) keeps its message; anything else means the input is not
// profile.proto.
func (d *decoded) wireError(s *stream, at int64, field int, err error) error {
	if s.ioErr != nil {
		return readError(d.name, s.ioErr)
	}
	if field != 0 {
		err = fmt.Errorf("field %d: %w", field, err)
	}
	return &parse.Error{File: d.name, Offset: at, Msg: "not a valid pprof protobuf (profile.proto)", Err: err}
}

// topField reads one top-level field.
func (d *decoded) topField(s *stream, field, wire int) error {
	switch field {
	case pbProfileSampleType, pbProfileSample, pbProfileMapping, pbProfileLocation, pbProfileFunction, pbProfileStringTable, pbProfilePeriodType:
		if wire != pbWireBytes {
			return fmt.Errorf("wire type %d, expected a message", wire)
		}
		b, err := s.payload()
		if err != nil {
			return err
		}
		return d.message(field, b)
	case pbProfileTimeNanos, pbProfileDurationNanos, pbProfilePeriod, pbProfileDefaultSampleType:
		if wire != pbWireVarint {
			return fmt.Errorf("integer field with wire type %d", wire)
		}
		v, err := s.varint()
		if err == io.EOF {
			err = errPbTruncated
		}
		switch field {
		case pbProfileTimeNanos:
			d.TimeNanos = int64(v)
		case pbProfileDurationNanos:
			d.DurationNanos = int64(v)
		case pbProfilePeriod:
			d.Period = int64(v)
		default:
			d.defaultType = v
		}
		return err
	case pbProfileComment:
		if wire == pbWireVarint {
			v, err := s.varint()
			if err == io.EOF {
				err = errPbTruncated
			}
			d.commentsIdx = append(d.commentsIdx, int64(v))
			return err
		}
		if wire != pbWireBytes {
			return fmt.Errorf("repeated integer with wire type %d", wire)
		}
		b, err := s.payload()
		if err != nil {
			return err
		}
		for r := (pbBuf{b: b}); !r.done(); {
			v, err := r.varint()
			if err != nil {
				return err
			}
			d.commentsIdx = append(d.commentsIdx, int64(v))
		}
		return nil
	}
	return s.skip(wire)
}

// message decodes one top-level message field.
func (d *decoded) message(field int, b []byte) error {
	switch field {
	case pbProfileSample:
		return d.samples.add(b)
	case pbProfileStringTable:
		return d.strs.add(b)
	case pbProfileLocation:
		return d.location(b)
	case pbProfileFunction:
		return d.function(b)
	case pbProfileMapping:
		return d.mapping(b)
	case pbProfileSampleType:
		vt, err := valueTypeIdx(b)
		d.sampleTypesIdx = append(d.sampleTypesIdx, vt)
		return err
	case pbProfilePeriodType:
		vt, err := valueTypeIdx(b)
		d.periodTypeIdx = &vt
		return err
	}
	return nil
}

func valueTypeIdx(b []byte) (pbValueType, error) {
	var v [3]uint64 // type, unit
	err := fields(b, v[:])
	return pbValueType{v[1], v[2]}, err
}

func (d *decoded) function(b []byte) error {
	var v [6]uint64 // id, name, system_name, filename, start_line
	if err := fields(b, v[:]); err != nil {
		return err
	}
	if v[1] == 0 {
		return reservedID("function", len(d.functions))
	}
	d.functions = append(d.functions, pbFunction{id: v[1], name: v[2], file: v[4]})
	return nil
}

// reservedID is the error of the i-th entry of a table with id 0, which
// profile.proto reserves (pprof refuses it too). Found as the entry
// arrives, not once the table is whole: a few kilobytes of gzipped
// empty messages were gigabytes of entries first.
func reservedID(table string, i int) error {
	return fmt.Errorf("%s %d: reserved id 0", table, i)
}

func (d *decoded) location(b []byte) error {
	var v [4]uint64 // id, mapping_id, address
	start := int32(len(d.lines))
	r := pbBuf{b: b}
	for !r.done() {
		field, wire, err := r.key()
		if err != nil {
			return err
		}
		switch {
		case field < len(v) && wire == pbWireVarint:
			v[field], err = r.varint()
		case field == 4 && wire == pbWireBytes:
			err = d.line(&r)
		default:
			err = r.skip(wire)
		}
		if err != nil {
			return err
		}
	}
	if len(d.lines) > math.MaxInt32 {
		return errors.New("too many lines")
	}
	if v[1] == 0 {
		return reservedID("location", len(d.locations))
	}
	d.locations = append(d.locations, pbLocation{id: v[1], addr: v[3], start: start, end: int32(len(d.lines))})
	return nil
}

// line reads a location's Line message, keeping its function id.
func (d *decoded) line(r *pbBuf) error {
	lb, err := r.bytes()
	if err != nil {
		return err
	}
	var lv [3]uint64 // function_id, line
	if err := fields(lb, lv[:]); err != nil {
		return err
	}
	d.lines = append(d.lines, lv[1])
	d.lineNos = append(d.lineNos, int64(lv[2]))
	return nil
}

func (d *decoded) mapping(b []byte) error {
	var v [7]uint64 // id, start, limit, offset, filename, build_id
	if err := fields(b, v[:]); err != nil {
		return err
	}
	if v[1] == 0 {
		return reservedID("mapping", len(d.mappings))
	}
	d.mappings = append(d.mappings, pbMapping{start: v[2], limit: v[3], offset: v[4], file: v[5], build: v[6]})
	return nil
}

// str resolves a string table index.
func (d *decoded) str(i int64) (string, error) {
	b, err := d.strBytes(i)
	return string(b), err
}

// strBytes resolves a string table index without copying.
func (d *decoded) strBytes(i int64) ([]byte, error) {
	if i < 0 || i >= int64(d.strs.len()) {
		return nil, fmt.Errorf("string index %d outside the table of %d", i, d.strs.len())
	}
	return d.strs.at(int(i)), nil
}

// resolve checks the tables against the complete string table and each
// other, and builds what reading the samples needs.
func (d *decoded) resolve() error {
	if d.strs.len() == 0 || len(d.strs.at(0)) != 0 {
		return errors.New("string table missing or not starting with the empty string")
	}
	for i, vt := range d.sampleTypesIdx {
		t, err := d.valueType(vt)
		if err != nil {
			return fmt.Errorf("sample type %d: %v", i, err)
		}
		d.SampleType = append(d.SampleType, t)
	}
	if d.periodTypeIdx != nil {
		t, err := d.valueType(*d.periodTypeIdx)
		if err != nil {
			return fmt.Errorf("period type: %v", err)
		}
		d.PeriodType = &t
	}
	st, err := newStackTable(d)
	if err != nil {
		return err
	}
	d.stacks = st
	for i, m := range d.mappings {
		file, err1 := d.str(int64(m.file))
		build, err2 := d.str(int64(m.build))
		if err := errors.Join(err1, err2); err != nil {
			return fmt.Errorf("mapping %d: %v", i, err)
		}
		d.Mappings = append(d.Mappings, parse.Mapping{Start: m.start, Limit: m.limit, Offset: m.offset, File: file, BuildID: build})
	}
	if d.DefaultSampleType, err = d.str(int64(d.defaultType)); err != nil {
		return fmt.Errorf("default sample type: %v", err)
	}
	for _, c := range d.commentsIdx {
		s, err := d.str(c)
		if err != nil {
			return fmt.Errorf("comment: %v", err)
		}
		d.Comments = append(d.Comments, s)
	}
	if d.samples.n > 0 && len(d.SampleType) == 0 {
		return errors.New("samples without sample types")
	}
	d.classifyLabels()
	return nil
}

func (d *decoded) valueType(vt pbValueType) (valueType, error) {
	t, err1 := d.str(int64(vt.typ))
	u, err2 := d.str(int64(vt.unit))
	return valueType{t, u}, errors.Join(err1, err2)
}

// Roles of label keys.
const (
	labelOther uint8 = iota
	labelBytes
	labelRequest
	labelHeapest // + the value's index in heapestValueNames
	// labelHeapestType is heapest's "heapest.type" label: the allocated
	// type of a sample's statistics.
	labelHeapestType = labelHeapest + uint8(len(heapestValueNames))
	// labelHeapestAll is heapest's "heapest" label: every value's
	// statistics (StatsLabelKey).
	labelHeapestAll = labelHeapestType + 1
)

// classifyLabels gives a role to the strings the samples use as label keys.
func (d *decoded) classifyLabels() {
	d.labelRole = make([]uint8, d.strs.len())
	for i := range d.strs.len() {
		s := d.strs.at(i)
		switch string(s) {
		case "bytes":
			d.labelRole[i] = labelBytes
		case "request":
			d.labelRole[i] = labelRequest
		case StatsLabelKey:
			d.labelRole[i] = labelHeapestAll
		}
		if len(s) <= len(statsLabelPrefix) || string(s[:len(statsLabelPrefix)]) != statsLabelPrefix {
			continue
		}
		for v, name := range heapestValueNames {
			if string(s[len(statsLabelPrefix):]) == name {
				d.labelRole[i] = labelHeapest + uint8(v)
			}
		}
		if string(s) == TypeLabel {
			d.labelRole[i] = labelHeapestType
		}
	}
}

// strTable is the profile's string table: its strings' bytes end to end,
// and where each ends. An entry costs four bytes beside its text, where
// a slice header each took 24: ten million empty strings, 20 MB of
// input (20 KB gzipped), took a gigabyte.
type strTable struct {
	text []byte
	ends []uint32
}

// add appends b to the table.
func (t *strTable) add(b []byte) error {
	if uint64(len(t.text))+uint64(len(b)) > math.MaxUint32 {
		return errors.New("string table larger than 4 GiB")
	}
	t.text = append(t.text, b...)
	t.ends = append(t.ends, uint32(len(t.text)))
	return nil
}

func (t *strTable) len() int { return len(t.ends) }

// at is string i. It stays valid as the table grows: growing copies the
// bytes, and the old ones are not written again.
func (t *strTable) at(i int) []byte {
	start := uint32(0)
	if i > 0 {
		start = t.ends[i-1]
	}
	return t.text[start:t.ends[i]:t.ends[i]]
}
