package pprof

// heapest's own pprof output (render/pprof.go) read back. Each sample is one
// stack with the exact ci.Stats of every value heapest computed for it,
// carried as string labels "heapest.<value>" (numeric labels are int64 and
// would round the variance); the sample values are those estimates rounded,
// for pprof viewers. Reading the labels back reproduces the statistics, and
// so the intervals, exactly, and lets such files be merged again.

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

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

func isHeapestProfile(p *pbProfile) bool {
	for _, c := range p.Comments {
		if c == HeapestPprofMarker {
			return true
		}
	}
	return false
}

// readHeapest turns heapest's own samples back into records whose Pre holds
// the statistics as written.
func readHeapest(name string, p *pbProfile) (*Profile, error) {
	out := newProfile(p, "heapest")
	out.Source.Detail = "heapest pprof output: statistics read back exactly"
	st := newStacker(p)
	rate, mixedRate := 0.0, false
	var s pbSample
	for i := 0; i < p.NumSamples(); i++ {
		if err := p.Sample(i, &s); err != nil {
			return nil, &Error{File: name, Offset: -1, Msg: fmt.Sprintf("sample %d", i), Err: err}
		}
		pre := &Precomputed{}
		for v, vn := range HeapestValueNames {
			enc, ok := s.Label(HeapestStatsLabel(vn))
			if !ok {
				continue
			}
			stats, err := DecodeStats(enc)
			if err != nil {
				return nil, &Error{File: name, Offset: -1, Msg: fmt.Sprintf("sample %d: label %s", i, HeapestStatsLabel(vn)), Err: err}
			}
			pre.Stats[v], pre.Has[v] = stats, true
		}
		if !pre.Has[0] && !pre.Has[1] && !pre.Has[2] && !pre.Has[3] {
			return nil, &Error{File: name, Offset: -1, Msg: fmt.Sprintf("sample %d has no heapest.* statistics label (file marked %s)", i, HeapestPprofMarker)}
		}
		rec := heapestRecord(st.stack(s.locs), pre)
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

// EncodeStats writes every field of s as "Name=value", space-separated:
// integers in decimal, floats in the shortest form that parses back to the
// same bits, booleans as 0 or 1. The fields are found by reflection, so a
// field added to ci.Stats is carried without a change here.
func EncodeStats(s ci.Stats) string {
	var b strings.Builder
	v := reflect.ValueOf(s)
	for i := 0; i < v.NumField(); i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(v.Type().Field(i).Name)
		b.WriteByte('=')
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Float64:
			b.WriteString(strconv.FormatFloat(f.Float(), 'g', -1, 64))
		case reflect.Int64:
			b.WriteString(strconv.FormatInt(f.Int(), 10))
		case reflect.Bool:
			if f.Bool() {
				b.WriteByte('1')
			} else {
				b.WriteByte('0')
			}
		}
	}
	return b.String()
}

// DecodeStats parses what EncodeStats wrote. A field the encoding lacks
// stays zero (a file from a heapest that did not have it); a field this
// ci.Stats does not know is an error (a file from a newer heapest).
func DecodeStats(enc string) (ci.Stats, error) {
	var s ci.Stats
	v := reflect.ValueOf(&s).Elem()
	seen := 0
	for _, kv := range strings.Fields(enc) {
		k, val, ok := strings.Cut(kv, "=")
		if !ok {
			return s, fmt.Errorf("statistics field %q: expected Name=value", kv)
		}
		f := v.FieldByName(k)
		if !f.IsValid() || !f.CanSet() {
			return s, fmt.Errorf("statistics field %q unknown (written by a newer heapest?)", k)
		}
		if err := setStatsField(f, val); err != nil {
			return s, fmt.Errorf("statistics field %s=%q: %v", k, val, err)
		}
		seen++
	}
	if seen == 0 || !strings.Contains(" "+enc, " N=") || !strings.Contains(enc, " Estimate=") {
		return s, fmt.Errorf("statistics %q: expected at least N and Estimate", enc)
	}
	return s, nil
}

func setStatsField(f reflect.Value, val string) error {
	switch f.Kind() {
	case reflect.Float64:
		x, err := strconv.ParseFloat(val, 64)
		if err != nil || math.IsNaN(x) {
			return fmt.Errorf("expected a number")
		}
		f.SetFloat(x)
	case reflect.Int64:
		x, err := strconv.ParseInt(val, 10, 64)
		if err != nil || x < 0 {
			return fmt.Errorf("expected a count")
		}
		f.SetInt(x)
	case reflect.Bool:
		if val != "0" && val != "1" {
			return fmt.Errorf("expected 0 or 1")
		}
		f.SetBool(val == "1")
	default:
		return fmt.Errorf("unsupported field kind %s", f.Kind())
	}
	return nil
}
