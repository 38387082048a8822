package jemalloc

import "math/bits"

// Duplicated stacks are found by a 64-bit hash of their addresses, with the
// line each stack was on, never by their text. The hashes are seeded at
// random, so two distinct stacks share one with probability about n²/2⁶⁵
// and no input can aim at it.
//
// Looking each stack up in a table as it is read costs a cache miss per
// stack once the table outgrows the cache: a fifth of the parse of a large
// dump. So, unless --keep-going needs to stop at the duplicate itself
// (eager), the hashes are only logged, in file order, and searched once,
// at the end or at the first error (first), bucket by bucket, each bucket's
// table small enough to stay in cache. Either way the same error comes out:
// the earliest stack that repeats an earlier one.
type dupCheck struct {
	eager bool
	set   stackSet // eager: the stacks so far
	// lazy: every stack's hash and line, in file order, in chunks of
	// logChunk: a log that grew by copying (the size hint is a guess)
	// copied megabytes at once, which nothing can preempt, and a garbage
	// collection that started meanwhile spun on a CPU until it ended.
	log [][]stackSlot
	n   int // stacks logged
}

// logChunk is the length of a chunk of the log (1 MiB).
const logChunk = 1 << 16

func (d *dupCheck) init(eager bool, stacksHint int) {
	d.eager = eager
	if eager {
		d.set.reset(stacksHint)
	} else {
		d.log = [][]stackSlot{make([]stackSlot, 0, min(max(stacksHint, 1024), logChunk))}
	}
}

// add notes the stack with hash on line; eager, it reports a duplicate at
// once, with the line of the first.
func (d *dupCheck) add(hash uint64, line int) (int, bool) {
	if d.eager {
		return d.set.add(hash, line)
	}
	last := &d.log[len(d.log)-1]
	if len(*last) == logChunk {
		d.log = append(d.log, make([]stackSlot, 0, logChunk))
		last = &d.log[len(d.log)-1]
	}
	*last = append(*last, stackSlot{hash, line})
	d.n++
	return 0, false
}

// first finds in the log the earliest stack that repeats an earlier one:
// it returns its line, the earlier one's and true, or false.
func (d *dupCheck) first() (line, prev int, ok bool) {
	if d.n < 2 {
		return 0, 0, false
	}
	// Partition by the top byte of the hash; each bucket keeps file order.
	var start [257]int
	for _, ch := range d.log {
		for _, e := range ch {
			start[e.hash>>56+1]++
		}
	}
	for b := 1; b <= 256; b++ {
		start[b] += start[b-1]
	}
	parts := make([]stackSlot, d.n)
	next := start
	for _, ch := range d.log {
		for _, e := range ch {
			b := e.hash >> 56
			// The top byte is the same in a bucket: rotate it out of
			// the bits the bucket's table indexes by.
			parts[next[b]] = stackSlot{bits.RotateLeft64(e.hash, 8), e.line}
			next[b]++
		}
	}
	var set stackSet
	for b := 0; b < 256; b++ {
		bucket := parts[start[b]:start[b+1]]
		set.reset(len(bucket))
		for _, e := range bucket {
			if ok && e.line >= line {
				break // a later repeat than the one already found
			}
			if p, dup := set.add(e.hash, e.line); dup {
				line, prev, ok = e.line, p, true
				break
			}
		}
	}
	return line, prev, ok
}

// stackSet is an open-addressing table (linear probing, at most half full)
// of stack hashes with their lines, 16 bytes a slot.
type stackSet struct {
	slots []stackSlot // a power of two long; line 0 marks an empty slot
	shift uint        // 64 - log2(len(slots)): a hash's top bits pick its slot
	n     int
}

type stackSlot struct {
	hash uint64
	line int
}

// reset empties the set and sizes it for about n stacks, reusing its
// memory when it is large enough.
func (s *stackSet) reset(n int) {
	lg := uint(4)
	for 1<<lg < 2*n {
		lg++
	}
	if cap(s.slots) >= 1<<lg {
		s.slots = s.slots[:1<<lg]
		clear(s.slots)
	} else {
		s.slots = make([]stackSlot, 1<<lg)
	}
	s.shift, s.n = 64-lg, 0
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
