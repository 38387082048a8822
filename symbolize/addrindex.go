package symbolize

import "math/bits"

// addrIndex maps non-zero addresses to result indexes. It is an
// open-addressing hash table with linear probing: a large profile looks
// up hundreds of thousands of frames, several times faster so than with a
// Go map.
type addrIndex struct {
	keys  []uint64 // 0 marks an empty slot
	vals  []int32
	n     int
	shift uint
}

// newAddrIndex returns an index with room for about hint addresses
// before it grows.
func newAddrIndex(hint int) *addrIndex {
	size := 16
	for size < 2*hint {
		size *= 2
	}
	return &addrIndex{
		keys:  make([]uint64, size),
		vals:  make([]int32, size),
		shift: uint(64 - bits.TrailingZeros(uint(size))),
	}
}

// slot is where the probe for addr starts (Fibonacci hashing: the
// multiplication spreads addresses that differ only in low bits).
func (x *addrIndex) slot(addr uint64) int {
	return int((addr * 0x9e3779b97f4a7c15) >> x.shift)
}

// lookup returns addr's value; when addr is absent it stores next and
// returns it with added true.
func (x *addrIndex) lookup(addr uint64, next int32) (n int32, added bool) {
	mask := len(x.keys) - 1
	for i := x.slot(addr); ; i = (i + 1) & mask {
		switch x.keys[i] {
		case addr:
			return x.vals[i], false
		case 0:
			x.keys[i], x.vals[i] = addr, next
			x.n++
			if 2*x.n > len(x.keys) {
				x.grow()
			}
			return next, true
		}
	}
}

// grow doubles the table, keeping it at most half full so that probes
// stay short.
func (x *addrIndex) grow() {
	old := *x
	*x = *newAddrIndex(len(old.keys))
	mask := len(x.keys) - 1
	for j, k := range old.keys {
		if k == 0 {
			continue
		}
		i := x.slot(k)
		for x.keys[i] != 0 {
			i = (i + 1) & mask
		}
		x.keys[i], x.vals[i] = k, old.vals[j]
		x.n++
	}
}

// find returns addr's value, if present.
func (x *addrIndex) find(addr uint64) (int32, bool) {
	mask := len(x.keys) - 1
	for i := x.slot(addr); ; i = (i + 1) & mask {
		switch x.keys[i] {
		case addr:
			return x.vals[i], true
		case 0:
			return 0, false
		}
	}
}
