package pprof

import (
	"fmt"
	"math"
	"path"
	"strings"

	"github.com/heapest/heapest/parse"
)

// newProfile fills what every pprof-derived Profile shares.
func newProfile(d *decoded, format string) *parse.Profile {
	return &parse.Profile{Source: parse.Source{Format: format}, Mappings: d.Mappings}
}

// rateIgnored is the warning for --rate on a file that carries its own
// sampling period.
func rateIgnored(opt, file float64, why string) string {
	return fmt.Sprintf("--rate %s ignored: the file's sampling period %s is used (%s)", parse.RateText(opt), parse.RateText(file), why)
}

// readScaledHeap reads a profile whose values were scaled per sample by
// scaleHeapSample (golang/go runtime/pprof/protomem.go; google/pprof's legacy
// heap parser uses the same formula): count·s and bytes·s, truncated, with
// s = 1/(1−exp(−b/R)), b the numeric label "bytes" and R the Period. The
// values are already unbiased; the raw sample count is recovered from the
// space value (reference §1.4).
func readScaledHeap(d *decoded, t sampleTypes, opt parse.Options, format string, sink parse.Sink) (*parse.Profile, error) {
	out := newProfile(d, format)
	rate := float64(d.Period)
	if d.PeriodType != nil && d.PeriodType.Type != "space" {
		return nil, &parse.Error{File: d.name, Offset: -1, Msg: fmt.Sprintf(
			"heap profile with period type %s/%s, expected space/bytes", d.PeriodType.Type, d.PeriodType.Unit)}
	}
	// scale is the period the values were scaled with: Go writes its
	// profile with the MemProfileRate of that moment, and leaves the
	// values raw when it is 0 or 1 (scaleHeapSample), whatever rate the
	// samples were taken at.
	scale := rate
	rawGo := format == "pprof-go" && rate <= 0
	switch {
	case rate < 0:
		return nil, &parse.Error{File: d.name, Offset: -1, Msg: fmt.Sprintf("sampling period %v: no producer writes a negative one; the profile is damaged", rate)}
	case rawGo && opt.Rate > 0:
		rate = opt.Rate
		out.Warnings = append(out.Warnings, fmt.Sprintf(
			"the profile has no sampling period (written while MemProfileRate was 0, which leaves its values the raw samples): they are unbiased with --rate %s, the period they were taken at", parse.RateText(rate)))
	case rawGo:
		return nil, &parse.Error{File: d.name, Offset: -1, Msg: "heap profile without a sampling period (written while MemProfileRate was 0: its values are the raw samples, taken at the rate in effect before): pass that rate with --rate"}
	case rate <= 0 && opt.Rate > 0:
		rate, scale = opt.Rate, opt.Rate
		out.Warnings = append(out.Warnings, fmt.Sprintf(
			"the profile has no sampling period; using --rate %s to recover raw sample counts", parse.RateText(rate)))
	case rate <= 0:
		return nil, &parse.Error{File: d.name, Offset: -1, Msg: "heap profile without a sampling period (Period is 0): pass its sampling period with --rate"}
	case opt.Rate > 0 && opt.Rate != rate:
		out.Warnings = append(out.Warnings, rateIgnored(opt.Rate, rate, "the values were scaled with it, and inverting them needs it"))
	}
	scheme := parse.Bernoulli
	if rate <= 1 {
		scheme, rate = parse.Exact, 1
	}
	io, is, ao, as := t.inuseObjects, t.inuseSpace, t.allocObjects, t.allocSpace
	classes := parse.Recorded
	if format != "pprof-go" {
		io, is, ao, as = t.objects, t.space, -1, -1
		out.Source.Detail = "legacy heap profile converted to proto, values scaled by pprof"
		if mapsJemalloc(d) {
			if scheme == parse.Bernoulli {
				scheme = parse.Geometric // jemalloc 3 draws a trial per byte
			}
		} else {
			// gperftools' heap sample (pprof keeps no alloc values of
			// it), or jemalloc 3's without prof_accum, which a mapping of
			// libjemalloc tells apart when it is linked dynamically.
			classes = parse.TcmallocClasses
			out.Source.Detail = "legacy heap profile converted to proto, values scaled by pprof; sampled by tcmalloc's size classes (gperftools' heap sample)"
			out.Warnings = append(out.Warnings, gperftoolsWarning) // as for the text it was converted from
		}
	}
	out.HasInUse, out.HasAlloc = io >= 0, ao >= 0
	var inv inverter
	e := newEmitter(d, out, sink)
	n, err := emit(e, converter{chk: &sampleChecker{d: d, t: t}, scheme: scheme, rate: rate, dropInUse: true,
		counts: func(s *sample) (inuse, alloc parse.Counts) {
			b, hasB := d.numLabel(s, labelBytes)
			if io >= 0 {
				inuse = inv.invertScaled(s.Value[io], s.Value[is], b, hasB, scale)
				if format != "pprof-go" {
					if inuse = asTextLine(inuse, rate); !inuse.IsZero() {
						inuse.Classes = classes
					}
				}
			}
			if ao >= 0 {
				alloc = inv.invertScaled(s.Value[ao], s.Value[as], b, hasB, scale)
			}
			return inuse, alloc
		},
		values: func() (inUse, alloc uint64) { return bit(io) | bit(is), bit(ao) | bit(as) }})
	if err != nil {
		return nil, err
	}
	n.warnApprox(out, "do not invert to whole raw counts (a missing \"bytes\" label, values rescaled after writing, or profiles of different sampling periods merged by go tool pprof, which keeps the longest period: heapest merge keeps each input's)")
	if n.empty > 0 && out.Source.Detail == "" {
		out.Source.Detail = fmt.Sprintf("%d all-zero samples skipped", n.empty)
	}
	return e.finish(rate), nil
}

// bit is the mask of value index i: none for -1 (absent), nor past 63
// (sampleBuf.withAny knows nothing of such values anyway).
func bit(i int) uint64 {
	if i < 0 || i >= 64 {
		return 0
	}
	return 1 << i
}

// inverter inverts scaled samples, keeping the last size's scale factor:
// a profile's samples share a few sizes, and the exponential is the costly
// part.
type inverter struct {
	size, rate, unit float64
}

// unitOf is size/(1−exp(−size/rate)), cached for the last size.
func (v *inverter) unitOf(size, rate float64) float64 {
	if size != v.size || rate != v.rate {
		v.size, v.rate, v.unit = size, rate, size/-math.Expm1(-size/rate)
	}
	return v.unit
}

// invertScaled recovers one pair of a scaled heap sample. With the "bytes"
// label b, n = round(space·(1−exp(−b/R))/b) is exact even for merged and
// delta profiles: space = ⌊n·b·s⌋ and b·s ≥ R, so the truncation moves
// space/(b·s) by less than 1/R per merged record. Without the label the
// average size space/count stands in for b; both values carry the same scale
// factor so the ratio is right to within truncation, but the result is then
// marked Approx: it is neither exact nor a bound in a known direction.
func (v *inverter) invertScaled(count, space, b int64, hasB bool, rate float64) parse.Counts {
	if count == 0 && space == 0 {
		return parse.Counts{}
	}
	c := parse.Counts{Objects: float64(count), Bytes: float64(space), Enc: parse.Scaled}
	if rate <= 1 {
		// scaleHeapSample leaves values alone at rate 1: they are raw.
		c.Enc, c.Samples = parse.Raw, float64(count)
		if count > 0 && space%count == 0 {
			c.Size = float64(space / count)
		}
		return c
	}
	size := float64(b)
	if !hasB || b <= 0 {
		c.Approx = true
		if count <= 0 {
			return c
		}
		size = float64(space) / float64(count)
	}
	unit := v.unitOf(size, rate) // b·s ≥ R: what one sample adds to space
	x := float64(space) / unit
	n := math.Round(x)
	// Truncation leaves x below n by less than 1/unit per merged record.
	if n == 0 || math.Abs(x-n) > math.Max(0.01, 1/unit) {
		n, c.Approx = x, true
	}
	c.Samples, c.Size = n, size
	return c
}

// mapsJemalloc reports whether a mapping of d is libjemalloc.
func mapsJemalloc(d *decoded) bool {
	for _, m := range d.Mappings {
		if strings.Contains(path.Base(m.File), "libjemalloc") {
			return true
		}
	}
	return false
}

// asTextLine turns the inverted counts c of a legacy text profile that
// pprof converted to proto back into the text line they were scaled from,
// so that the same samples give the same statistics in either form (one
// rule: rawCounts). pprof's "bytes" label on such a sample is the line's
// average size, not the size of each object: a line of several objects is
// of unknown sizes, as in the text. c is kept when its count did not
// invert to a whole number.
func asTextLine(c parse.Counts, rate float64) parse.Counts {
	if c.Enc != parse.Scaled || c.Approx || c.Samples < 1 || c.Size <= 0 {
		return c
	}
	n := int64(c.Samples)
	return rawCounts(n, rawLineBytes(n, int64(c.Size), c.Objects, c.Bytes, rate), false)
}

// maxLineSearch bounds the raw byte totals rawLineBytes tries.
const maxLineSearch = 4096

// rawLineBytes recovers the raw bytes r of a text line of n objects from
// its scaled count and space: pprof scaled both by s(r/n) =
// 1/(1−exp(−(r/n)/R)), with the exact average, and labelled the average
// truncated, b = ⌊r/n⌋, so r is one of n·b … n·b+n−1: the one that scales
// to both (space alone can fit two). Past maxLineSearch candidates, or if
// none matches (rescaled values), r is estimated with s(b).
func rawLineBytes(n, b int64, count, space, rate float64) int64 {
	scale := func(avg float64) float64 { return 1 / -math.Expm1(-avg/rate) }
	if n <= maxLineSearch {
		for r := n * b; r < n*b+n; r++ {
			s := scale(float64(r) / float64(n))
			if math.Floor(float64(r)*s) == space && math.Floor(float64(n)*s) == count {
				return r
			}
		}
	}
	return int64(math.Round(space / scale(float64(b))))
}

// defaultTcmallocRate is tcmalloc's default profile sampling interval
// (kDefaultProfileSamplingInterval, tcmalloc/common.h).
const defaultTcmallocRate = 2 << 20

// readTcmalloc reads a tcmalloc heap or allocation profile. Its values are
// unbiased estimates made with random per-sample weights (reference §2); the
// period is not in the file (Period 0 since 2022, 1 before), and the number
// of sampled allocations behind a sample is not stored. It is estimated as
// n̂ = space·p(k)/a with k = request+1 and a = the allocated size (label
// "bytes"), p(k) = 1−exp(−k/T), and marked Approx.
func readTcmalloc(d *decoded, t sampleTypes, opt parse.Options, sink parse.Sink) (*parse.Profile, error) {
	out := newProfile(d, "pprof-tcmalloc")
	rate := opt.Rate
	if rate <= 0 {
		rate = defaultTcmallocRate
		out.Warnings = append(out.Warnings,
			"tcmalloc profiles do not record their sampling interval; assuming tcmalloc's default of 2 MiB (2097152 bytes). Pass --rate if the process set another (MallocExtension::SetProfileSamplingInterval); raw sample counts and intervals depend on it")
	}
	// tcmalloc's allocation profile (kAllocations) defaults to objects; its
	// heap and peak-heap profiles to space.
	isAlloc := d.DefaultSampleType == "objects"
	if isAlloc {
		out.HasAlloc = true
		out.Source.Detail = "allocation profile"
	} else {
		out.HasInUse = true
	}
	e := newEmitter(d, out, sink)
	_, err := emit(e, converter{chk: &sampleChecker{d: d, t: t}, scheme: parse.Bernoulli, rate: rate,
		counts: func(s *sample) (inuse, alloc parse.Counts) {
			c := tcmallocCounts(d, s, t, rate)
			if isAlloc {
				return parse.Counts{}, c
			}
			return c, parse.Counts{}
		}})
	if err != nil {
		return nil, err
	}
	return e.finish(rate), nil
}

// readComplete reads an objects/space profile with period 1: every
// allocation recorded (a heap-growth profile, or a heap profile with
// sampling off), so its values are exact, whatever --rate says.
func readComplete(d *decoded, t sampleTypes, opt parse.Options, sink parse.Sink) (*parse.Profile, error) {
	out := newProfile(d, "pprof")
	out.Source.Detail = "period 1: every allocation recorded (exact)"
	if opt.Rate > 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("--rate %s ignored: the profile records every allocation (period 1)", parse.RateText(opt.Rate)))
	}
	isAlloc := d.DefaultSampleType == "objects"
	out.HasAlloc, out.HasInUse = isAlloc, !isAlloc
	e := newEmitter(d, out, sink)
	_, err := emit(e, converter{chk: &sampleChecker{d: d, t: t}, scheme: parse.Exact, rate: 1,
		counts: func(s *sample) (inuse, alloc parse.Counts) {
			c := parse.Counts{Objects: float64(s.Value[t.objects]), Bytes: float64(s.Value[t.space]), Enc: parse.Raw}
			if isAlloc {
				return parse.Counts{}, c
			}
			return c, parse.Counts{}
		}})
	if err != nil {
		return nil, err
	}
	return e.finish(1), nil
}

// tcmallocCounts is one tcmalloc sample: unbiased values, with the raw
// count estimated from the sampled size (only an estimate: tcmalloc's
// weights are random, so it is marked Approx).
func tcmallocCounts(d *decoded, s *sample, t sampleTypes, rate float64) parse.Counts {
	objs, space := s.Value[t.objects], s.Value[t.space]
	if objs == 0 && space == 0 {
		return parse.Counts{}
	}
	c := parse.Counts{Objects: float64(objs), Bytes: float64(space), Enc: parse.Scaled, Approx: true}
	a, hasA := d.numLabel(s, labelBytes)
	if (!hasA || a <= 0) && objs > 0 {
		a = space / objs
	}
	r, hasR := d.numLabel(s, labelRequest)
	if !hasR || r <= 0 {
		r = a
	}
	if a > 0 {
		c.Size = float64(a)
		c.Samples = float64(space) * -math.Expm1(-float64(r+1)/rate) / float64(a)
	}
	return c
}

// readHeapprofd reads a Perfetto heapprofd profile converted by traceconv:
// its "… size" values are unbiased bytes, its "… count" values the raw
// numbers of sampled allocations (reference §3.2). The interval is not in
// the file; without --rate the values are estimates with no interval.
func readHeapprofd(d *decoded, t sampleTypes, opt parse.Options, sink parse.Sink) (*parse.Profile, error) {
	out := newProfile(d, "pprof-heapprofd")
	scheme, rate := parse.Bernoulli, opt.Rate
	if rate <= 0 {
		scheme, rate = parse.Unknown, 0
		out.Warnings = append(out.Warnings,
			"heapprofd profiles do not record their sampling interval (sampling_interval_bytes in the trace config); pass --rate to get intervals. Showing estimates only")
	}
	out.Warnings = append(out.Warnings,
		"heapprofd records the number of sampled allocations, not an estimate of objects: *_objects values are raw sampled counts (a lower bound)")
	out.HasInUse = t.inuseSpace >= 0
	out.HasAlloc = t.allocSpace >= 0
	e := newEmitter(d, out, sink)
	_, err := emit(e, converter{chk: &sampleChecker{d: d, t: t}, scheme: scheme, rate: rate,
		counts: func(s *sample) (inuse, alloc parse.Counts) {
			return heapprofdCounts(s, t.inuseObjects, t.inuseSpace), heapprofdCounts(s, t.allocObjects, t.allocSpace)
		}})
	if err != nil {
		return nil, err
	}
	return e.finish(rate), nil
}

// isJemallocPprof reports whether d has the shape of a jemalloc dump that
// Rust's jemalloc_pprof crate converted (pprof_util's
// StackProfile::to_pprof, as its dump_pprof calls it): one sample type,
// inuse_space in bytes, period type space/bytes with no period, and, for
// mappings, only Polar Signals' "executableInfo=" comments. Its values
// are jeprof's adjustment of each stack's sampled totals, truncated.
func isJemallocPprof(d *decoded) bool {
	if len(d.SampleType) != 1 || d.SampleType[0] != (valueType{"inuse_space", "bytes"}) ||
		d.PeriodType == nil || *d.PeriodType != (valueType{"space", "bytes"}) || d.Period != 0 {
		return false
	}
	for _, c := range d.Comments {
		if !strings.HasPrefix(c, "executableInfo=") {
			return false
		}
	}
	return true
}

func heapprofdCounts(s *sample, cnt, size int) parse.Counts {
	var c parse.Counts
	if size >= 0 {
		c.Bytes = float64(s.Value[size])
	}
	if cnt >= 0 {
		c.Samples = float64(s.Value[cnt])
		c.Objects = c.Samples
	}
	if !c.IsZero() {
		c.Enc = parse.Scaled
		c.Approx = true
	}
	return c
}

// readUnknown reads a heap-like profile from a producer heapest does not
// know: its values are taken as estimates, with no interval (Scheme
// Unknown), and a warning says so. A guess is never shown as an interval.
func readUnknown(d *decoded, t sampleTypes, opt parse.Options, sink parse.Sink) (*parse.Profile, error) {
	out := newProfile(d, "pprof")
	if isJemallocPprof(d) {
		out.Warnings = append(out.Warnings, "a jemalloc heap dump converted to pprof by Rust's jemalloc_pprof (pprof_util): "+
			"its values are jeprof's estimates, the sample counts behind them gone, so they are shown without intervals; "+
			"for intervals give heapest the dump jemalloc wrote (prof.dump; JemallocProfCtl::dump)")
	} else {
		out.Warnings = append(out.Warnings, fmt.Sprintf(
			"unknown heap profile producer (sample types %s, period %d): values shown as estimates, without intervals", typeList(d), d.Period))
	}
	if opt.Rate > 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf(
			"--rate %s ignored: an unknown producer's values are shown as estimates, which need no sampling period", parse.RateText(opt.Rate)))
	}
	out.HasInUse = t.inuseSpace >= 0
	out.HasAlloc = t.allocSpace >= 0
	e := newEmitter(d, out, sink)
	_, err := emit(e, converter{chk: &sampleChecker{d: d, t: t}, scheme: parse.Unknown, rate: float64(d.Period), dropInUse: true,
		counts: func(s *sample) (inuse, alloc parse.Counts) {
			return unknownCounts(s, t.inuseObjects, t.inuseSpace), unknownCounts(s, t.allocObjects, t.allocSpace)
		}})
	if err != nil {
		return nil, err
	}
	return e.finish(float64(d.Period)), nil
}

func unknownCounts(s *sample, cnt, size int) parse.Counts {
	var c parse.Counts
	if size >= 0 {
		c.Bytes = float64(s.Value[size])
	}
	if cnt >= 0 {
		c.Objects = float64(s.Value[cnt])
	}
	if !c.IsZero() {
		c.Enc = parse.Scaled
	}
	return c
}
