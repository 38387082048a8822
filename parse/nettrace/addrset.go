package nettrace

import "math/bits"

// addrSet holds distinct frame addresses, each with whether it was first
// seen as a leaf: an open-addressing table (linear probing, at most half
// full), several times faster than a Go map on the trace's many frames.
type addrSet struct {
	keys  []uint64 // 0: empty slot; address 0 is held apart
	leaf  []bool
	n     int
	shift uint
	zero  int8 // address 0: 0 absent, 1 a caller, 2 a leaf
}

func newAddrSet(hint int) *addrSet {
	size := 16
	for size < 2*hint {
		size *= 2
	}
	return &addrSet{keys: make([]uint64, size), leaf: make([]bool, size), shift: uint(64 - bits.TrailingZeros(uint(size)))}
}

// add adds addr, first seen as a leaf or not, unless it is there.
func (s *addrSet) add(addr uint64, leaf bool) {
	if addr == 0 {
		if s.zero == 0 {
			s.zero = 1
			if leaf {
				s.zero = 2
			}
		}
		return
	}
	mask := len(s.keys) - 1
	for i := int((addr * 0x9e3779b97f4a7c15) >> s.shift); ; i = (i + 1) & mask {
		switch s.keys[i] {
		case addr:
			return
		case 0:
			s.keys[i], s.leaf[i] = addr, leaf
			if s.n++; 2*s.n > len(s.keys) {
				s.grow()
			}
			return
		}
	}
}

func (s *addrSet) grow() {
	old := *s
	*s = *newAddrSet(len(old.keys))
	s.zero = old.zero
	for i, a := range old.keys {
		if a != 0 {
			s.add(a, old.leaf[i])
		}
	}
}

// len is the number of addresses held.
func (s *addrSet) len() int { return s.n + min(int(s.zero), 1) }

// each calls f with every address and whether it was first a leaf.
func (s *addrSet) each(f func(addr uint64, leaf bool)) {
	if s.zero > 0 {
		f(0, s.zero == 2)
	}
	for i, a := range s.keys {
		if a != 0 {
			f(a, s.leaf[i])
		}
	}
}
