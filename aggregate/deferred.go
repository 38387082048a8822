package aggregate

import "github.com/heapest/heapest/parse"

// Records whose counts are in an encoding the parser learns only at the
// end (parse.Unresolved: jemalloc's prof_unbias auto-detection) are kept
// until Finish. A dump sends a hundred thousand of them that differ only
// in their cell and their four numbers, so each is kept as just those
// (64 bytes), and what else a record says (scheme, rate, the counts' other
// fields) is kept once per distinct combination: a dump has one.

// deferred is one kept record: its cell key (without the size), its
// numbers, and which of the store's rests completes it.
type deferred struct {
	key          cellKey
	inUse, alloc [2]float64 // Objects, Bytes
	rest         uint32
}

// rest is what a kept record says besides its cell and numbers.
type rest struct {
	scheme       parse.Scheme
	hasOffset    bool
	rate, offset float64
	inUse, alloc parse.Counts // with Objects and Bytes zero
}

// deferredStore holds kept records in chunks (growing never copies them)
// and their distinct rests.
type deferredStore struct {
	recs  chunked[deferred]
	rests []rest
}

// len is the number of records kept.
func (s *deferredStore) len() int { return s.recs.n }

// add keeps rec, whose cell key is k.
func (s *deferredStore) add(k cellKey, rec *parse.Record) {
	r := rest{scheme: rec.Scheme, hasOffset: rec.HasOffset, rate: rec.Rate, offset: rec.Offset, inUse: rec.InUse, alloc: rec.Alloc}
	r.inUse.Objects, r.inUse.Bytes, r.alloc.Objects, r.alloc.Bytes = 0, 0, 0, 0
	d := deferred{key: k, inUse: [2]float64{rec.InUse.Objects, rec.InUse.Bytes}, alloc: [2]float64{rec.Alloc.Objects, rec.Alloc.Bytes}}
	d.rest = s.restID(r)
	s.recs.put([]deferred{d})
}

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

// record fills rec with d, its encodings resolved by p.
func (s *deferredStore) record(d *deferred, rec *parse.Record, p *parse.Profile) {
	r := &s.rests[d.rest]
	rec.Scheme, rec.Rate, rec.Offset, rec.HasOffset = r.scheme, r.rate, r.offset, r.hasOffset
	rec.InUse, rec.Alloc = r.inUse, r.alloc
	rec.InUse.Objects, rec.InUse.Bytes = d.inUse[0], d.inUse[1]
	rec.Alloc.Objects, rec.Alloc.Bytes = d.alloc[0], d.alloc[1]
	rec.InUse.Enc, rec.Alloc.Enc = p.Resolve(r.inUse.Enc), p.Resolve(r.alloc.Enc)
}
