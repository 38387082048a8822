package pprof

import (
	"bytes"
	"math"

	"github.com/heapest/heapest/parse"
)

// V8's sampling heap profiler (Node.js, through pprof-nodejs, Google Cloud
// Profiler's agent or Datadog's @datadog/pprof) samples the JavaScript heap
// as a per-byte Poisson process of mean interval R, the profile's Period,
// and keeps the samples of objects still alive. Each sample of the profile
// is the objects of one size b allocated at one stack: the writers put
// [count, count·b], where count is V8's ScaleSample of the n objects
// sampled, round(n·s) with s = 1/(1−exp(−b/R))
// (src/profiler/sampling-heap-profiler.cc). So b = space/count exactly,
// and n = round(count/s) is the raw count, exact.

// isV8 recognises a V8 heap profile: the two sample types of its writers
// (objects and space, or inuse_objects and inuse_space), a Period, and
// frames of JavaScript (a function named as V8's profile names them, or a
// file of Node's or of JavaScript). Without such frames the types alone
// are a pprof-converted legacy heapz profile's (or unknown).
func isV8(d *decoded, t sampleTypes) bool {
	two := t.objects >= 0 && t.space >= 0 || t.inuseObjects >= 0 && t.inuseSpace >= 0
	if len(d.SampleType) != 2 || !two || d.Period <= 1 {
		return false
	}
	for _, f := range d.functions {
		name, err := d.strBytes(int64(f.name))
		if err != nil {
			continue
		}
		file, err := d.strBytes(int64(f.file))
		if err != nil {
			continue
		}
		if v8Frame(name, file) {
			return true
		}
	}
	return false
}

// v8Frame reports whether a function of this name and file is one a V8
// profile has: its pseudo-frames ("(external)", "(program)", "(garbage
// collector)", "(root)"), pprof-nodejs's name of an anonymous function
// ("(anonymous:L#1:C#1)"), or code of Node's own (node:internal/...) or
// in a JavaScript (or source-mapped TypeScript) file.
func v8Frame(name, file []byte) bool {
	switch string(name) {
	case "(external)", "(program)", "(garbage collector)", "(root)":
		return true
	}
	if bytes.HasPrefix(name, []byte("(anonymous:L#")) || bytes.HasPrefix(file, []byte("node:")) {
		return true
	}
	// TypeScript's where a source map named the frames (pprof-nodejs's
	// sourceMapper).
	for _, ext := range []string{".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"} {
		if bytes.HasSuffix(file, []byte(ext)) {
			return true
		}
	}
	return false
}

// readV8 reads a V8 heap profile: in-use values, raw counts recovered
// exactly (invertV8).
func readV8(d *decoded, t sampleTypes, opt parse.Options, sink parse.Sink) (*parse.Profile, error) {
	out := newProfile(d, "pprof-v8")
	out.Source.Detail = "V8 sampling heap profiler (Node.js)"
	rate := float64(d.Period)
	if opt.Rate > 0 && opt.Rate != rate {
		out.Warnings = append(out.Warnings, rateIgnored(opt.Rate, rate, "V8 scaled the counts with it, and inverting them needs it"))
	}
	cnt, sp := t.objects, t.space
	if cnt < 0 {
		cnt, sp = t.inuseObjects, t.inuseSpace
	}
	out.HasInUse = true
	var inv inverter
	e := newEmitter(d, out, sink)
	external := func(s *sample) bool { return isExternal(d, s) }
	n, err := emit(e, converter{chk: &sampleChecker{d: d, t: t}, scheme: parse.Bernoulli, rate: rate, dropInUse: true,
		counts: func(s *sample) (inuse, alloc parse.Counts) {
			if external(s) {
				return parse.Counts{Bytes: float64(s.Value[sp]), Enc: parse.Raw}, parse.Counts{}
			}
			return inv.invertV8(s.Value[cnt], s.Value[sp], rate), parse.Counts{}
		},
		values:   func() (inUse, alloc uint64) { return bit(cnt) | bit(sp), 0 },
		measured: external})
	if err != nil {
		return nil, err
	}
	n.warnApprox(out, "are not V8's (space not a whole number of objects of one size, or a count V8's scaling does not give)")
	return e.finish(rate), nil
}

// isExternal reports whether s is @datadog/pprof's "(external)" row: the
// external memory (ArrayBuffers, Buffers) process.memoryUsage() measured
// when the profile was taken, written as one object at a frame of its own.
// No sampler took it: it is exact, and no object count.
func isExternal(d *decoded, s *sample) bool {
	locs := s.decodeLocs()
	if len(locs) != 1 {
		return false
	}
	i, ok := d.stacks.locs.get(locs[0])
	if !ok {
		return false
	}
	fr := d.stacks.frames[d.stacks.start[i]:d.stacks.start[i+1]]
	return len(fr) == 1 && fr[0].Func == "(external)"
}

// invertV8 recovers the raw count n of a V8 sample of count objects taking
// space bytes: the objects are of one size b = space/count, and count =
// round(n·s), s = 1/(1−exp(−b/R)), so n = round(count/s), checked by
// scaling it again. A sample that fails either test keeps count/s, marked
// Approx.
func (v *inverter) invertV8(count, space int64, rate float64) parse.Counts {
	if count == 0 && space == 0 {
		return parse.Counts{}
	}
	c := parse.Counts{Objects: float64(count), Bytes: float64(space), Enc: parse.Scaled, Approx: true}
	if count <= 0 {
		return c
	}
	size := float64(space) / float64(count)
	s := v.unitOf(size, rate) / size // 1/(1−exp(−b/R))
	x := float64(count) / s
	n := math.Round(x)
	if space%count == 0 && n >= 1 && math.Floor(n*s+0.5) == float64(count) {
		x, c.Approx = n, false
	}
	c.Samples, c.Size = x, size
	return c
}
