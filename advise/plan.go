package advise

import (
	"math"

	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/unbias"
)

// RowAdvice is the advice for one row.
type RowAdvice struct {
	Key string
	// Rate is the largest sampling period at which the row reaches the
	// target in one dump.
	Rate float64
	// Dumps is how many dumps at the current period reach it, merged (0:
	// the current period is not known).
	Dumps int
	// Skip, when set, says why the row gets no advice.
	Skip string
}

// Knobs are one sampling period as each allocator's setting.
type Knobs struct {
	// Rate is the period in bytes.
	Rate float64
	// JemallocLg is lg_prof_sample: the period rounded down to a power of
	// two (jemalloc samples at 2^lg), so that the target is still met.
	JemallocLg int
	// GoMemProfileRate is runtime.MemProfileRate, TcmallocSample
	// TCMALLOC_SAMPLE_PARAMETER (gperftools) or SetProfileSamplingRate
	// (tcmalloc), and V8Interval the intervalBytes V8's heap profiler
	// starts with (Node.js): the period in whole bytes.
	GoMemProfileRate int64
	TcmallocSample   int64
	V8Interval       int64
	// SamplesPerGiB is the samples taken per GiB allocated in small
	// objects, 2^30/R: the overhead, which grows as R shrinks.
	SamplesPerGiB float64
}

// KnobsFor returns the settings of a period.
func KnobsFor(rate float64) Knobs {
	rate = math.Max(rate, 1)
	lg := int(math.Floor(math.Log2(rate)))
	whole := int64(math.Floor(rate))
	return Knobs{Rate: rate, JemallocLg: min(lg, 62), GoMemProfileRate: whole, TcmallocSample: whole, V8Interval: whole,
		SamplesPerGiB: (1 << 30) / rate}
}

// JemallocRate is the period jemalloc samples at with JemallocLg.
func (k Knobs) JemallocRate() float64 { return math.Exp2(float64(k.JemallocLg)) }

// Plan is the advice for a set of rows.
type Plan struct {
	Target Target
	Rows   []RowAdvice
	// Rate is the largest period at which every advised row reaches the
	// target: the smallest of the rows' own. Knobs are its settings.
	Rate  float64
	Knobs Knobs
	// Current is the inputs' period (0: not known, or several), and
	// CurrentKnobs its settings.
	Current      float64
	CurrentKnobs Knobs
	// Dumps is how many dumps at the current period reach the target for
	// every row (0: the current period is not known).
	Dumps int
	// DotnetDumps is the same at .NET's fixed period (DotnetRate).
	DotnetDumps int
}

// Advise advises each row (rows with Skip set pass through) and sums the
// advice up. current is the inputs' period (0: unknown).
func Advise(rows []Row, current float64, t Target) (*Plan, error) {
	if err := t.Check(); err != nil {
		return nil, err
	}
	t.Assurance = t.assurance()
	p := &Plan{Target: t, Current: current, Rate: math.Inf(1)}
	for _, r := range rows {
		a, err := advise(r, current, t)
		if err != nil {
			return nil, err
		}
		p.Rows = append(p.Rows, a)
		if a.Skip != "" {
			continue
		}
		p.Rate = math.Min(p.Rate, a.Rate)
		p.Dumps = max(p.Dumps, a.Dumps)
		d, err := t.Dumps(r, DotnetRate)
		if err != nil {
			return nil, err
		}
		p.DotnetDumps = max(p.DotnetDumps, d)
	}
	if math.IsInf(p.Rate, 1) {
		p.Rate = 0 // no row was advised
	}
	p.Knobs = KnobsFor(p.Rate)
	if current > 0 {
		p.CurrentKnobs = KnobsFor(current)
	}
	return p, nil
}

// advise is one row's advice.
func advise(r Row, current float64, t Target) (RowAdvice, error) {
	a := RowAdvice{Key: r.Key, Skip: r.Skip}
	if a.Skip != "" {
		return a, nil
	}
	var err error
	if a.Rate, err = t.Rate(r); err != nil {
		return a, err
	}
	if current > 0 {
		a.Dumps, err = t.Dumps(r, current)
	}
	return a, err
}

// PartsOf turns a row's statistics by size (report.Builder.SizeMix) into
// its parts per dump, for a report of value v over dumps inputs. It says
// why a row cannot be advised: object counts whose sizes are unknown
// have no interval to aim at, nor do sources that are not sampled per
// byte.
func PartsOf(mix map[float64]ci.Stats, v unbias.Value, dumps int) ([]Part, string) {
	var parts []Part
	for size, st := range mix {
		if size <= 0 && !v.IsSpace() && !st.Complete {
			return nil, "object counts of dump lines that mix sizes have no interval"
		}
		if why := unadvisable(st); why != "" {
			return nil, why
		}
		bytes := st.Estimate
		if !v.IsSpace() {
			bytes *= size
		}
		parts = append(parts, Part{Size: size, Bytes: bytes / float64(dumps)})
	}
	sortParts(parts)
	return parts, ""
}

// unadvisable says why statistics are not of per-byte sampling ("": they
// are).
func unadvisable(st ci.Stats) string {
	switch {
	case st.Weighted:
		return "JFR samples by a throttle (events per second), not a byte period: raise jdk.ObjectAllocationSample#throttle"
	case st.NoInterval:
		return "its sampling gives no interval (fixed-stride ticks, an unknown producer)"
	case st.Complete:
		return "recorded every allocation: already exact"
	}
	return ""
}

// sortParts orders parts by size, so that the advice does not depend on
// a map's order (the sums of floating-point numbers do).
func sortParts(parts []Part) {
	for i := 1; i < len(parts); i++ {
		for j := i; j > 0 && parts[j].Size < parts[j-1].Size; j-- {
			parts[j], parts[j-1] = parts[j-1], parts[j]
		}
	}
}
