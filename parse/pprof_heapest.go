package parse

// heapest's own pprof output (render/pprof.go) read back. Each sample is one
// stack with the exact ci.Stats of every value heapest computed for it,
// carried as string labels "heapest.<value>" (numeric labels are int64 and
// would round the variance); the sample values are those estimates rounded,
// for pprof viewers. Reading the labels back reproduces the statistics, and
// so the intervals, exactly, and lets such files be merged again.

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/heapest/heapest/ci"
)

// HeapestPprofMarker is the comment that marks a profile.proto written by
// heapest; its version changes when the label encoding does.
const HeapestPprofMarker = "heapest-pprof/1"

// HeapestValueNames are the four values in unbias.Value order, which
// Precomputed's arrays follow.
var HeapestValueNames = [4]string{"inuse_space", "inuse_objects", "alloc_space", "alloc_objects"}

// HeapestStatsLabel is the string label key carrying a value's statistics.
func HeapestStatsLabel(value string) string { return "heapest." + value }

func isHeapestProfile(p *profile.Profile) bool {
	for _, c := range p.Comments {
		if c == HeapestPprofMarker {
			return true
		}
	}
	return false
}

// readHeapest turns heapest's own samples back into records whose Pre holds
// the statistics as written.
func readHeapest(name string, p *profile.Profile) (*Profile, error) {
	out := newProfile(p, "heapest")
	out.Source.Detail = "heapest pprof output: statistics read back exactly"
	st := newStacker()
	rate, mixedRate := 0.0, false
	for i, s := range p.Sample {
		pre := &Precomputed{}
		for v, vn := range HeapestValueNames {
			enc := s.Label[HeapestStatsLabel(vn)]
			if len(enc) == 0 {
				continue
			}
			stats, err := DecodeStats(enc[0])
			if err != nil {
				return nil, &Error{File: name, Offset: -1, Msg: fmt.Sprintf("sample %d: label %s", i, HeapestStatsLabel(vn)), Err: err}
			}
			pre.Stats[v], pre.Has[v] = stats, true
		}
		if !pre.Has[0] && !pre.Has[1] && !pre.Has[2] && !pre.Has[3] {
			return nil, &Error{File: name, Offset: -1, Msg: fmt.Sprintf("sample %d has no heapest.* statistics label (file marked %s)", i, HeapestPprofMarker)}
		}
		rec := heapestRecord(st.stack(s.Location), pre)
		if len(out.Records) == 0 {
			rate = rec.Rate
		} else if rec.Rate != rate {
			mixedRate = true
		}
		out.HasInUse = out.HasInUse || pre.Has[0] || pre.Has[1]
		out.HasAlloc = out.HasAlloc || pre.Has[2] || pre.Has[3]
		out.Records = append(out.Records, rec)
	}
	if mixedRate {
		rate = 0
	}
	out = finish(out, rate)
	return out, nil
}

// heapestRecord fills the plain fields too, so that a consumer that ignores
// Pre still sees the estimates.
func heapestRecord(stack []Frame, pre *Precomputed) Record {
	rec := Record{Stack: stack, Pre: pre, Scheme: Bernoulli}
	var any ci.Stats
	for v := range pre.Has {
		if pre.Has[v] {
			any = pre.Stats[v]
			break
		}
	}
	switch {
	case any.Complete:
		rec.Scheme = Exact
	case any.NoInterval:
		rec.Scheme = Unknown
	}
	if !any.MixedRate {
		rec.Rate = any.Rate
	}
	rec.InUse = preCounts(pre, 0, 1)
	rec.Alloc = preCounts(pre, 2, 3)
	return rec
}

func preCounts(pre *Precomputed, space, objects int) Counts {
	if !pre.Has[space] && !pre.Has[objects] {
		return Counts{}
	}
	s := pre.Stats[space]
	if !pre.Has[space] {
		s = pre.Stats[objects]
	}
	c := Counts{Bytes: pre.Stats[space].Estimate, Objects: pre.Stats[objects].Estimate, Enc: Scaled,
		Samples: s.Samples, SamplesBound: s.SamplesBound, Approx: s.Approx}
	if !s.Mixed && pre.Has[space] {
		c.Size = s.Unit
	}
	return c
}

// statsFields are the encoded fields of ci.Stats, in a fixed order.
var statsFields = []struct {
	key string
	get func(*ci.Stats) *float64
}{
	{"est", func(s *ci.Stats) *float64 { return &s.Estimate }},
	{"var", func(s *ci.Stats) *float64 { return &s.Var }},
	{"s", func(s *ci.Stats) *float64 { return &s.Samples }},
	{"mw", func(s *ci.Stats) *float64 { return &s.MaxWeight }},
	{"p", func(s *ci.Stats) *float64 { return &s.P }},
	{"unit", func(s *ci.Stats) *float64 { return &s.Unit }},
	{"rate", func(s *ci.Stats) *float64 { return &s.Rate }},
	{"off", func(s *ci.Stats) *float64 { return &s.Offset }},
}

// statsFlags are the boolean fields, one letter each in the "f=" field.
var statsFlags = []struct {
	letter byte
	get    func(*ci.Stats) *bool
}{
	{'b', func(s *ci.Stats) *bool { return &s.SamplesBound }},
	{'m', func(s *ci.Stats) *bool { return &s.Mixed }},
	{'r', func(s *ci.Stats) *bool { return &s.MixedRate }},
	{'o', func(s *ci.Stats) *bool { return &s.HasOffset }},
	{'c', func(s *ci.Stats) *bool { return &s.Complete }},
	{'n', func(s *ci.Stats) *bool { return &s.NoInterval }},
	{'a', func(s *ci.Stats) *bool { return &s.Approx }},
}

// EncodeStats writes s as "n=… est=… var=… … f=flags", every float in the
// shortest form that parses back to the same bits.
func EncodeStats(s ci.Stats) string {
	var b strings.Builder
	b.WriteString("n=")
	b.WriteString(strconv.FormatInt(s.N, 10))
	for _, f := range statsFields {
		b.WriteByte(' ')
		b.WriteString(f.key)
		b.WriteByte('=')
		b.WriteString(strconv.FormatFloat(*f.get(&s), 'g', -1, 64))
	}
	b.WriteString(" f=")
	for _, f := range statsFlags {
		if *f.get(&s) {
			b.WriteByte(f.letter)
		}
	}
	return b.String()
}

// DecodeStats parses what EncodeStats wrote; every field must be present.
func DecodeStats(enc string) (ci.Stats, error) {
	var s ci.Stats
	kv := map[string]string{}
	for _, f := range strings.Fields(enc) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return s, fmt.Errorf("statistics field %q: expected key=value", f)
		}
		kv[k] = v
	}
	n, err := strconv.ParseInt(kv["n"], 10, 64)
	if err != nil || n < 0 {
		return s, fmt.Errorf("statistics field n=%q: expected a count", kv["n"])
	}
	s.N = n
	for _, f := range statsFields {
		v, err := strconv.ParseFloat(kv[f.key], 64)
		if err != nil || math.IsNaN(v) {
			return s, fmt.Errorf("statistics field %s=%q: expected a number", f.key, kv[f.key])
		}
		*f.get(&s) = v
	}
	flags, ok := kv["f"]
	if !ok {
		return s, fmt.Errorf("statistics field f (flags) missing")
	}
	for i := 0; i < len(flags); i++ {
		found := false
		for _, f := range statsFlags {
			if f.letter == flags[i] {
				*f.get(&s), found = true, true
			}
		}
		if !found {
			return s, fmt.Errorf("statistics flag %q unknown", flags[i])
		}
	}
	return s, nil
}
