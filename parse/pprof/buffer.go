package pprof

// The samples of a profile.proto, kept packed from the moment they are read
// until the end of the input makes them readable (see doc.go), then read
// back in order. Each sample is re-encoded against the one before it: its
// location list (the varints the file had) as the number of bytes it
// shares with the previous list at the leaf end and at the root end plus
// the bytes in between, its values and labels as a flag when they repeat.
// Read back, a list is rebuilt as bytes and decoded only for a sample that
// is sent: most samples of a heap profile read for an in-use value have
// nothing in use, and their ids are never needed. Writers emit related
// stacks next to each other (Go's buckets, pprof's sorted samples), so
// this holds a heap profile's samples in a fraction of their encoded size,
// in a few large byte slices: no allocation and no pointer per sample.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
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
	// locs is the location ids, decoded from raw by decodeLocs (or by
	// parseSample from a field that is not one packed run).
	locs   []uint64
	Value  []int64
	labels []pbLabel
	// raw is the location ids as varints, as a packed field holds them.
	raw    []byte
	rawBuf []byte
	// vals and labs are where the values and labels lie in the message.
	vals, labs span
	// repeat is set (when read back) for a sample whose values and labels
	// are the previous sample's.
	repeat bool
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
	// pair holds the sample being added and the one before it, at
	// pair[cur] and pair[cur^1]: they trade places by the index, not by
	// copying the structs.
	pair    [2]sample
	cur     int
	prevRaw []byte
	// The previous sample's values and labels as encoded (when contiguous):
	// a sample with the same bytes has the same values and labels, already
	// decoded and checked.
	prevVals, prevLabs []byte

	// What the samples refer to, so that a profile whose samples all
	// match its tables is read without checking each one twice.
	minVals, maxVals int
	anyNeg           bool
	maxStr, maxLoc   uint64
	zeroLoc          bool
	// nonzero counts the samples by which of their values are not zero
	// (bit i for value i), for samples of at most eight values; wide is
	// set when one had more.
	nonzero [256]int
	wide    bool
}

// add decodes a sample message and packs it. Its parts are compared with
// the previous sample's as bytes: only what differs is decoded (and
// checked) here.
func (b *sampleBuf) add(msg []byte) error {
	s, prev := &b.pair[b.cur], &b.pair[b.cur^1]
	if err := parseSample(msg, s); err != nil {
		return err
	}
	var flags byte
	// Values and labels of the bytes of the previous sample's are its
	// values and labels: the slices trade places (the sample after this
	// one decodes over the other).
	sameVals := b.n > 0 && !s.vals.split && !prev.vals.split && bytes.Equal(region(msg, s.vals), b.prevVals)
	if sameVals {
		s.Value, prev.Value = prev.Value, s.Value
	} else if err := decodeValues(msg, s); err != nil {
		return err
	}
	sameLabs := b.n > 0 && !s.labs.split && !prev.labs.split && bytes.Equal(region(msg, s.labs), b.prevLabs)
	if sameLabs {
		s.labels, prev.labels = prev.labels, s.labels
	} else if err := decodeLabels(msg, s); err != nil {
		return err
	}
	if !sameVals {
		b.prevVals = append(b.prevVals[:0], region(msg, s.vals)...)
		b.noteValues(s.Value)
	}
	if !sameLabs {
		b.prevLabs = append(b.prevLabs[:0], region(msg, s.labs)...)
		b.noteLabels(s.labels)
	}
	b.countNonzero(s.Value)
	e := b.enc[:0]
	if sameVals || b.n > 0 && slices.Equal(s.Value, prev.Value) {
		flags |= sameValues
	}
	if sameLabs || b.n > 0 && slices.Equal(s.labels, prev.labels) {
		flags |= sameLabels
	}
	e = append(e, flags)
	if flags&sameValues == 0 {
		e = binary.AppendUvarint(e, uint64(len(s.Value)))
		for _, v := range s.Value {
			e = binary.AppendUvarint(e, uint64(v))
		}
	}
	pre, suf := sharedVarints(s.raw, b.prevRaw)
	mid := s.raw[pre : len(s.raw)-suf]
	if err := b.noteLocs(mid); err != nil {
		return err
	}
	e = binary.AppendUvarint(e, uint64(pre))
	e = binary.AppendUvarint(e, uint64(suf))
	e = binary.AppendUvarint(e, uint64(len(mid)))
	e = append(e, mid...)
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
	b.prevRaw = append(b.prevRaw[:0], s.raw...)
	b.cur ^= 1
	return nil
}

// noteValues records what a sample's values say about the samples: a
// sample whose values are the bytes of the previous one's says nothing new.
func (b *sampleBuf) noteValues(vals []int64) {
	if b.n == 0 || len(vals) < b.minVals {
		b.minVals = len(vals)
	}
	b.maxVals = max(b.maxVals, len(vals))
	for _, v := range vals {
		b.anyNeg = b.anyNeg || v < 0
	}
}

// noteLabels records the largest string index a sample's labels refer to.
func (b *sampleBuf) noteLabels(labels []pbLabel) {
	for _, l := range labels {
		b.maxStr = max(b.maxStr, l.key, l.str, l.unit)
	}
}

// countNonzero counts a sample of values vals in nonzero.
func (b *sampleBuf) countNonzero(vals []int64) {
	if len(vals) > 8 {
		b.wide = true
		return
	}
	m := 0
	for i, v := range vals {
		if v != 0 {
			m |= 1 << i
		}
	}
	b.nonzero[m]++
}

// withAny returns how many samples have a value not zero among those of
// mask (bit i for value i); ok is false when that is not known.
func (b *sampleBuf) withAny(mask uint64) (n int, ok bool) {
	if b.wide || mask >= 1<<8 {
		return 0, false
	}
	for m, c := range b.nonzero {
		if uint64(m)&mask != 0 {
			n += c
		}
	}
	return n, true
}

// noteLocs decodes location ids a previous sample did not have, checking
// them and noting the largest.
func (b *sampleBuf) noteLocs(raw []byte) error {
	top, zero := b.maxLoc, b.zeroLoc
	for i := 0; i < len(raw); {
		// Ids of one and two bytes inline: most tables have fewer than
		// 16,384 locations.
		id, next, ok := shortVarint(raw, i)
		if !ok {
			r := pbBuf{b: raw, off: i}
			var err error
			if id, err = r.varint(); err != nil {
				return err
			}
			next = r.off
		}
		i = next
		top = max(top, id)
		zero = zero || id == 0
	}
	b.maxLoc, b.zeroLoc = top, zero
	return nil
}

// sharedVarints returns how many bytes the varint lists a and b share at
// their start and, in what is left, at their end, cut at varint
// boundaries of both. b is a well-formed list (an earlier sample's), so the
// shared bytes of a are well-formed varints too.
func sharedVarints(a, b []byte) (pre, suf int) {
	n := min(len(a), len(b))
	// Eight bytes at a time while they agree.
	for pre+8 <= n && binary.LittleEndian.Uint64(a[pre:]) == binary.LittleEndian.Uint64(b[pre:]) {
		pre += 8
	}
	for pre < n && a[pre] == b[pre] {
		pre++
	}
	for pre > 0 && a[pre-1] >= 0x80 {
		pre--
	}
	for suf+8 <= n-pre && binary.LittleEndian.Uint64(a[len(a)-suf-8:]) == binary.LittleEndian.Uint64(b[len(b)-suf-8:]) {
		suf += 8
	}
	for suf < n-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	// The shared end starts where a varint starts in both lists.
	for suf > 0 && !(boundary(a, len(a)-suf) && boundary(b, len(b)-suf)) {
		suf--
	}
	return pre, suf
}

// boundary reports whether a varint starts at i in the list b.
func boundary(b []byte, i int) bool { return i == 0 || b[i-1] < 0x80 }

// shortVarint decodes the varint at p[i] when it has one or two bytes
// (ids below 16,384, lengths below 16 KiB: nearly every one a profile
// has), and where it ends; ok is false for any other, left to the general
// decoder.
func shortVarint(p []byte, i int) (v uint64, end int, ok bool) {
	switch {
	case i < len(p) && p[i] < 0x80:
		return uint64(p[i]), i + 1, true
	case i+1 < len(p) && p[i+1] < 0x80:
		return uint64(p[i]&0x7f) | uint64(p[i+1])<<7, i + 2, true
	}
	return 0, i, false
}

// countVarints counts the varints of a well-formed list: its bytes below
// 0x80, which end one each.
func countVarints(b []byte) int {
	n := 0
	for len(b) >= 8 {
		n += bits.OnesCount64(^binary.LittleEndian.Uint64(b) & 0x8080808080808080)
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x80 {
			n++
		}
	}
	return n
}

// put appends a packed sample to the last chunk, or to a new one: chunks
// grow from 4 KiB to 1 MiB, so small profiles stay small, large ones use
// few slices, and the last chunk's unused room stays small.
func (b *sampleBuf) put(e []byte) {
	if len(b.chunks) > 0 {
		last := &b.chunks[len(b.chunks)-1]
		if len(*last)+len(e) <= cap(*last) {
			*last = append(*last, e...)
			return
		}
	}
	size := 4 << 10
	if len(b.chunks) > 0 {
		size = min(1<<20, 2*cap(b.chunks[len(b.chunks)-1]))
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

// span is where the fields of one number lie in a message, while they
// are contiguous (as writers put them).
type span struct {
	start, end  int
	seen, split bool
}

func (sp *span) add(start, end int) {
	switch {
	case !sp.seen:
		*sp = span{start: start, end: end, seen: true}
	case start == sp.end:
		sp.end = end
	default:
		sp.split = true
	}
}

// parseSample reads a Sample message's structure into s: the location ids
// as varints in s.raw (the message's own bytes when they are one packed
// field, as every writer makes them, else re-encoded), and where its
// values and labels lie (s.vals, s.labs), which decodeValues and
// decodeLabels read when they differ from the previous sample's.
func parseSample(msg []byte, s *sample) error {
	s.locs, s.raw, s.vals, s.labs = s.locs[:0], nil, span{}, span{}
	if parseSampleFast(msg, s) {
		return nil
	}
	s.raw, s.vals, s.labs = nil, span{}, span{}
	packed := true // s.raw holds every id so far
	r := pbBuf{b: msg}
	for !r.done() {
		at := r.off
		field, wire, err := r.key()
		if err != nil {
			return err
		}
		switch {
		case field == 1 && wire == pbWireBytes && packed && s.raw == nil:
			s.raw, err = r.bytes()
		case field == 1:
			if packed {
				if s.locs, err = appendVarints(s.raw, s.locs); err != nil {
					return err
				}
				packed = false
			}
			s.locs, err = varints(&r, wire, s.locs)
		case field == 2:
			err = r.skip(wire)
			s.vals.add(at, r.off)
		case field == 3:
			err = r.skip(wire)
			s.labs.add(at, r.off)
		default:
			err = r.skip(wire)
		}
		if err != nil {
			return err
		}
	}
	if !packed {
		s.rawBuf = s.rawBuf[:0]
		for _, id := range s.locs {
			s.rawBuf = binary.AppendUvarint(s.rawBuf, id)
		}
		s.raw = s.rawBuf
	}
	return nil
}

// parseSampleFast is parseSample for the messages every writer makes:
// fields of one-byte keys, all length-delimited (packed locations and
// values, labels), lengths below 2^14, one location field. It reports
// false, leaving the rest to parseSample, on anything else.
func parseSampleFast(msg []byte, s *sample) bool {
	for i := 0; i < len(msg); {
		k := msg[i]
		if (k != 0x0a && k != 0x12 && k != 0x1a) || i+1 >= len(msg) {
			return false
		}
		n, j, ok := shortVarint(msg, i+1)
		end := j + int(n)
		if !ok || end > len(msg) {
			return false
		}
		switch k {
		case 0x0a:
			if s.raw != nil {
				return false
			}
			s.raw = msg[j:end]
		case 0x12:
			s.vals.add(i, end)
		default:
			s.labs.add(i, end)
		}
		i = end
	}
	return true
}

// region is the part of msg that holds the fields of sp: the span itself,
// or the whole message when the fields are not contiguous.
func region(msg []byte, sp span) []byte {
	if sp.split {
		return msg
	}
	return msg[sp.start:sp.end]
}

// decodeValues decodes the values (field 2) of a Sample message.
func decodeValues(msg []byte, s *sample) error {
	s.Value = s.Value[:0]
	r := pbBuf{b: region(msg, s.vals)}
	for !r.done() {
		field, wire, err := r.key()
		if err == nil && field == 2 {
			s.Value, err = varints(&r, wire, s.Value)
		} else if err == nil {
			err = r.skip(wire)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// decodeLabels decodes the labels (field 3) of a Sample message.
func decodeLabels(msg []byte, s *sample) error {
	s.labels = s.labels[:0]
	r := pbBuf{b: region(msg, s.labs)}
	for !r.done() {
		field, wire, err := r.key()
		if err == nil && field == 3 {
			err = parseLabel(&r, wire, s)
		} else if err == nil {
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
	if err := fields(b, v[:]); err != nil {
		return err
	}
	s.labels = append(s.labels, pbLabel{key: v[1], str: v[2], num: int64(v[3]), unit: v[4]})
	return nil
}

// appendVarints decodes a run of varints (a packed field's bytes).
func appendVarints(raw []byte, dst []uint64) ([]uint64, error) {
	r := pbBuf{b: raw}
	for !r.done() {
		v, err := r.varint()
		if err != nil {
			return dst, err
		}
		dst = append(dst, v)
	}
	return dst, nil
}

// sampleReader reads packed samples back, in order.
type sampleReader struct {
	b     *sampleBuf
	chunk int
	rest  []byte
	s     sample
	vals  []int64 // the last values given, which a sample may repeat
}

func (b *sampleBuf) reader() *sampleReader {
	return &sampleReader{b: b}
}

// next unpacks the next sample, its location ids as bytes only (see
// decodeLocs). Its slices are valid until the next call; Value is a copy
// the caller may change.
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
	r.s.raw = splice(r.s.raw, int(pre), int(suf), p[:n])
	r.s.locs = r.s.locs[:0]
	p = p[n:]
	r.s.repeat = flags&(sameValues|sameLabels) == sameValues|sameLabels
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

// splice makes raw the previous list's first pre bytes, then mid, then
// its last suf bytes, in place: the shared end moves first (copy allows
// the overlap), then mid is written between.
func splice(raw []byte, pre, suf int, mid []byte) []byte {
	old := len(raw)
	size := pre + len(mid) + suf
	if size > old {
		raw = slices.Grow(raw, size-old)[:size]
	}
	copy(raw[pre+len(mid):size], raw[old-suf:old])
	copy(raw[pre:], mid)
	return raw[:size]
}

// decodeLocs decodes the location ids of a sample read back (raw, which
// add checked) into locs.
func (s *sample) decodeLocs() []uint64 {
	if len(s.locs) > 0 || len(s.raw) == 0 {
		return s.locs
	}
	for p := s.raw; len(p) > 0; {
		var id uint64
		id, p = uvarint(p)
		s.locs = append(s.locs, id)
	}
	return s.locs
}

// uvarint decodes a varint that add wrote or checked, as pbBuf.varint
// does (bits past the 64th of a 10-byte varint are dropped).
func uvarint(p []byte) (uint64, []byte) {
	if p[0] < 0x80 {
		return uint64(p[0]), p[1:]
	}
	var v uint64
	for i, shift := 0, uint(0); ; i, shift = i+1, shift+7 {
		c := p[i]
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v, p[i+1:]
		}
	}
}
