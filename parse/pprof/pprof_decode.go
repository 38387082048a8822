package pprof

// A streaming decoder for profile.proto (github.com/google/pprof
// proto/profile.proto). google/pprof's profile package builds a Go object
// per sample, label and location list before anything can be read; for a
// heap profile of 100,000 samples that is more memory than the records
// heapest makes from it. This decoder indexes the top-level messages, decodes
// the tables (strings, functions, locations, mappings) once, and decodes
// each sample into reused buffers while the records are built. Every length
// is checked against the bytes that remain before it is used.

import (
	"errors"
	"fmt"
)

// Field numbers of the messages heapest reads.
const (
	pbProfileSampleType        = 1
	pbProfileSample            = 2
	pbProfileMapping           = 3
	pbProfileLocation          = 4
	pbProfileFunction          = 5
	pbProfileStringTable       = 6
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

// pbBuf reads protobuf wire format from a byte slice.
type pbBuf struct {
	b   []byte
	off int
}

var errPbTruncated = errors.New("truncated message")

func (r *pbBuf) done() bool { return r.off >= len(r.b) }

func (r *pbBuf) varint() (uint64, error) {
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
	// Field number 0 is invalid protobuf, but google/pprof's decoder skips
	// it like any unknown field; so does heapest, to read what pprof reads.
	if k>>3 > 1<<29 {
		return 0, 0, fmt.Errorf("invalid field number %d", k>>3)
	}
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

// int64s appends a repeated integer field, packed or not.
func (r *pbBuf) int64s(wire int, dst []int64) ([]int64, error) {
	return varints(r, wire, dst)
}

// uint64s is int64s for unsigned fields.
func (r *pbBuf) uint64s(wire int, dst []uint64) ([]uint64, error) {
	return varints(r, wire, dst)
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

// scalar reads a varint field, refusing other wire types.
func (r *pbBuf) scalar(wire int) (uint64, error) {
	if wire != pbWireVarint {
		return 0, fmt.Errorf("integer field with wire type %d", wire)
	}
	return r.varint()
}

// pbValueType is a sample or period type, resolved to strings.
type pbValueType struct{ Type, Unit string }

// pbLocation is a location: its address and its lines, innermost first.
type pbLocation struct {
	addr  uint64
	lines []pbLine
}

type pbLine struct {
	fn   uint64
	line int64
}

type pbFunction struct{ name, file string }

// pbProfile is a decoded profile.proto with its samples left encoded.
type pbProfile struct {
	SampleType        []pbValueType
	PeriodType        *pbValueType
	Period            int64
	DurationNanos     int64
	DefaultSampleType string
	Comments          []string
	Mappings          []Mapping

	samples   [][]byte
	strings   []string
	locations map[uint64]*pbLocation
	functions map[uint64]pbFunction
	// dense indexes locations by id when the ids are small (writers number
	// them 1…n): a slice lookup per frame instead of a map lookup.
	dense []*pbLocation
}

// loc returns the location with an id, or nil.
func (p *pbProfile) loc(id uint64) *pbLocation {
	if p.dense != nil {
		if id < uint64(len(p.dense)) {
			return p.dense[id]
		}
		return nil
	}
	return p.locations[id]
}

// indexDense fills dense when the largest id is within a small multiple of
// the number of locations.
func (p *pbProfile) indexDense() {
	var top uint64
	for id := range p.locations {
		top = max(top, id)
	}
	if top > 4*uint64(len(p.locations))+64 {
		return
	}
	p.dense = make([]*pbLocation, top+1)
	for id, l := range p.locations {
		p.dense[id] = l
	}
}

// pbLabel is a sample label with its strings resolved.
type pbLabel struct {
	key, str string
	num      int64
	isNum    bool
}

// pbSample is one decoded sample; its slices are reused from sample to
// sample.
type pbSample struct {
	locs   []uint64
	Value  []int64
	labels []pbLabel
}

// NumLabel returns the first numeric value of a label.
func (s *pbSample) NumLabel(key string) (int64, bool) {
	for _, l := range s.labels {
		if l.isNum && l.key == key {
			return l.num, true
		}
	}
	return 0, false
}

// Label returns the first string value of a label.
func (s *pbSample) Label(key string) (string, bool) {
	for _, l := range s.labels {
		if !l.isNum && l.key == key {
			return l.str, true
		}
	}
	return "", false
}

// decodePprof indexes and decodes a profile.proto.
func decodePprof(data []byte) (*pbProfile, error) {
	p := &pbProfile{locations: map[uint64]*pbLocation{}, functions: map[uint64]pbFunction{}}
	var sampleTypes, mappings, locations, functions [][]byte
	var periodType []byte
	var comments []int64
	var defaultType uint64
	r := pbBuf{b: data}
	for !r.done() {
		field, wire, err := r.key()
		if err != nil {
			return nil, fmt.Errorf("byte %d: %v", r.off, err)
		}
		at := r.off
		switch field {
		case pbProfileSampleType, pbProfileSample, pbProfileMapping, pbProfileLocation, pbProfileFunction, pbProfileStringTable, pbProfilePeriodType:
			if wire != pbWireBytes {
				return nil, fmt.Errorf("byte %d: field %d has wire type %d, expected a message", at, field, wire)
			}
			b, err := r.bytes()
			if err != nil {
				return nil, fmt.Errorf("byte %d: field %d: %v", at, field, err)
			}
			switch field {
			case pbProfileSampleType:
				sampleTypes = append(sampleTypes, b)
			case pbProfileSample:
				p.samples = append(p.samples, b)
			case pbProfileMapping:
				mappings = append(mappings, b)
			case pbProfileLocation:
				locations = append(locations, b)
			case pbProfileFunction:
				functions = append(functions, b)
			case pbProfileStringTable:
				p.strings = append(p.strings, string(b))
			case pbProfilePeriodType:
				periodType = b
			}
		case pbProfileDurationNanos, pbProfilePeriod, pbProfileDefaultSampleType:
			v, err := r.scalar(wire)
			if err != nil {
				return nil, fmt.Errorf("byte %d: field %d: %v", at, field, err)
			}
			switch field {
			case pbProfileDurationNanos:
				p.DurationNanos = int64(v)
			case pbProfilePeriod:
				p.Period = int64(v)
			default:
				defaultType = v
			}
		case pbProfileComment:
			if comments, err = r.int64s(wire, comments); err != nil {
				return nil, fmt.Errorf("byte %d: comment: %v", at, err)
			}
		default:
			if err := r.skip(wire); err != nil {
				return nil, fmt.Errorf("byte %d: field %d: %v", at, field, err)
			}
		}
	}
	if len(p.strings) == 0 || p.strings[0] != "" {
		return nil, errors.New("string table missing or not starting with the empty string")
	}
	if err := p.decodeTables(sampleTypes, periodType, mappings, locations, functions); err != nil {
		return nil, err
	}
	var err error
	if p.DefaultSampleType, err = p.str(int64(defaultType)); err != nil {
		return nil, fmt.Errorf("default sample type: %v", err)
	}
	for _, c := range comments {
		s, err := p.str(c)
		if err != nil {
			return nil, fmt.Errorf("comment: %v", err)
		}
		p.Comments = append(p.Comments, s)
	}
	if len(p.samples) > 0 && len(p.SampleType) == 0 {
		return nil, errors.New("samples without sample types")
	}
	return p, nil
}

// str resolves a string table index.
func (p *pbProfile) str(i int64) (string, error) {
	if i < 0 || i >= int64(len(p.strings)) {
		return "", fmt.Errorf("string index %d outside the table of %d", i, len(p.strings))
	}
	return p.strings[i], nil
}

func (p *pbProfile) decodeTables(sampleTypes [][]byte, periodType []byte, mappings, locations, functions [][]byte) error {
	for i, b := range sampleTypes {
		vt, err := p.valueType(b)
		if err != nil {
			return fmt.Errorf("sample type %d: %v", i, err)
		}
		p.SampleType = append(p.SampleType, vt)
	}
	if periodType != nil {
		vt, err := p.valueType(periodType)
		if err != nil {
			return fmt.Errorf("period type: %v", err)
		}
		p.PeriodType = &vt
	}
	for i, b := range functions {
		if err := p.function(b); err != nil {
			return fmt.Errorf("function %d: %v", i, err)
		}
	}
	for i, b := range locations {
		if err := p.location(b); err != nil {
			return fmt.Errorf("location %d: %v", i, err)
		}
	}
	for i, b := range mappings {
		if err := p.mapping(b); err != nil {
			return fmt.Errorf("mapping %d: %v", i, err)
		}
	}
	p.indexDense()
	return nil
}

// fields reads a message's varint fields into vals (by field number) and
// hands other fields to other.
func fields(b []byte, vals []uint64, other func(field, wire int, r *pbBuf) error) error {
	r := pbBuf{b: b}
	for !r.done() {
		field, wire, err := r.key()
		if err != nil {
			return err
		}
		if field < len(vals) && wire == pbWireVarint {
			if vals[field], err = r.varint(); err != nil {
				return err
			}
			continue
		}
		if other != nil {
			if err := other(field, wire, &r); err != nil {
				return err
			}
			continue
		}
		if err := r.skip(wire); err != nil {
			return err
		}
	}
	return nil
}

func (p *pbProfile) valueType(b []byte) (pbValueType, error) {
	var v [3]uint64
	if err := fields(b, v[:], nil); err != nil {
		return pbValueType{}, err
	}
	t, err1 := p.str(int64(v[1]))
	u, err2 := p.str(int64(v[2]))
	return pbValueType{t, u}, errors.Join(err1, err2)
}

func (p *pbProfile) function(b []byte) error {
	var v [6]uint64 // id, name, system_name, filename, start_line
	if err := fields(b, v[:], nil); err != nil {
		return err
	}
	name, err1 := p.str(int64(v[2]))
	file, err2 := p.str(int64(v[4]))
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	if v[1] == 0 {
		return errors.New("reserved id 0")
	}
	if _, dup := p.functions[v[1]]; dup {
		return fmt.Errorf("duplicate id %d", v[1])
	}
	p.functions[v[1]] = pbFunction{name, file}
	return nil
}

func (p *pbProfile) location(b []byte) error {
	var v [4]uint64 // id, mapping_id, address
	loc := &pbLocation{}
	err := fields(b, v[:], func(field, wire int, r *pbBuf) error {
		if field != 4 || wire != pbWireBytes {
			return r.skip(wire)
		}
		lb, err := r.bytes()
		if err != nil {
			return err
		}
		var lv [3]uint64 // function_id, line
		if err := fields(lb, lv[:], nil); err != nil {
			return err
		}
		loc.lines = append(loc.lines, pbLine{fn: lv[1], line: int64(lv[2])})
		return nil
	})
	if err != nil {
		return err
	}
	if v[1] == 0 {
		return errors.New("reserved id 0")
	}
	if _, dup := p.locations[v[1]]; dup {
		return fmt.Errorf("duplicate id %d", v[1])
	}
	for _, ln := range loc.lines {
		if _, ok := p.functions[ln.fn]; !ok && ln.fn != 0 {
			return fmt.Errorf("line refers to unknown function %d", ln.fn)
		}
	}
	loc.addr = v[3]
	p.locations[v[1]] = loc
	return nil
}

func (p *pbProfile) mapping(b []byte) error {
	var v [7]uint64 // id, start, limit, offset, filename, build_id
	if err := fields(b, v[:], nil); err != nil {
		return err
	}
	file, err1 := p.str(int64(v[5]))
	build, err2 := p.str(int64(v[6]))
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	p.Mappings = append(p.Mappings, Mapping{Start: v[2], Limit: v[3], Offset: v[4], File: file, BuildID: build})
	return nil
}

// NumSamples is the number of samples.
func (p *pbProfile) NumSamples() int { return len(p.samples) }

// Sample decodes sample i into s, checking it against the tables.
func (p *pbProfile) Sample(i int, s *pbSample) error {
	s.locs, s.Value, s.labels = s.locs[:0], s.Value[:0], s.labels[:0]
	r := pbBuf{b: p.samples[i]}
	for !r.done() {
		field, wire, err := r.key()
		if err != nil {
			return err
		}
		switch field {
		case 1:
			s.locs, err = r.uint64s(wire, s.locs)
		case 2:
			s.Value, err = r.int64s(wire, s.Value)
		case 3:
			err = p.label(wire, &r, s)
		default:
			err = r.skip(wire)
		}
		if err != nil {
			return err
		}
	}
	if len(s.Value) != len(p.SampleType) {
		return fmt.Errorf("%d values for %d sample types", len(s.Value), len(p.SampleType))
	}
	for _, id := range s.locs {
		if p.loc(id) == nil {
			return fmt.Errorf("unknown location %d", id)
		}
	}
	return nil
}

func (p *pbProfile) label(wire int, r *pbBuf, s *pbSample) error {
	if wire != pbWireBytes {
		return fmt.Errorf("label with wire type %d", wire)
	}
	b, err := r.bytes()
	if err != nil {
		return err
	}
	var v [5]uint64 // key, str, num, num_unit
	if err := fields(b, v[:], nil); err != nil {
		return err
	}
	key, err1 := p.str(int64(v[1]))
	str, err2 := p.str(int64(v[2]))
	_, err3 := p.str(int64(v[4]))
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	// As pprof reads labels: a string when str is set, else a number when
	// the number or its unit is set, else nothing.
	switch {
	case v[2] != 0:
		s.labels = append(s.labels, pbLabel{key: key, str: str})
	case v[3] != 0 || v[4] != 0:
		s.labels = append(s.labels, pbLabel{key: key, num: int64(v[3]), isNum: true})
	}
	return nil
}
