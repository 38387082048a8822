package sim

import (
	"bufio"
	"fmt"
	"io"

	"github.com/heapest/heapest/unbias"
)

// Encoding says how a dump writes its numbers.
type Encoding uint8

const (
	// Raw writes sampled sums (jemalloc < 5.3, or prof_unbias:false).
	Raw Encoding = iota
	// Unbias writes jemalloc 5.3's prof_unbias encoding (the default).
	Unbias
)

// String is "raw" or "prof_unbias".
func (e Encoding) String() string {
	if e == Unbias {
		return "prof_unbias"
	}
	return "raw"
}

// counts are a line's raw and HT sums.
type counts struct {
	n, bytes            uint64 // raw
	shifted, unbiasedSz uint64 // prof_unbias counters
}

func (c *counts) add(o counts) {
	c.n += o.n
	c.bytes += o.bytes
	c.shifted += o.shifted
	c.unbiasedSz += o.unbiasedSz
}

// lineCounts sums one stack's samples the way jemalloc's counters do.
func lineCounts(s Sampled, lgR uint) counts {
	var c counts
	for _, z := range sortedSizes(s) {
		n := uint64(s[z])
		sh, us := unbias.JemallocSampleWeights(z, lgR)
		c.add(counts{n: n, bytes: n * z, shifted: n * sh, unbiasedSz: n * us})
	}
	return c
}

// written is the pair a line shows in the dump.
func (c counts) written(e Encoding, lgR uint) (uint64, uint64) {
	if e == Unbias {
		return unbias.JemallocEncode(c.shifted, c.unbiasedSz, lgR)
	}
	return c.n, c.bytes
}

// WriteDump writes one process's samples as a jemalloc heap_v2 dump with
// in-use counts, one thread, and stacks with no sample left out (as
// jemalloc does).
func WriteDump(w io.Writer, lgR uint, samples []Sampled, e Encoding) error {
	bw := bufio.NewWriter(w)
	lines := make([]counts, len(samples))
	var total counts
	for i, s := range samples {
		lines[i] = lineCounts(s, lgR)
		total.add(lines[i])
	}
	c, b := total.written(e, lgR)
	fmt.Fprintf(bw, "heap_v2/%d\n  t*: %d: %d [0: 0]\n  t0: %d: %d [0: 0]\n", uint64(1)<<lgR, c, b, c, b)
	for i, l := range lines {
		if l.n == 0 {
			continue
		}
		c, b := l.written(e, lgR)
		if c == 0 && b == 0 {
			continue // jemalloc skips stacks whose current count is zero
		}
		fmt.Fprintf(bw, "@ 0x%x 0x400800 0x400500\n  t*: %d: %d [0: 0]\n  t0: %d: %d [0: 0]\n", LeafAddr(i), c, b, c, b)
	}
	fmt.Fprintf(bw, "\nMAPPED_LIBRARIES:\n00400000-00500000 r-xp 00000000 08:01 1234 /usr/bin/simulated\n")
	return bw.Flush()
}
