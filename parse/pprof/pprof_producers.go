package pprof

import (
	"fmt"
	"math"
)

// readScaledHeap reads a profile whose values were scaled per sample by
// scaleHeapSample (golang/go runtime/pprof/protomem.go; google/pprof's legacy
// heap parser uses the same formula): count·s and bytes·s, truncated, with
// s = 1/(1−exp(−b/R)), b the numeric label "bytes" and R the Period. The
// values are already unbiased; the raw sample count is recovered from the
// space value (reference §1.4).
func readScaledHeap(name string, p *pbProfile, t sampleTypes, opt Options, format string) (*Profile, error) {
	out := newProfile(p, format)
	rate := float64(p.Period)
	if p.PeriodType != nil && p.PeriodType.Type != "space" {
		return nil, &Error{File: name, Offset: -1, Msg: fmt.Sprintf(
			"heap profile with period type %s/%s, expected space/bytes", p.PeriodType.Type, p.PeriodType.Unit)}
	}
	switch {
	case rate <= 0 && opt.Rate > 0:
		rate = opt.Rate
		out.Warnings = append(out.Warnings, fmt.Sprintf(
			"the profile has no sampling period; using --rate %g to recover raw sample counts", rate))
	case rate <= 0:
		return nil, &Error{File: name, Offset: -1, Msg: "heap profile without a sampling period (Period is 0): pass its MemProfileRate with --rate"}
	case opt.Rate > 0 && opt.Rate != rate:
		out.Warnings = append(out.Warnings, fmt.Sprintf(
			"--rate %g ignored: the values were scaled with the file's Period %g, which inverting them needs", opt.Rate, rate))
	}
	scheme := Bernoulli
	if rate <= 1 {
		scheme, rate = Exact, 1
	}
	io, is, ao, as := t.inuseObjects, t.inuseSpace, t.allocObjects, t.allocSpace
	if format != "pprof-go" {
		io, is, ao, as = t.objects, t.space, -1, -1
		out.Source.Detail = "legacy heap profile converted to proto, values scaled by pprof"
	}
	out.HasInUse, out.HasAlloc = io >= 0, ao >= 0
	chk := &sampleChecker{name: name, p: p, t: t}
	var approx int
	zero, err := collect(chk, out, scheme, rate, func(s *pbSample) (inuse, alloc Counts) {
		b, hasB := s.NumLabel("bytes")
		if io >= 0 {
			inuse = invertScaled(s.Value[io], s.Value[is], b, hasB, rate)
		}
		if ao >= 0 {
			alloc = invertScaled(s.Value[ao], s.Value[as], b, hasB, rate)
		}
		if inuse.Approx || alloc.Approx {
			approx++
		}
		return inuse, alloc
	})
	if err != nil {
		return nil, err
	}
	chk.dropInUse(out)
	if approx > 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf(
			"%d of %d samples do not invert to whole raw counts (missing \"bytes\" label, or values rescaled after writing); their sample counts are approximate",
			approx, len(out.Records)))
	}
	if zero > 0 && out.Source.Detail == "" {
		out.Source.Detail = fmt.Sprintf("%d all-zero samples skipped", zero)
	}
	return finish(out, rate), nil
}

// invertScaled recovers one pair of a scaled heap sample. With the "bytes"
// label b, n = round(space·(1−exp(−b/R))/b) is exact even for merged and
// delta profiles: space = ⌊n·b·s⌋ and b·s ≥ R, so the truncation moves
// space/(b·s) by less than 1/R per merged record. Without the label the
// average size space/count stands in for b; both values carry the same scale
// factor so the ratio is right to within truncation, but the result is then
// marked Approx: it is neither exact nor a bound in a known direction.
func invertScaled(count, space, b int64, hasB bool, rate float64) Counts {
	if count == 0 && space == 0 {
		return Counts{}
	}
	c := Counts{Objects: float64(count), Bytes: float64(space), Enc: Scaled}
	if rate <= 1 {
		// scaleHeapSample leaves values alone at rate 1: they are raw.
		c.Enc, c.Samples = Raw, float64(count)
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
	unit := size / -math.Expm1(-size/rate) // b·s ≥ R: what one sample adds to space
	x := float64(space) / unit
	n := math.Round(x)
	// Truncation leaves x below n by less than 1/unit per merged record.
	if n == 0 || math.Abs(x-n) > math.Max(0.01, 1/unit) {
		n, c.Approx = x, true
	}
	c.Samples, c.Size = n, size
	return c
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
func readTcmalloc(name string, p *pbProfile, t sampleTypes, opt Options) (*Profile, error) {
	out := newProfile(p, "pprof-tcmalloc")
	rate := opt.Rate
	if rate <= 0 {
		rate = defaultTcmallocRate
		out.Warnings = append(out.Warnings, fmt.Sprintf(
			"tcmalloc profiles do not record their sampling interval; assuming tcmalloc's default of 2 MiB (2097152 bytes). Pass --rate if the process set another (MallocExtension::SetProfileSamplingInterval); raw sample counts and intervals depend on it"))
	}
	// tcmalloc's allocation profile (kAllocations) defaults to objects; its
	// heap and peak-heap profiles to space.
	isAlloc := p.DefaultSampleType == "objects"
	if isAlloc {
		out.HasAlloc = true
		out.Source.Detail = "allocation profile"
	} else {
		out.HasInUse = true
	}
	chk := &sampleChecker{name: name, p: p, t: t}
	_, err := collect(chk, out, Bernoulli, rate, func(s *pbSample) (inuse, alloc Counts) {
		c := tcmallocCounts(s, t, rate)
		if isAlloc {
			return Counts{}, c
		}
		return c, Counts{}
	})
	if err != nil {
		return nil, err
	}
	return finish(out, rate), nil
}

// tcmallocCounts is one tcmalloc sample: unbiased values, with the raw
// count estimated from the sampled size (only an estimate: tcmalloc's
// weights are random, so it is marked Approx).
func tcmallocCounts(s *pbSample, t sampleTypes, rate float64) Counts {
	objs, space := s.Value[t.objects], s.Value[t.space]
	if objs == 0 && space == 0 {
		return Counts{}
	}
	c := Counts{Objects: float64(objs), Bytes: float64(space), Enc: Scaled, Approx: true}
	a, hasA := s.NumLabel("bytes")
	if (!hasA || a <= 0) && objs > 0 {
		a = space / objs
	}
	r, hasR := s.NumLabel("request")
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
func readHeapprofd(name string, p *pbProfile, t sampleTypes, opt Options) (*Profile, error) {
	out := newProfile(p, "pprof-heapprofd")
	scheme, rate := Bernoulli, opt.Rate
	if rate <= 0 {
		scheme, rate = Unknown, 0
		out.Warnings = append(out.Warnings, fmt.Sprintf(
			"heapprofd profiles do not record their sampling interval (sampling_interval_bytes in the trace config); pass --rate to get intervals. Showing estimates only"))
	}
	out.Warnings = append(out.Warnings, fmt.Sprintf(
		"heapprofd records the number of sampled allocations, not an estimate of objects: *_objects values are raw sampled counts (a lower bound)"))
	out.HasInUse = t.inuseSpace >= 0
	out.HasAlloc = t.allocSpace >= 0
	chk := &sampleChecker{name: name, p: p, t: t}
	_, err := collect(chk, out, scheme, rate, func(s *pbSample) (inuse, alloc Counts) {
		return heapprofdCounts(s, t.inuseObjects, t.inuseSpace), heapprofdCounts(s, t.allocObjects, t.allocSpace)
	})
	if err != nil {
		return nil, err
	}
	return finish(out, rate), nil
}

func heapprofdCounts(s *pbSample, cnt, size int) Counts {
	var c Counts
	if size >= 0 {
		c.Bytes = float64(s.Value[size])
	}
	if cnt >= 0 {
		c.Samples = float64(s.Value[cnt])
		c.Objects = c.Samples
	}
	if !c.IsZero() {
		c.Enc = Scaled
		c.Approx = true
	}
	return c
}

// readUnknown reads a heap-like profile from a producer heapest does not
// know: its values are taken as estimates, with no interval (Scheme
// Unknown), and a warning says so. A guess is never shown as an interval.
func readUnknown(name string, p *pbProfile, t sampleTypes, opt Options) (*Profile, error) {
	out := newProfile(p, "pprof")
	out.Warnings = append(out.Warnings, fmt.Sprintf(
		"unknown heap profile producer (sample types %s, period %d): values shown as estimates, without intervals", typeList(p), p.Period))
	out.HasInUse = t.inuseSpace >= 0
	out.HasAlloc = t.allocSpace >= 0
	chk := &sampleChecker{name: name, p: p, t: t}
	_, err := collect(chk, out, Unknown, float64(p.Period), func(s *pbSample) (inuse, alloc Counts) {
		return unknownCounts(s, t.inuseObjects, t.inuseSpace), unknownCounts(s, t.allocObjects, t.allocSpace)
	})
	if err != nil {
		return nil, err
	}
	chk.dropInUse(out)
	return finish(out, float64(p.Period)), nil
}

func unknownCounts(s *pbSample, cnt, size int) Counts {
	var c Counts
	if size >= 0 {
		c.Bytes = float64(s.Value[size])
	}
	if cnt >= 0 {
		c.Objects = float64(s.Value[cnt])
	}
	if !c.IsZero() {
		c.Enc = Scaled
	}
	return c
}

// collect checks every sample, converts it with counts and appends a
// record for each that has something to estimate. It returns how many were
// empty (all-zero samples, e.g. Go's not-yet-published GC cycles).
func collect(chk *sampleChecker, out *Profile, scheme Scheme, rate float64, counts func(*pbSample) (inuse, alloc Counts)) (empty int, err error) {
	st := newStacker(chk.p)
	var s pbSample
	for i := 0; i < chk.p.NumSamples(); i++ {
		if err := chk.check(i, &s); err != nil {
			return 0, err
		}
		inuse, alloc := counts(&s)
		if inuse.IsZero() && alloc.IsZero() {
			empty++
			continue
		}
		out.Records = append(out.Records, Record{Stack: st.stack(s.locs), Scheme: scheme, Rate: rate, InUse: inuse, Alloc: alloc})
	}
	return empty, nil
}
