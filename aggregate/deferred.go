package aggregate

import (
	"math"

	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/parse"
)

// Records whose counts are in an encoding the parser learns only at the
// end (parse.Unresolved: jemalloc's prof_unbias auto-detection) are kept
// until Finish. A dump sends a hundred thousand of them that differ only
// in their cell and their four numbers, and those numbers repeat: a 30 MB
// dump's 98,600 lines hold 17,700 distinct pairs (one object of a size
// class, two of it, …). So each record is kept as its cell and the index
// of its numbers (32 bytes), the numbers once per distinct value, and
// what else a record says (scheme, rate, the counts' other fields) once
// per distinct combination: a dump has one. Finish unbiases each distinct
// numbers once (deferredMemo).

// deferred is one kept record: its cell key (without the size) and which
// of the store's numbers are its.
type deferred struct {
	key  cellKey
	nums uint32
}

// deferredNums is what a kept record's statistics depend on: its numbers
// and which of the store's rests completes them.
type deferredNums struct {
	inUse, alloc [2]float64 // Objects, Bytes
	rest         uint32
}

func (k *deferredNums) hash() uint64 {
	h := mix(math.Float64bits(k.inUse[0]) ^ uint64(k.rest)<<32)
	h = mix(h ^ math.Float64bits(k.inUse[1]))
	h = mix(h ^ math.Float64bits(k.alloc[0]))
	return mix(h ^ math.Float64bits(k.alloc[1]))
}

// rest is what a kept record says besides its cell and numbers.
type rest struct {
	scheme       parse.Scheme
	hasOffset    bool
	rate, offset float64
	inUse, alloc parse.Counts // with Objects and Bytes zero
}

// deferredStore holds kept records in chunks (growing never copies them),
// their distinct numbers and their distinct rests.
type deferredStore struct {
	recs  chunked[deferred]
	nums  [][]deferredNums // numsChunk each
	nNums int
	index slots // of nums
	rests []rest
}

const numsChunk = 1 << 12

// len is the number of records kept.
func (s *deferredStore) len() int { return s.recs.n }

// add keeps rec, whose cell key is k.
func (s *deferredStore) add(k cellKey, rec *parse.Record) {
	r := rest{scheme: rec.Scheme, hasOffset: rec.HasOffset, rate: rec.Rate, offset: rec.Offset, inUse: rec.InUse, alloc: rec.Alloc}
	r.inUse.Objects, r.inUse.Bytes, r.alloc.Objects, r.alloc.Bytes = 0, 0, 0, 0
	n := deferredNums{inUse: [2]float64{rec.InUse.Objects, rec.InUse.Bytes}, alloc: [2]float64{rec.Alloc.Objects, rec.Alloc.Bytes}}
	n.rest = s.restID(r)
	s.recs.put([]deferred{{key: k, nums: s.numsID(&n)}})
}

// numsID returns n's index, adding it when new.
func (s *deferredStore) numsID(n *deferredNums) uint32 {
	if s.index.ids == nil {
		s.index = newSlots(1024)
	}
	h := n.hash()
	for i := h & s.index.mask; ; i = (i + 1) & s.index.mask {
		e := s.index.ids[i]
		if e == 0 {
			break
		}
		if id, ok := tagged(e, h); ok && *s.numsAt(id) == *n {
			return id
		}
	}
	if s.nNums%numsChunk == 0 {
		s.nums = append(s.nums, make([]deferredNums, 0, numsChunk))
	}
	last := &s.nums[len(s.nums)-1]
	*last = append(*last, *n)
	id := uint32(s.nNums)
	s.nNums++
	s.index.place(id, h)
	if s.index.full(s.nNums) {
		s.index = newSlots(2 * s.nNums)
		for i := 0; i < s.nNums; i++ {
			s.index.place(uint32(i), s.numsAt(uint32(i)).hash())
		}
	}
	return id
}

// numsAt returns the numbers of index id.
func (s *deferredStore) numsAt(id uint32) *deferredNums { return &s.nums[id/numsChunk][id%numsChunk] }

// restID returns r's index, adding it when new; the last one is tried
// first, as it almost always is the one.
func (s *deferredStore) restID(r rest) uint32 {
	for i := len(s.rests) - 1; i >= 0; i-- {
		if s.rests[i] == r {
			return uint32(i)
		}
	}
	s.rests = append(s.rests, r)
	return uint32(len(s.rests) - 1)
}

// each calls f with every kept record, in the order kept.
func (s *deferredStore) each(f func(d *deferred)) {
	for _, ch := range s.recs.c {
		for i := range ch {
			f(&ch[i])
		}
	}
}

// record fills rec with numbers id, their encodings resolved by p.
func (s *deferredStore) record(id uint32, rec *parse.Record, p *parse.Profile) {
	n := s.numsAt(id)
	r := &s.rests[n.rest]
	rec.Scheme, rec.Rate, rec.Offset, rec.HasOffset = r.scheme, r.rate, r.offset, r.hasOffset
	rec.InUse, rec.Alloc = r.inUse, r.alloc
	rec.InUse.Objects, rec.InUse.Bytes = n.inUse[0], n.inUse[1]
	rec.Alloc.Objects, rec.Alloc.Bytes = n.alloc[0], n.alloc[1]
	rec.InUse.Enc, rec.Alloc.Enc = p.Resolve(r.inUse.Enc), p.Resolve(r.alloc.Enc)
}

// deferredMemo is what Finish made of each distinct numbers of the kept
// records: unbiased once, and their statistics found in the table's pool
// once (valueStats.addPooled), however many records share them.
type deferredMemo struct {
	nv   int
	done []bool    // per numbers: pids and size hold what they gave
	size []float64 // per numbers: the cell size they gave
	pids []uint32  // nv per numbers: pool entry, or noPooled
}

// noPooled marks a value the numbers have nothing for.
const noPooled = math.MaxUint32

func newDeferredMemo(s *deferredStore, nv int) deferredMemo {
	return deferredMemo{nv: nv, done: make([]bool, s.nNums), size: make([]float64, s.nNums), pids: make([]uint32, nv*s.nNums)}
}

// of returns the pool entries (nv) of numbers id's statistics, with the
// cell size, when known.
func (m *deferredMemo) of(id uint32) (pids []uint32, size float64, ok bool) {
	if !m.done[id] {
		return nil, 0, false
	}
	return m.pids[int(id)*m.nv : int(id+1)*m.nv], m.size[id], true
}

// room returns where addPooled notes the pool entries of numbers id's
// statistics st.
func (m *deferredMemo) room(id uint32, st []ci.Stats) []uint32 {
	pids := m.pids[int(id)*m.nv : int(id+1)*m.nv]
	for i := range st {
		if st[i].N == 0 {
			pids[i] = noPooled
		}
	}
	return pids
}

// settle marks numbers id known, with the cell size they gave, when the
// pool took every one of their statistics (it may have merged them into
// a cell that had some instead, or be full).
func (m *deferredMemo) settle(id uint32, size float64) {
	for _, p := range m.pids[int(id)*m.nv : int(id+1)*m.nv] {
		if p == 0 {
			return
		}
	}
	m.done[id], m.size[id] = true, size
}
