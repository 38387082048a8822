package aggregate

import "slices"

// frameStore holds the ids of stacks' frames (or functions) in chunks of
// 16-bit words: one word an id when all of a stack's ids fit in 16 bits,
// as in nearly every stack of a Go or .NET profile (tens of thousands of
// distinct frames at most), and two words an id otherwise. The stacks are
// most of the memory of a profile of many distinct stacks: a Go heap
// profile of 920,000 stacks 46 frames deep holds 170 MB of them at four
// bytes an id, and each page of that costs a page fault.
type frameStore struct{ chunked[uint16] }

// span locates a stack's ids in a frameStore: n ids from word off of
// chunk, two words each when n has the wide bit.
type span struct{ chunk, off, n uint32 }

// wide marks, in span.n, a stack stored two words an id.
const wide = 1 << 31

// len is the number of ids of the stack.
func (sp span) len() int { return int(sp.n &^ wide) }

// words is the number of words the stack takes.
func (sp span) words() int {
	if sp.n&wide != 0 {
		return 2 * sp.len()
	}
	return sp.len()
}

// narrow reports whether every id fits in 16 bits.
func narrow(ids []uint32) bool {
	var a, b uint32
	i := 0
	for ; i+4 <= len(ids); i += 4 {
		v := ids[i : i+4 : i+4]
		a |= v[0] | v[1]
		b |= v[2] | v[3]
	}
	for ; i < len(ids); i++ {
		a |= ids[i]
	}
	return (a|b)>>16 == 0
}

// put stores ids and returns where.
func (s *frameStore) put(ids []uint32) span {
	n := uint32(len(ids))
	if !narrow(ids) {
		n |= wide
	}
	sp := span{n: n}
	var room []uint16
	sp.chunk, sp.off, room = s.alloc(sp.words())
	encode(room, sp, ids)
	return sp
}

// putIn stores ids in the room of at, a stack read no more, when they
// fit there, and reports whether they did.
func (s *frameStore) putIn(at span, ids []uint32) (span, bool) {
	sp := span{chunk: at.chunk, off: at.off, n: uint32(len(ids))}
	if !narrow(ids) {
		sp.n |= wide
	}
	if sp.words() > at.words() {
		return span{}, false
	}
	encode(s.words(at), sp, ids)
	return sp, true
}

// encode writes ids into room as sp says: low words first, then, for a
// wide stack, the high words.
func encode(room []uint16, sp span, ids []uint32) {
	convert(room[:len(ids)], ids)
	if sp.n&wide != 0 {
		high := room[len(ids) : 2*len(ids)]
		for i, id := range ids {
			high[i] = uint16(id >> 16)
		}
	}
}

// words returns the room of sp.
func (s *frameStore) words(sp span) []uint16 {
	return s.c[sp.chunk][sp.off : int(sp.off)+sp.words()]
}

// get appends the ids of sp to dst.
func (s *frameStore) get(sp span, dst []uint32) []uint32 {
	w := s.words(sp)
	n := sp.len()
	dst = slices.Grow(dst, n)
	at := len(dst)
	dst = dst[:at+n]
	out := dst[at:]
	convert(out, w[:n])
	if sp.n&wide != 0 {
		for i, v := range w[n:] {
			out[i] |= uint32(v) << 16
		}
	}
	return dst
}

// first returns the first id of sp, if it has one.
func (s *frameStore) first(sp span) (uint32, bool) {
	if sp.len() == 0 {
		return 0, false
	}
	w := s.words(sp)
	if sp.n&wide != 0 {
		return uint32(w[0]) | uint32(w[sp.len()])<<16, true
	}
	return uint32(w[0]), true
}

// convert sets dst[i] to src[i] (narrowing or widening), four at a time:
// a quarter of the loop's bounds checks and branches.
func convert[D, S word](dst []D, src []S) {
	dst = dst[:len(src)]
	i := 0
	for ; i+4 <= len(src); i += 4 {
		d, s := dst[i:i+4:i+4], src[i:i+4:i+4]
		d[0], d[1], d[2], d[3] = D(s[0]), D(s[1]), D(s[2]), D(s[3])
	}
	for ; i < len(src); i++ {
		dst[i] = D(src[i])
	}
}

// word is what a stack holds an id in: 16 or 32 bits.
type word interface{ ~uint16 | ~uint32 }

// view returns sp's ids in place when it is narrow (long is then nil),
// else decoded into *buf (long): the loops that read every frame of every
// stack take either, and read most stacks without copying them.
func (s *frameStore) view(sp span, buf *[]uint32) (short []uint16, long []uint32) {
	if sp.n&wide == 0 {
		return s.words(sp), nil
	}
	*buf = s.get(sp, (*buf)[:0])
	return nil, *buf
}

// equal reports whether sp holds ids.
func (s *frameStore) equal(sp span, ids []uint32) bool {
	if sp.len() != len(ids) {
		return false
	}
	w := s.words(sp)
	if sp.n&wide == 0 {
		for i, id := range ids {
			if uint32(w[i]) != id {
				return false
			}
		}
		return true
	}
	n := len(ids)
	for i, id := range ids {
		if uint32(w[i])|uint32(w[n+i])<<16 != id {
			return false
		}
	}
	return true
}
