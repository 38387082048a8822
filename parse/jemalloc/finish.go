package jemalloc

import (
	"math"

	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/unbias"
)

// The details of a dump's encoding that a whole dump and a salvaged one
// share (Source.Detail).
const (
	detailOnFlag   = "prof_unbias=on (--jemalloc-unbias)"
	detailOffFlag  = "prof_unbias=off (--jemalloc-unbias)"
	detailRawEqual = "prof_unbias=off (detected: header totals equal the sum of the stacks)"
)

// salvagedEncoding decides how a dump cut before its end was written.
// Bytes that are no sum of size classes tell prof_unbias's encoding; a
// header equal to the stacks' sum tells raw counts (the cut took thread
// lines only). Otherwise the header's totals cover stacks that are gone,
// and cannot be compared with what is left: the dump reads as raw counts,
// and a warning says how to read it otherwise.
func (p *parser) salvagedEncoding() {
	switch {
	case p.mode == modeOn:
		p.prof.Source.Detail = detailOnFlag
		return
	case p.mode == modeOff:
		p.prof.Source.Detail = detailOffFlag
		return
	case p.oddBytes:
		p.prof.Encoding = parse.JemallocUnbias
		p.prof.Source.Detail = "prof_unbias=on (detected: stacks whose bytes are no sum of size classes)"
		return
	case p.header == p.sum:
		p.prof.Source.Detail = detailRawEqual
		return
	}
	p.prof.Source.Detail = "prof_unbias=off (assumed: the dump is cut)"
	p.prof.Warnings = append(p.prof.Warnings,
		"the dump is cut, so its header's totals cannot tell how it was written: read as raw counts (prof_unbias off); give --jemalloc-unbias on if the process ran with prof_unbias (jemalloc 5.3's default)")
}

// finish decides how the numbers were written (raw or prof_unbias) and
// checks the dump is whole.
func (p *parser) finish(hasMaps bool) error {
	raw := p.header == p.sum
	unbiased := false
	switch {
	case p.mode == modeAuto && raw && p.prof.Records == 1 && (p.sum.curBytes%8 != 0 || p.sum.accBytes%8 != 0):
		// One stack: the header equals it in either encoding. Raw bytes
		// are sums of size classes, all multiples of 8; prof_unbias's are
		// rounded estimates. (Of one size class well below the period,
		// the encoding writes the raw numbers themselves, and reading
		// them either way gives the same estimate.)
		unbiased = true
		p.prof.Source.Detail = "prof_unbias=on (detected: one stack, whose bytes are no sum of size classes)"
	case p.mode == modeAuto:
		unbiased = !raw
		if raw {
			p.prof.Source.Detail = detailRawEqual
		} else {
			p.prof.Source.Detail = "prof_unbias=on (detected: header totals differ from the sum of the stacks)"
		}
	case p.mode == modeOn:
		unbiased = true
		p.prof.Source.Detail = detailOnFlag
	case p.mode == modeOff:
		p.prof.Source.Detail = detailOffFlag
	}
	if unbiased {
		p.prof.Encoding = parse.JemallocUnbias
	}
	if p.prof.Records == 0 {
		// jemalloc 5.3 samples a process's first allocation, which mostly
		// stays live (docs/jemalloc.md): a dump of a process that ran with
		// profiling active rarely has no stack at all. Before 5.3 the
		// first allocation is sampled by chance only (an audit: no stack
		// in 8 of 8 dumps of 4.x at lg_prof_sample:19).
		p.prof.Warnings = append(p.prof.Warnings,
			"the dump has no stacks: profiling was inactive while the process allocated (prof_active:false, or prof.active set false), or nothing sampled was live at the dump (and prof_accum was off); jemalloc 5.3 samples a process's first allocation, which usually stays live, so from 5.3 on its zero totals likely say nothing of the heap (before 5.3, a process that allocated less than a sampling period or so often has no sample)")
	}
	if p.sum.accObjs == 0 && p.header.accObjs == 0 {
		p.prof.HasAlloc = false // prof_accum was off: alloc values are all zero
	}
	if !hasMaps && (!raw && !p.decodedTotalsAgree() || !p.lastStackWhole(unbiased)) {
		return &parse.Error{File: p.name, Line: p.line, Offset: -1,
			Msg: "truncated: the dump has no MAPPED_LIBRARIES section and its lines do not add up to its totals"}
	}
	if !hasMaps && len(p.prof.Symbols) == 0 {
		// Whole as far as its totals tell, but jemalloc always writes the
		// section: a dump cut exactly before it has lost its mappings,
		// which symbolization (and a merge's same-process guard) use.
		// (jeprof --raw output carries symbols instead.)
		p.prof.Warnings = append(p.prof.Warnings,
			"no MAPPED_LIBRARIES section: the dump may have been cut just before it (its stacks add up to its totals); frames are symbolized only with --binary")
	}
	return nil
}

// decodedTotalsAgree checks, for a prof_unbias dump, that the decoded header
// totals are close to the sum of the decoded stacks: lines are encoded
// independently, so only decoded values add up. A dump cut short at a line
// boundary loses stacks and fails this.
func (p *parser) decodedTotalsAgree() bool {
	r := float64(p.rate)
	_, hCur := unbias.JeprofDecode(float64(p.header.curObjs), float64(p.header.curBytes), r)
	_, hAcc := unbias.JeprofDecode(float64(p.header.accObjs), float64(p.header.accBytes), r)
	// Whole dumps agree to ~0.2% (rounding of each line's encoding); a
	// missing one-sample stack is already ~R bytes off.
	within := func(a, b float64) bool { return math.Abs(a-b) <= 0.005*math.Max(a, b) }
	return within(p.decSum[0], hCur) && within(p.decSum[1], hAcc)
}

// lastStackWhole checks that the last stack's thread lines add up to its
// t* line (exactly in raw mode, after decoding under prof_unbias): a dump
// cut between them would otherwise pass for a whole one.
func (p *parser) lastStackWhole(unbiased bool) bool {
	if p.prof.Records == 0 {
		return p.header == jeCounts{}
	}
	if len(p.thr) == 0 {
		return false // jemalloc writes at least one thread line per stack
	}
	r := float64(p.rate)
	var sum jeCounts
	var dec [2]float64
	for _, c := range p.thr {
		sum, _ = addCounts(sum, c) // wraps on overflow, and then almost surely misses lastT
		_, cur := unbias.JeprofDecode(float64(c.curObjs), float64(c.curBytes), r)
		_, acc := unbias.JeprofDecode(float64(c.accObjs), float64(c.accBytes), r)
		dec[0] += cur
		dec[1] += acc
	}
	if !unbiased {
		return sum == p.lastT
	}
	_, hCur := unbias.JeprofDecode(float64(p.lastT.curObjs), float64(p.lastT.curBytes), r)
	_, hAcc := unbias.JeprofDecode(float64(p.lastT.accObjs), float64(p.lastT.accBytes), r)
	return near(dec[0], hCur, r) && near(dec[1], hAcc, r)
}

// near compares decoded byte totals, which agree only up to the rounding
// of each line's encoding.
func near(a, b, rate float64) bool { return math.Abs(a-b) <= 0.05*math.Max(a, b)+rate }
