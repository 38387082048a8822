package nettrace

import (
	"unsafe"

	"github.com/heapest/heapest/internal/grow"
)

// addrSet holds distinct frame addresses, each with whether it was first
// seen as a leaf. Added addresses wait in a buffer, in the order seen;
// a full buffer is sorted by a stable radix sort (an address's first copy
// stays first), and merged into the distinct addresses so far, sorted.
// A hash table did the same with a random memory access per frame into
// memory twice the size, most of it first touched there: a quarter of
// reading a 10 MB trace, whose 222,000 frames are nearly all distinct.
//
// An address is held as (addr−base)<<1, plus 1 when it was first seen as
// a caller: in a uint32 when the trace's addresses span less than 2³¹
// (the set's buffers are then half the size, and the sort takes four
// passes at most), else in a uint64; addresses of 2⁶³ and above, which no
// code has, are held apart.
type addrSet[T uint32 | uint64] struct {
	base   uint64
	buf    []T // added since the last merge, in the order seen
	tmp    []T // the radix sort's scratch
	sorted []T // distinct, ascending
	spare  []T // the next sorted, merged into
	high   map[uint64]bool
	// minMerge is the fewest addresses merged at once: the buffer holds
	// at least as many, and as many as are sorted, so that every address
	// is merged a few times at most.
	minMerge int
}

// newAddrSet returns an empty set for about n additions. Most traces'
// frames are merged only once, at the end: the buffer takes 1<<20
// addresses (8 MB) first.
func newAddrSet[T uint32 | uint64](n int, base uint64) *addrSet[T] {
	const most = 1 << 20
	return &addrSet[T]{base: base, minMerge: most, buf: make([]T, 0, min(n, most))}
}

// addrs is an addrSet of either width.
type addrs interface {
	len() int
	each(f func(addr uint64, leaf bool))
}

// add adds addr, first seen as a leaf or not, unless it is there. An
// addrSet[uint32] takes addresses from base to base+2³¹ only.
func (s *addrSet[T]) add(addr uint64, leaf bool) {
	if addr>>63 != 0 {
		if _, ok := s.high[addr]; !ok {
			if s.high == nil {
				s.high = map[uint64]bool{}
			}
			s.high[addr] = leaf
		}
		return
	}
	v := T(addr-s.base) << 1
	if !leaf {
		v |= 1
	}
	s.buf = append(grow.Room(s.buf, 1), v)
	if len(s.buf) >= max(s.minMerge, len(s.sorted)) {
		s.merge()
	}
}

// merge sorts the buffer, keeps the first of each address, and merges
// them into sorted, where addresses seen before win.
func (s *addrSet[T]) merge() {
	if len(s.buf) == 0 {
		return
	}
	if cap(s.tmp) < len(s.buf) {
		s.tmp = make([]T, cap(s.buf))
	}
	b := radixSort(s.buf, s.tmp[:len(s.buf)])
	b = firstOfEach(b)
	if len(s.sorted) == 0 { // the first merge: b is the sorted addresses
		s.sorted = b
		s.buf, s.tmp = nil, nil // one of them is b
		return
	}
	out := s.spare[:0]
	if cap(out) < len(s.sorted)+len(b) {
		out = make([]T, 0, 2*(len(s.sorted)+len(b)))
	}
	out = mergeFirst(out, s.sorted, b)
	s.sorted, s.spare = out, s.sorted[:0]
	s.buf = s.buf[:0]
}

// radixSort sorts a by addr (v>>1), stably, byte by byte from the lowest,
// skipping the bytes all addresses share; tmp is as long as a. It returns
// whichever of the two holds the result.
func radixSort[T uint32 | uint64](a, tmp []T) []T {
	digits := int(unsafe.Sizeof(T(0)))
	var counts [8][256]int
	for _, v := range a {
		k := v >> 1
		for d := range digits {
			counts[d][byte(k>>(8*d))]++
		}
	}
	for d := range digits {
		c := &counts[d]
		if c[byte((a[0]>>1)>>(8*d))] == len(a) {
			continue // every address has this byte
		}
		sum := 0
		for i := range c {
			c[i], sum = sum, sum+c[i]
		}
		shift := uint(8*d + 1)
		for _, v := range a {
			i := byte(v >> shift)
			tmp[c[i]] = v
			c[i]++
		}
		a, tmp = tmp, a
	}
	return a
}

// firstOfEach keeps the first of each run of one address in a, sorted.
func firstOfEach[T uint32 | uint64](a []T) []T {
	n := 0
	for i, v := range a {
		if i == 0 || v>>1 != a[n-1]>>1 {
			a[n] = v
			n++
		}
	}
	return a[:n]
}

// mergeFirst appends to out the merge of old and new, both sorted and
// without repeats, keeping old's copy of an address in both.
func mergeFirst[T uint32 | uint64](out, old, new []T) []T {
	i, j := 0, 0
	for i < len(old) && j < len(new) {
		a, b := old[i]>>1, new[j]>>1
		switch {
		case a < b:
			out = append(out, old[i])
			i++
		case b < a:
			out = append(out, new[j])
			j++
		default:
			out = append(out, old[i])
			i++
			j++
		}
	}
	out = append(out, old[i:]...)
	return append(out, new[j:]...)
}

// len is the number of addresses held.
func (s *addrSet[T]) len() int {
	s.merge()
	return len(s.sorted) + len(s.high)
}

// each calls f with every address and whether it was first a leaf.
func (s *addrSet[T]) each(f func(addr uint64, leaf bool)) {
	s.merge()
	for _, v := range s.sorted {
		f(s.base+uint64(v>>1), v&1 == 0)
	}
	for addr, leaf := range s.high {
		f(addr, leaf)
	}
}
