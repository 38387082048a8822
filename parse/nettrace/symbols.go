package nettrace

import (
	"fmt"
	"sort"

	"github.com/heapest/heapest/parse"
)

// methodRange is the code range of one jitted or precompiled method body.
type methodRange struct {
	start, end uint64
	name       string
}

// symbols resolves instruction addresses to method names.
type symbols struct {
	r      []methodRange
	maxEnd []uint64 // maxEnd[i] = max end of r[0..i], for overlapping ranges
}

func newSymbols(methods []methodRange) *symbols {
	r := make([]methodRange, 0, len(methods))
	for _, m := range methods {
		if m.end > m.start {
			r = append(r, m)
		}
	}
	// Stable: of two bodies at the same address the later-loaded one wins.
	sort.SliceStable(r, func(i, j int) bool { return r[i].start < r[j].start })
	s := &symbols{r: r, maxEnd: make([]uint64, len(r))}
	var m uint64
	for i := range r {
		m = max(m, r[i].end)
		s.maxEnd[i] = m
	}
	return s
}

// lookup returns the innermost method whose range holds ip, "" when none
// does.
func (s *symbols) lookup(ip uint64) string {
	i := sort.Search(len(s.r), func(i int) bool { return s.r[i].start > ip }) - 1
	for ; i >= 0 && s.maxEnd[i] > ip; i-- {
		if ip < s.r[i].end {
			return s.r[i].name
		}
	}
	return ""
}

// resolved counts the distinct frame addresses the methods name. Caller
// frames are return addresses, looked up one byte earlier (see
// Profile.Names); an address is counted in the position it was first
// seen in. Each is looked up in the union of the ranges (lookup finds a
// method exactly where some range holds the address): sorting the
// addresses to walk them along the ranges took a fifth of reading a
// 10 MB trace.
func (s *symbols) resolved(distinct addrs) int {
	c := newCover(s.r)
	n := 0
	distinct.each(func(addr uint64, leaf bool) {
		if !leaf && addr > 0 {
			addr--
		}
		if c.has(addr) {
			n++
		}
	})
	return n
}

// cover is the union of method ranges: disjoint intervals in address
// order, and an index of them by bucket, slices of the address space of
// equal size, so that finding the interval of an address takes a look at
// the few intervals of its bucket.
type cover struct {
	start, end []uint64
	lo         uint64 // the start of bucket 0
	shift      uint   // a bucket holds 1<<shift addresses
	// first[b] is the first interval ending after bucket b starts; the
	// last entry, one past the last bucket, is len(start).
	first []int32
}

// newCover makes the cover of ranges r, sorted by start.
func newCover(r []methodRange) *cover {
	c := &cover{}
	for _, m := range r {
		if n := len(c.end); n > 0 && m.start <= c.end[n-1] {
			c.end[n-1] = max(c.end[n-1], m.end)
			continue
		}
		c.start = append(c.start, m.start)
		c.end = append(c.end, m.end)
	}
	if len(c.start) == 0 {
		return c
	}
	c.lo = c.start[0]
	span := c.end[len(c.end)-1] - c.lo // at least 1
	for span>>c.shift >= uint64(2*len(c.start)) {
		c.shift++
	}
	buckets := int(span>>c.shift) + 1
	c.first = make([]int32, buckets+1)
	i := 0
	for b := range buckets {
		at := c.lo + uint64(b)<<c.shift // b<<shift <= span: no overflow
		for i < len(c.end) && c.end[i] <= at {
			i++
		}
		c.first[b] = int32(i)
	}
	c.first[buckets] = int32(len(c.start))
	return c
}

// has reports whether an interval holds ip.
func (c *cover) has(ip uint64) bool {
	if len(c.start) == 0 || ip < c.lo {
		return false
	}
	b := (ip - c.lo) >> c.shift
	if b >= uint64(len(c.first)-1) {
		return false
	}
	// An interval holding ip ends after its bucket starts, and starts
	// before the next bucket does: no later than first[b+1], the first
	// one to end after that.
	lo := int(c.first[b])
	i, j := lo, min(int(c.first[b+1])+1, len(c.start))
	for i < j { // the first interval starting after ip
		m := int(uint(i+j) >> 1)
		if c.start[m] <= ip {
			i = m + 1
		} else {
			j = m
		}
	}
	return i > lo && ip < c.end[i-1]
}

// profile sends the ticks still held back, and assembles what the trace
// says about itself: the method ranges as the resolver of frame names,
// and warnings.
func (d *decoder) profile() *parse.Profile {
	if d.stopped != nil {
		d.warnf("stopped early (--keep-going): %v; the %d allocation events before it were kept, everything after it was skipped",
			d.stopped, d.records+d.ticks.n)
	}
	if d.nSampled > 0 && d.nTicks > 0 {
		d.warnf("the trace has both AllocationSampled and GCAllocationTick events; the %d GCAllocationTick events were ignored (they describe the same allocations)", d.nTicks)
	}
	d.sendTicks()
	d.finalWarnings()
	syms := newSymbols(d.methods)
	version := fmt.Sprintf("NetTrace V%d", d.major)
	if d.v6 {
		version = fmt.Sprintf("NetTrace V%d.%d", d.major, d.minor)
	}
	distinct := d.allStacks.distinct()
	detail := fmt.Sprintf("%s, pointer size %d, pid %d; %d AllocationSampled, %d GCAllocationTick events; %d method ranges, %d modules; %d of %d distinct frames symbolized",
		version, d.ptr, d.pid, d.nSampled, d.nTicks, d.nMethods, d.nModules, syms.resolved(distinct), distinct.len())
	p := &parse.Profile{
		Source: parse.Source{
			Format:  "nettrace",
			Rate:    samplingRate,
			Samples: float64(d.records),
			Detail:  detail,
			// Salvaged: --keep-going stopped the read at damage.
			Salvaged:  d.stopped != nil,
			Time:      d.syncUTC,
			Recording: d.recording(),
		},
		Records:  d.records,
		HasAlloc: true,
		Timed:    true,
		Warnings: d.warnings,
	}
	if len(syms.r) > 0 {
		p.Names = syms.lookup
	}
	return p
}

// recording is what tells the trace apart (parse.Source.Recording): the
// counter value at its start is the machine's (ticks since boot, at
// 10 MHz or more), so with the process id it is one trace's, and every
// copy of the trace has it too. "" for a trace that names no process
// (pid 0, as traces written by tools rather than by a runtime have) or
// no counter.
func (d *decoder) recording() string {
	if d.pid <= 0 || d.syncQPC <= 0 {
		return ""
	}
	return fmt.Sprintf("%d@%d", d.pid, d.syncQPC)
}

func (d *decoder) finalWarnings() {
	if d.opt.Rate > 0 && d.opt.Rate != samplingRate {
		d.warnf("--rate %s ignored: the file's sampling period %d is used", parse.RateText(d.opt.Rate), samplingRate)
	}
	if d.nSampled == 0 && d.nTicks == 0 {
		d.warnf("no AllocationSampled (runtime event 303) or GCAllocationTick events: the runtime is older than .NET 10 or the AllocationSampling keyword 0x80000000000 was not enabled")
	}
	if d.nTicks > 0 && d.nSampled == 0 {
		d.warnf("%d GCAllocationTick events: fixed-stride sampling (one event per ~100 KB allocated) gives estimates only, with no confidence interval; collect AllocationSampled events (.NET 10+, keyword 0x80000000000) for intervals", d.nTicks)
		if d.tickVersions[4] < d.nTicks {
			d.warnf("GCAllocationTick events before version 4 carry no object size: alloc_objects is not available from them")
		}
	}
	if d.dropped > 0 {
		d.warnf("%d events were dropped by the runtime (gaps in sequence numbers): estimates are biased low", d.dropped)
	}
	if d.unknownMeta > 0 {
		d.warnf("%d events refer to metadata ids never defined (first at byte %d); they were skipped", d.unknownMeta, d.firstUnknownMeta)
	}
	if d.unknownStack > 0 {
		d.warnf("%d allocation events refer to stack ids not defined in their sequence-point region (first in the block at byte %d); they have no stack", d.unknownStack, d.firstUnknownStack)
	}
	if d.unknownThread > 0 {
		d.warnf("%d allocation events refer to thread indexes without an OS thread id; they are named #index", d.unknownThread)
	}
	for _, k := range sortedKeys(d.badPayload) {
		d.warnf("%d %s events have a malformed payload (first at byte %d); they were skipped", d.badPayload[k], k, d.firstBadPayload)
	}
	for _, k := range sortedKeys(d.unknownBlocks) {
		d.warnf("skipped %d blocks of unknown type %q", d.unknownBlocks[k], k)
	}
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
