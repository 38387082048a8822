package symbolize

import (
	"cmp"
	"slices"
)

// sortPending orders addresses as Resolve reads them: by address, a leaf
// before the same address as a return address (Need registers each pair
// once, so the order is total). Comparison sorting was a twentieth of
// reading a dump of tens of thousands of addresses; this is a radix sort,
// least significant byte first, with a pass only for the bytes in which
// the addresses differ (most of the high bytes are the same in a process).
func sortPending(p []pendingAddr) {
	if len(p) < 256 {
		slices.SortFunc(p, comparePending)
		return
	}
	src, dst := p, make([]pendingAddr, len(p))
	// The leaf bit is the least significant digit: leaves first, each
	// side in its order.
	k := 0
	for _, q := range src {
		if q.leaf {
			dst[k] = q
			k++
		}
	}
	for _, q := range src {
		if !q.leaf {
			dst[k] = q
			k++
		}
	}
	src, dst = dst, src
	for shift := uint(0); shift < 64; shift += 8 {
		var at [256]int
		for _, q := range src {
			at[byte(q.addr>>shift)]++
		}
		if at[byte(src[0].addr>>shift)] == len(src) {
			continue // one value of this byte: the pass would move nothing
		}
		pos := 0
		for b, n := range at {
			at[b] = pos
			pos += n
		}
		for _, q := range src {
			b := byte(q.addr >> shift)
			dst[at[b]] = q
			at[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &p[0] {
		copy(p, src)
	}
}

// comparePending is sortPending's order.
func comparePending(a, b pendingAddr) int {
	if c := cmp.Compare(a.addr, b.addr); c != 0 {
		return c
	}
	switch {
	case a.leaf == b.leaf:
		return 0
	case a.leaf:
		return -1
	}
	return 1
}
