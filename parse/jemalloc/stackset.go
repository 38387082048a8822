package jemalloc

// stackSet remembers the stacks read so far by their 64-bit hash, with the
// line each was on: an open-addressing table (linear probing, at most half
// full) of 16 bytes per slot, which costs far less than the stacks' text
// and a Go map. The hashes are seeded at random, so two distinct stacks
// share one with probability about n²/2⁶⁵ and no input can aim at it.
type stackSet struct {
	slots []stackSlot // a power of two long; line 0 marks an empty slot
	shift uint        // 64 - log2(len(slots)): a hash's top bits pick its slot
	n     int
}

type stackSlot struct {
	hash uint64
	line int
}

// init sizes the set for about n stacks.
func (s *stackSet) init(n int) {
	lg := uint(10)
	for 1<<lg < 2*n {
		lg++
	}
	s.slots, s.shift, s.n = make([]stackSlot, 1<<lg), 64-lg, 0
}

// add inserts hash, seen on line (≥ 1), unless it is there already: then
// it returns the line it was first seen on and true.
func (s *stackSet) add(hash uint64, line int) (int, bool) {
	if 2*(s.n+1) > len(s.slots) {
		s.grow()
	}
	mask := uint64(len(s.slots) - 1)
	for i := hash >> s.shift; ; i = (i + 1) & mask {
		sl := &s.slots[i]
		if sl.line == 0 {
			sl.hash, sl.line = hash, line
			s.n++
			return 0, false
		}
		if sl.hash == hash {
			return sl.line, true
		}
	}
}

func (s *stackSet) grow() {
	old := s.slots
	s.slots, s.shift = make([]stackSlot, 2*len(old)), s.shift-1
	mask := uint64(len(s.slots) - 1)
	for _, sl := range old {
		if sl.line == 0 {
			continue
		}
		i := sl.hash >> s.shift
		for s.slots[i].line != 0 {
			i = (i + 1) & mask
		}
		s.slots[i] = sl
	}
}
