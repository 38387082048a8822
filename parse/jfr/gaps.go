package jfr

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/heapest/heapest/parse"
)

// The JVM's throttle can accept no sample of a thread for hundreds of
// milliseconds (measured: 77 MB in one weight where the thread's usual
// weight was 0.5 MB); the next accepted sample then weighs every byte of
// the gap, whatever stack allocated them. A gap shows as a weight far
// above the thread's usual one. When the stack (or class) changes across
// it, the bytes of the gap may belong to the record before (whose bytes
// the estimate misses: Record.Spill) or the one after (whose estimate
// they inflate: Record.Excess), and the interval widens by them
// (unbias, ci.Stats.Spill and Excess). That needs the next record of a
// thread before its previous one is sent: each thread's latest
// ObjectAllocationSample record is held back (one per thread) until the
// thread's next one, or the end of the recording.

// gapFactor: a weight is a gap's when it exceeds the thread's usual
// weight (a moving average) by more than gapFactor times that weight. In
// the lab (docs/jfr.md) 0, 0.5, 1 and 3 gave the same coverage within a
// run or two; 1 leaves ordinary fluctuations alone.
const gapFactor = 1

// typicalWeight is the moving average's weight of a new sample.
const typicalWeight = 0.1

// heldSample is a thread's latest record, not yet sent.
type heldSample struct {
	rec parse.Record
	// typical is the thread's usual weight, 0 until it has two samples
	// (the first can carry JDK-8307488's bytes).
	typical float64
	n       int
	// first is when the thread's first sample was taken.
	first int64
}

// heldSamples are the held records, in the order their threads first
// appeared (so that the end of the recording sends them in a fixed order).
type heldSamples struct {
	byThread map[string]*heldSample
	order    []*heldSample
}

// sample holds rec (filled in d.rec) back and sends the thread's previous
// record, with the gap between the two marked.
func (d *decoder) sample(rec *parse.Record) {
	hs := &d.held
	if hs.byThread == nil {
		hs.byThread = map[string]*heldSample{}
	}
	h := hs.byThread[rec.Thread]
	d.sampleTimes = append(d.sampleTimes, rec.Time)
	if h == nil {
		h = &heldSample{first: rec.Time}
		hs.byThread[rec.Thread] = h
		hs.order = append(hs.order, h)
	} else {
		w := rec.Alloc.Bytes
		if e := w - h.typical; h.typical > 0 && e > gapFactor*h.typical && (h.rec.StackID != rec.StackID || h.rec.Type != rec.Type) {
			h.rec.Spill += e
			rec.Excess = e
		}
		d.emit(&h.rec)
		if h.n == 1 {
			h.typical = w
		} else {
			h.typical += typicalWeight * (w - h.typical)
		}
	}
	h.n++
	h.rec = *rec
}

// flushSamples sends the records still held, at the end of the recording:
// the threads' latest allocation samples, and the last chunk's list of
// old objects (oldSamples).
func (d *decoder) flushSamples() {
	for i := range d.oldSnapshot {
		d.emit(&d.oldSnapshot[i])
	}
	d.oldSnapshot = nil
	for _, h := range d.held.order {
		if h.n > 0 {
			d.emit(&h.rec)
			h.n = 0
		}
	}
}

// A thread can end, and a recording stop, long after the throttle's last
// sample: a short program allocates most of its bytes after the first
// window of samples, which the throttle overshoots and then makes up for
// by taking none (measured: 208 MB allocated by main in 68 ms, all 58
// samples in its first 8 ms, 15 MB of weight). Bytes after a thread's
// last sample are in no weight, and no interval can see them. The
// recording says when a thread ended (jdk.ThreadEnd); when no sample of
// any thread came between a thread's last sample and its end, and that
// was long, longer than its own samples spanned, the thread was not
// sampled while it may have been allocating, and heapest says so. (A
// thread idle at its end, main waiting for its workers say, has their
// samples in its tail, and is not named.)

// Thresholds of a stalled tail: a thread with at least tailMinSamples
// samples that ended more than tailMinNanos, and more than its samples'
// span, after its last one, with no sample of any thread in between.
const (
	tailMinSamples = 10
	tailMinNanos   = 10e6
)

// threadEnds are when threads ended (jdk.ThreadEnd), by thread, in
// nanoseconds from the recording's start.
type threadEnds map[string]int64

func (e *threadEnds) add(thread string, at int64) {
	if *e == nil {
		*e = threadEnds{}
	}
	(*e)[thread] = at
}

// stalledTails is the warning of the threads whose tails stalled ("" for
// none), from every ObjectAllocationSample's time (d.sampleTimes) and the
// threads' held samples, before they are sent.
func (d *decoder) stalledTails() string {
	if len(d.ended) == 0 {
		return ""
	}
	times := slices.Clone(d.sampleTimes)
	slices.Sort(times)
	type tail struct {
		thread      string
		stall, span int64
		n           int
	}
	var tails []tail
	for _, h := range d.held.order {
		end, ok := d.ended[h.rec.Thread]
		if !ok || h.n < tailMinSamples {
			continue
		}
		// Stalled: no sample of any thread between the thread's last
		// one and its end.
		i, _ := slices.BinarySearch(times, end+1)
		if i == 0 || times[i-1] != h.rec.Time {
			continue
		}
		stall, span := end-h.rec.Time, h.rec.Time-h.first
		if stall > tailMinNanos && stall > span {
			tails = append(tails, tail{h.rec.Thread, stall, span, h.n})
		}
	}
	if len(tails) == 0 {
		return ""
	}
	slices.SortStableFunc(tails, func(a, b tail) int { return cmp.Compare(b.stall, a.stall) })
	var b strings.Builder
	fmt.Fprintf(&b, "%d thread(s) ended long after their last allocation sample, with no thread sampled in between: JFR's throttle took none then, "+
		"and what they allocated in that time is on no row (the estimates miss it; docs/jfr.md):", len(tails))
	for i, t := range tails {
		if i == 3 {
			fmt.Fprintf(&b, "; and %d more", len(tails)-i)
			break
		}
		fmt.Fprintf(&b, " %s %v without a sample before it ended (its %d samples span %v)", t.thread, ms(t.stall), t.n, ms(t.span))
	}
	return b.String()
}

// ms rounds nanoseconds to a duration in milliseconds.
func ms(ns int64) time.Duration { return time.Duration(ns).Round(time.Millisecond) }
