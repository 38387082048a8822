package render

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/klauspost/compress/gzip"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/parse/pprof"
	"github.com/heapest/heapest/report"
	"github.com/heapest/heapest/unbias"
)

// WritePprof writes the per-stack view s as a gzip-compressed
// profile.proto that pprof viewers open: one sample per stack (and
// allocated type, as the string label "heapest.type", for inputs that have
// types), one sample type per value (its unbiased estimate, rounded), the
// first value the default sample type. Frames no symbol named keep their
// mapping and address (the mapping's file, offset and build ID as the
// input gave them), so that pprof given the binary can name them later.
//
// Every sample also carries one string label, "heapest": the exact
// ci.Stats behind each value, so that heapest reading the file back
// (parse/pprof/heapest.go) recomputes the same intervals and can merge
// such files again. For people looking at it in pprof, a few numeric
// labels: samples (the raw sample count the default value rests on),
// samples_bound (1, only when that count is an upper bound), size (the
// allocation size when the stack's samples share one) and rate.
//
// The profile is encoded as the stacks stream out of the table: strings,
// functions, mappings and locations are written when first used (protobuf
// lets a message's repeated fields interleave), so no copy of the profile
// is built in memory.
func WritePprof(w io.Writer, s *report.Stacks) error {
	if len(s.Values) == 0 {
		return fmt.Errorf("pprof output: no value to write")
	}
	// gzip's fastest level: the default one took half of the time of
	// writing a large profile, for files a fifth smaller. klauspost's
	// writer, at its own fastest level, compresses a 65 MB profile in 0.11 s
	// where compress/gzip took 0.18 s, into a file 2% smaller; its v1.20
	// took 55 ms for the 20 MB of a 30 MB dump's profile, v1.17 75 ms.
	// (Its level 2 was faster still on that profile, but slower on a Go
	// heap profile's and a trace's.)
	// The compressor writes a few hundred bytes at a time: buffered, a
	// profile of 8 MB is written in 32 writes instead of 32,000 system calls.
	out := bufio.NewWriterSize(w, 256<<10)
	zw, err := gzip.NewWriterLevel(out, gzip.BestSpeed)
	if err != nil {
		return err
	}
	e := newPprofEncoder(bufio.NewWriterSize(zw, 256<<10), s)
	if err := e.header(); err != nil {
		return err
	}
	if err := s.Each(e.sample); err != nil {
		return err
	}
	if err := e.w.Flush(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return out.Flush()
}

// profile.proto field numbers (github.com/google/pprof/proto/profile.proto).
const (
	pbSampleType        = 1
	pbSample            = 2
	pbMapping           = 3
	pbLocation          = 4
	pbFunction          = 5
	pbStringTable       = 6
	pbTimeNanos         = 9
	pbPeriodType        = 11
	pbPeriod            = 12
	pbComment           = 13
	pbDefaultSampleType = 14
)

type pprofEncoder struct {
	w    *bufio.Writer
	s    *report.Stacks
	strs map[string]int64
	// once counts the strings written by strOnce, which strs lacks.
	once int64
	// locs is the location id of each function id, as its varintWord
	// (0: not written yet).
	locs []uint64
	nloc uint64
	// buf and msg are scratch space for one message and one submessage.
	buf, msg, text, hdr []byte
	// textOf are the statistics text was written for, and textID the
	// string id of that text.
	textOf         []ci.Stats
	textID         int64
	locBuf, valBuf []uint64
	// statsKey is the string id of the "heapest" label key.
	statsKey int64
	numKeys  struct{ samples, bound, size, rate, count, bytes, none int64 }
	maps     pprofMappings
}

func newPprofEncoder(w *bufio.Writer, s *report.Stacks) *pprofEncoder {
	e := &pprofEncoder{w: w, s: s, strs: map[string]int64{}, hdr: make([]byte, 0, 20)}
	e.str("") // string 0 is the empty string
	return e
}

// header writes the sample types, period, comments and label keys.
func (e *pprofEncoder) header() error {
	for _, v := range e.s.Values {
		unit := "count"
		if v.IsSpace() {
			unit = "bytes"
		}
		e.valueType(pbSampleType, v.String(), unit)
	}
	e.statsKey = e.str(pprof.StatsLabelKey)
	e.valueType(pbPeriodType, "space", "bytes")
	if rate, ok := commonRate(e.s.Sources); ok {
		e.varintField(pbPeriod, uint64(math.Round(rate)))
	}
	// The profile of one input was taken when it was: a conversion keeps
	// what tells the newest of a process's snapshots (--latest-per-process).
	if len(e.s.Sources) == 1 && e.s.Sources[0].Time > 0 {
		e.varintField(pbTimeNanos, uint64(e.s.Sources[0].Time))
	}
	var ids []uint64
	for _, c := range pprofComments(e.s) {
		ids = append(ids, uint64(e.str(c)))
	}
	e.packed(pbComment, ids)
	e.varintField(pbDefaultSampleType, uint64(e.str(e.s.Values[0].String())))
	k := &e.numKeys
	k.samples, k.bound, k.size, k.rate = e.str("samples"), e.str("samples_bound"), e.str("size"), e.str("rate")
	k.count, k.bytes = e.str("count"), e.str("bytes")
	return nil
}

// sample writes one stack's sample, and the strings, functions and
// locations it is the first to use.
func (e *pprofEncoder) sample(stack []uint32, typ string, st []ci.Stats) error {
	b := e.appendLocations(e.buf[:0], stack)
	vals := e.valBuf[:0]
	for i := range st {
		vals = append(vals, uint64(int64(math.Round(st[i].Estimate))))
	}
	e.valBuf = vals
	b = appendPacked(b, 2, vals)
	b = e.appendLabel(b, e.statsKey, e.statsString(st), 0, 0, false)
	if typ != "" {
		b = e.appendLabel(b, e.str(pprof.TypeLabel), e.str(typ), 0, 0, false)
	}
	if main := st[0]; main.N > 0 {
		b = e.numLabels(b, main, e.s.Values[0])
	}
	e.buf = b
	e.bytesField(pbSample, b)
	return nil
}

// statsString is the string id of the "heapest" label of a sample's
// statistics st: that of the sample before when they are the same (most
// samples of a large profile repeat the one before, and writing their
// text again was most of the output), else a new string.
func (e *pprofEncoder) statsString(st []ci.Stats) int64 {
	if e.textOf != nil && sameStats(e.textOf, st) {
		return e.textID
	}
	e.textOf = append(e.textOf[:0], st...)
	e.textID = e.strOnce(e.statsText(st))
	return e.textID
}

// statsText is the "heapest" label of a sample's statistics st (see
// pprof.StatsLabelKey): a value whose statistics equal an earlier one's
// (alloc_* and inuse_* of a dump that records no frees) refers to it, to
// keep the label short.
func (e *pprofEncoder) statsText(st []ci.Stats) []byte {
	e.text = e.text[:0]
	for i := range st {
		if i > 0 {
			e.text = append(e.text, pprof.StatsSeparator...)
		}
		if st[i].N == 0 {
			continue
		}
		if j := slices.Index(st[:i], st[i]); j >= 0 {
			e.text = append(e.text, pprof.StatsSameAs...)
			e.text = strconv.AppendInt(e.text, int64(j), 10)
			continue
		}
		e.text, _ = st[i].AppendText(e.text) // never fails
	}
	return e.text
}

// sameStats reports whether a and b write the same text.
func sameStats(a, b []ci.Stats) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].SameBits(&b[i]) {
			return false
		}
	}
	return true
}

// numLabels appends the human-facing numeric labels of the default value.
func (e *pprofEncoder) numLabels(b []byte, st ci.Stats, v unbias.Value) []byte {
	k := &e.numKeys
	b = e.appendLabel(b, k.samples, 0, int64(math.Round(st.Samples)), k.count, true)
	if st.SamplesBound {
		b = e.appendLabel(b, k.bound, 0, 1, 0, true)
	}
	if v.IsSpace() && !st.Mixed && st.Unit > 0 {
		b = e.appendLabel(b, k.size, 0, int64(math.Round(st.Unit)), k.bytes, true)
	}
	if !st.MixedRate && st.Rate > 0 {
		b = e.appendLabel(b, k.rate, 0, int64(math.Round(st.Rate)), k.bytes, true)
	}
	return b
}

// appendLabel appends a Label message (field 3 of Sample): a string label
// (str) or, with num set, a numeric one with its unit.
func (e *pprofEncoder) appendLabel(b []byte, key, str, n, unit int64, num bool) []byte {
	m := appendVarintField(e.msg[:0], 1, uint64(key))
	if num {
		m = appendVarintField(m, 3, uint64(n))
		if unit != 0 {
			m = appendVarintField(m, 4, uint64(unit))
		}
	} else {
		m = appendVarintField(m, 2, uint64(str))
	}
	e.msg = m
	return appendBytesField(b, 3, m)
}

// appendLocations appends the location ids of stack as a packed field
// (field 1 of Sample), writing the locations it is the first to use, in
// its order. Each id's varint is made once, when its location is written:
// encoding them frame by frame was a tenth of the encoder's time.
func (e *pprofEncoder) appendLocations(b []byte, stack []uint32) []byte {
	words, n := e.locBuf[:0], 0
	for _, f := range stack {
		w := e.location(f)
		words = append(words, w)
		n += int(w & 0xff)
	}
	e.locBuf = words
	b = appendVarint(appendVarint(b, 1<<3|2), uint64(n))
	b = slices.Grow(b, 8*len(words))
	for _, w := range words {
		l := len(b)
		b = b[:l+8]
		binary.LittleEndian.PutUint64(b[l:], w>>8)
		b = b[:l+int(w&0xff)]
	}
	return b
}

// varintWord packs the varint of v (below 1<<49) into a word: its length
// in the low byte, its bytes above, in order.
func varintWord(v uint64) uint64 {
	var b [8]byte
	n := len(appendVarint(b[1:1], v))
	b[0] = byte(n)
	return binary.LittleEndian.Uint64(b[:])
}

// location returns the varint word (varintWord) of the location id of
// function id f, writing the location (and its function) the first time:
// a symbol's location has one line naming the function, an unnamed
// address's location the address.
func (e *pprofEncoder) location(f uint32) uint64 {
	if int(f) >= len(e.locs) {
		e.locs = append(e.locs, make([]uint64, int(f)+1-len(e.locs))...)
	}
	if w := e.locs[f]; w != 0 {
		return w
	}
	e.nloc++
	id := e.nloc
	e.locs[f] = varintWord(id)
	m := appendVarintField(nil, 1, id)
	if mf, ok := e.s.Module(f); ok {
		mapping, addr := e.mapping(mf)
		m = appendVarintField(m, 2, mapping)
		m = appendVarintField(m, 3, addr)
	} else if addr, ok := e.s.Address(f); ok {
		m = appendVarintField(m, 3, addr)
	} else {
		m = appendBytesField(m, 4, e.function(id, e.s.FuncName(f)))
	}
	e.bytesField(pbLocation, m)
	return e.locs[f]
}

// function writes the function of location id (function ids follow
// location ids) and returns the location's line naming it. A frame named
// by source line (Stacks.Lines) is its function, with its file, and the
// line in it: pprof's -lines and -list read them.
func (e *pprofEncoder) function(id uint64, name string) []byte {
	var file, line int64
	if e.s.Lines {
		if fn, f, l, ok := parse.SplitLineName(name); ok {
			name, file, line = fn, e.str(f), l
		}
	}
	n := e.str(name)
	fn := appendVarintField(nil, 1, id)
	fn = appendVarintField(fn, 2, uint64(n))
	fn = appendVarintField(fn, 3, uint64(n))
	if file != 0 {
		fn = appendVarintField(fn, 4, uint64(file))
	}
	e.bytesField(pbFunction, fn)
	l := appendVarintField(nil, 1, id)
	if line != 0 {
		l = appendVarintField(l, 2, uint64(line))
	}
	return l
}

// pprofMappings are the mappings written so far.
type pprofMappings struct {
	ids    map[pprofMappingKey]writtenMapping
	ranges [][2]uint64 // the address ranges taken
	top    uint64      // the highest limit taken
}

// pprofMappingKey identifies a mapping of a file's code in any process.
type pprofMappingKey struct {
	file, buildID string
	offset        uint64
}

type writtenMapping struct {
	id, start uint64
}

// mapping returns the mapping id of a module frame and its address in
// that mapping, writing the mapping the first time. A merge's inputs load
// one file at different addresses: the frame's file offset, the same in
// every process, places it in the mapping written. A mapping that would
// overlap one already written (two files of two processes at the same
// place) is moved above all others, as pprof wants them disjoint.
func (e *pprofEncoder) mapping(mf aggregate.ModuleFrame) (id, addr uint64) {
	m := mf.Mapping
	k := pprofMappingKey{m.File, m.BuildID, m.Offset}
	w, ok := e.maps.ids[k]
	if !ok {
		w = writtenMapping{id: uint64(len(e.maps.ids)) + 1, start: e.maps.place(m.Start, m.Limit-m.Start)}
		if e.maps.ids == nil {
			e.maps.ids = map[pprofMappingKey]writtenMapping{}
		}
		e.maps.ids[k] = w
		msg := appendVarintField(nil, 1, w.id)
		msg = appendVarintField(msg, 2, w.start)
		msg = appendVarintField(msg, 3, w.start+m.Limit-m.Start)
		msg = appendVarintField(msg, 4, m.Offset)
		msg = appendVarintField(msg, 5, uint64(e.str(m.File)))
		msg = appendVarintField(msg, 6, uint64(e.str(m.BuildID)))
		e.bytesField(pbMapping, msg)
	}
	return w.id, w.start + (mf.Addr - m.Start)
}

// place returns where a range of n bytes wanted at start goes: there when
// free, else above every range taken, page aligned.
func (pm *pprofMappings) place(start, n uint64) uint64 {
	for _, r := range pm.ranges {
		if start < r[1] && r[0] < start+n {
			start = (pm.top + 0xfffff) &^ 0xfffff
			break
		}
	}
	pm.ranges = append(pm.ranges, [2]uint64{start, start + n})
	pm.top = max(pm.top, start+n)
	return start
}

// str returns the string table index of s, writing s to the table the
// first time.
func (e *pprofEncoder) str(s string) int64 {
	if id, ok := e.strs[s]; ok {
		return id
	}
	id := int64(len(e.strs)) + e.once
	e.strs[s] = id
	e.stringField(pbStringTable, s)
	return id
}

// strOnce adds s to the string table without looking for it there: a
// sample's statistics are nearly always its own, and looking each up
// cost more than the rare repeat (the table may hold a string twice).
func (e *pprofEncoder) strOnce(s []byte) int64 {
	id := int64(len(e.strs)) + e.once
	e.once++
	e.bytesField(pbStringTable, s)
	return id
}

func (e *pprofEncoder) valueType(field int, typ, unit string) {
	t, u := e.str(typ), e.str(unit)
	m := appendVarintField(nil, 1, uint64(t))
	m = appendVarintField(m, 2, uint64(u))
	e.bytesField(field, m)
}

func (e *pprofEncoder) varintField(field int, v uint64) {
	e.w.Write(appendVarintField(nil, field, v))
}

func (e *pprofEncoder) bytesField(field int, data []byte) {
	e.fieldHeader(field, len(data))
	e.w.Write(data)
}

func (e *pprofEncoder) stringField(field int, data string) {
	e.fieldHeader(field, len(data))
	e.w.WriteString(data)
}

// fieldHeader writes the tag and length of a length-delimited field, from
// the encoder's own scratch space: a local array escaped to the heap, once
// per field.
func (e *pprofEncoder) fieldHeader(field, n int) {
	e.hdr = appendVarint(appendVarint(e.hdr[:0], uint64(field)<<3|2), uint64(n))
	e.w.Write(e.hdr)
}

func (e *pprofEncoder) packed(field int, vs []uint64) {
	if len(vs) > 0 {
		e.w.Write(appendPacked(nil, field, vs))
	}
}

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendVarintField(b []byte, field int, v uint64) []byte {
	return appendVarint(appendVarint(b, uint64(field)<<3), v)
}

func appendBytesField(b []byte, field int, data []byte) []byte {
	b = appendVarint(appendVarint(b, uint64(field)<<3|2), uint64(len(data)))
	return append(b, data...)
}

// appendPacked appends a packed repeated varint field.
func appendPacked(b []byte, field int, vs []uint64) []byte {
	n := 0
	for _, v := range vs {
		n += varintLen(v)
	}
	b = appendVarint(appendVarint(b, uint64(field)<<3|2), uint64(n))
	for _, v := range vs {
		b = appendVarint(b, v)
	}
	return b
}

func varintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// pprofComments mark the file as heapest's and say where it came from.
func pprofComments(s *report.Stacks) []string {
	c := []string{pprof.HeapestMarker,
		"heapest: unbiased estimates; value=" + s.Values[0].String()}
	if s.Merged != nil {
		c = append(c, pprof.MergedComment(s.Merged))
	}
	for _, src := range s.Sources {
		c = append(c, fmt.Sprintf("source: %s format=%s rate=%g samples=%g", src.Path, src.Format, src.Rate, src.Samples))
	}
	for _, sk := range s.Skipped {
		c = append(c, fmt.Sprintf("%s%v", pprof.SkippedPrefix, sk.Err))
	}
	if s.Merged != nil {
		for _, why := range s.Merged.SkippedWhy { // by merges underneath
			c = append(c, pprof.SkippedPrefix+why)
		}
	}
	return c
}

func commonRate(srcs []parse.Source) (float64, bool) {
	if len(srcs) == 0 {
		return 0, false
	}
	for _, s := range srcs[1:] {
		if s.Rate != srcs[0].Rate {
			return 0, false
		}
	}
	return srcs[0].Rate, srcs[0].Rate > 0
}
