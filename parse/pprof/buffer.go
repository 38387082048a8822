package pprof

// The samples of a profile.proto, kept packed from the moment they are read
// until the end of the input makes them readable (see doc.go), then read
// back in order. Each sample is re-encoded against the one before it: its
// location list as the number of ids shared with the previous list at the
// leaf end and at the root end plus the ids in between, its values and
// labels as a flag when they repeat. Writers emit related stacks next to
// each other (Go's buckets, pprof's sorted samples), so this holds a heap
// profile's samples in a fraction of their encoded size, in a few large
// byte slices: no allocation and no pointer per sample.

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// pbLabel is a sample label as written: string table indices and a number.
type pbLabel struct {
	key, str, unit uint64
	num            int64
}

// sample is one sample, decoded; its slices are reused from sample to
// sample.
type sample struct {
	locs   []uint64
	Value  []int64
	labels []pbLabel
}

// Flags of a packed sample.
const (
	sameValues = 1 << iota
	sameLabels
)

// sampleBuf packs samples in the order they are added.
type sampleBuf struct {
	chunks [][]byte
	n      int // samples
	enc    []byte
	cur    sample
	prev   sample

	// What the samples refer to, so that a profile whose samples all
	// match its tables is read without checking each one twice.
	minVals, maxVals int
	anyNeg           bool
	maxStr, maxLoc   uint64
	zeroLoc          bool
}

// add decodes a sample message and packs it.
func (b *sampleBuf) add(msg []byte) error {
	s := &b.cur
	if err := parseSample(msg, s); err != nil {
		return err
	}
	b.note(s)
	e := b.enc[:0]
	var flags byte
	if b.n > 0 && slices.Equal(s.Value, b.prev.Value) {
		flags |= sameValues
	}
	if b.n > 0 && slices.Equal(s.labels, b.prev.labels) {
		flags |= sameLabels
	}
	e = append(e, flags)
	if flags&sameValues == 0 {
		e = binary.AppendUvarint(e, uint64(len(s.Value)))
		for _, v := range s.Value {
			e = binary.AppendUvarint(e, uint64(v))
		}
	}
	pre, suf := shared(s.locs, b.prev.locs)
	e = binary.AppendUvarint(e, uint64(pre))
	e = binary.AppendUvarint(e, uint64(suf))
	mid := s.locs[pre : len(s.locs)-suf]
	e = binary.AppendUvarint(e, uint64(len(mid)))
	for _, id := range mid {
		e = binary.AppendUvarint(e, id)
	}
	if flags&sameLabels == 0 {
		e = binary.AppendUvarint(e, uint64(len(s.labels)))
		for _, l := range s.labels {
			e = binary.AppendUvarint(e, l.key)
			e = binary.AppendUvarint(e, l.str)
			e = binary.AppendUvarint(e, uint64(l.num))
			e = binary.AppendUvarint(e, l.unit)
		}
	}
	b.put(e)
	b.enc = e
	b.n++
	b.cur, b.prev = b.prev, b.cur
	return nil
}

// note records what a sample refers to.
func (b *sampleBuf) note(s *sample) {
	if b.n == 0 || len(s.Value) < b.minVals {
		b.minVals = len(s.Value)
	}
	b.maxVals = max(b.maxVals, len(s.Value))
	for _, v := range s.Value {
		b.anyNeg = b.anyNeg || v < 0
	}
	for _, l := range s.labels {
		b.maxStr = max(b.maxStr, l.key, l.str, l.unit)
	}
	for _, id := range s.locs {
		b.maxLoc = max(b.maxLoc, id)
		b.zeroLoc = b.zeroLoc || id == 0
	}
}

// shared counts the ids a and b share at their start and, in what is left,
// at their end.
func shared(a, b []uint64) (pre, suf int) {
	n := min(len(a), len(b))
	for pre < n && a[pre] == b[pre] {
		pre++
	}
	for suf < n-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	return pre, suf
}

// put appends a packed sample to the last chunk, or to a new one: chunks
// grow from 64 KiB to 4 MiB, so small profiles stay small and large ones
// use few slices.
func (b *sampleBuf) put(e []byte) {
	if len(b.chunks) > 0 {
		last := &b.chunks[len(b.chunks)-1]
		if len(*last)+len(e) <= cap(*last) {
			*last = append(*last, e...)
			return
		}
	}
	size := 64 << 10
	if len(b.chunks) > 0 {
		size = min(4<<20, 2*cap(b.chunks[len(b.chunks)-1]))
	}
	c := make([]byte, 0, max(size, len(e)))
	b.chunks = append(b.chunks, append(c, e...))
}

// bytes is the memory the packed samples take.
func (b *sampleBuf) bytes() int {
	n := 0
	for _, c := range b.chunks {
		n += cap(c)
	}
	return n
}

// parseSample decodes a Sample message into s.
func parseSample(msg []byte, s *sample) error {
	s.locs, s.Value, s.labels = s.locs[:0], s.Value[:0], s.labels[:0]
	r := pbBuf{b: msg}
	for !r.done() {
		field, wire, err := r.key()
		if err != nil {
			return err
		}
		switch field {
		case 1:
			s.locs, err = varints(&r, wire, s.locs)
		case 2:
			s.Value, err = varints(&r, wire, s.Value)
		case 3:
			err = parseLabel(&r, wire, s)
		default:
			err = r.skip(wire)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func parseLabel(r *pbBuf, wire int, s *sample) error {
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
	s.labels = append(s.labels, pbLabel{key: v[1], str: v[2], num: int64(v[3]), unit: v[4]})
	return nil
}

// sampleReader reads packed samples back, in order.
type sampleReader struct {
	b     *sampleBuf
	chunk int
	rest  []byte
	s     sample
	vals  []int64 // the last values given, which a sample may repeat
	spare []uint64
}

func (b *sampleBuf) reader() *sampleReader {
	return &sampleReader{b: b}
}

// next unpacks the next sample. Its slices are valid until the next call;
// Value is a copy the caller may change.
func (r *sampleReader) next() *sample {
	for len(r.rest) == 0 {
		r.rest = r.b.chunks[r.chunk]
		r.chunk++
	}
	p := r.rest
	flags := p[0]
	p = p[1:]
	var n uint64
	if flags&sameValues == 0 {
		n, p = uvarint(p)
		r.vals = r.vals[:0]
		for range n {
			var v uint64
			v, p = uvarint(p)
			r.vals = append(r.vals, int64(v))
		}
	}
	r.s.Value = append(r.s.Value[:0], r.vals...)
	var pre, suf uint64
	pre, p = uvarint(p)
	suf, p = uvarint(p)
	n, p = uvarint(p)
	prev := r.s.locs
	locs := append(r.spare[:0], prev[:pre]...)
	for range n {
		var id uint64
		id, p = uvarint(p)
		locs = append(locs, id)
	}
	locs = append(locs, prev[len(prev)-int(suf):]...)
	r.s.locs, r.spare = locs, prev
	if flags&sameLabels == 0 {
		n, p = uvarint(p)
		r.s.labels = r.s.labels[:0]
		for range n {
			var l pbLabel
			var num uint64
			l.key, p = uvarint(p)
			l.str, p = uvarint(p)
			num, p = uvarint(p)
			l.unit, p = uvarint(p)
			l.num = int64(num)
			r.s.labels = append(r.s.labels, l)
		}
	}
	r.rest = p
	return &r.s
}

// uvarint decodes a varint that add wrote (so known to be well formed).
func uvarint(p []byte) (uint64, []byte) {
	if p[0] < 0x80 {
		return uint64(p[0]), p[1:]
	}
	v, n := binary.Uvarint(p)
	return v, p[n:]
}
