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

// A thread can end long after the throttle's last sample of it. The
// throttle needs a second or so to settle: a short program's threads
// allocate most of their bytes after their last sample, and those bytes
// are in no weight (measured: four threads that allocated for 100 ms got
// 2–3% of their bytes into weights, on JDK 17 and 25; for 300 ms, 24% and
// 40%; for a second or more, all of them). No interval can see them. The
// recording says when a thread started and ended (jdk.ThreadStart,
// jdk.ThreadEnd) and when it waited (jdk.JavaMonitorWait, ThreadPark,
// ThreadSleep, over their thresholds): a thread that ended long after its
// last sample (or started and ended with none), and was not waiting for
// most of that time, may have allocated then unsampled, and heapest says
// so. (A main that joins its workers waits on them, and is not named.)

// tailMinNanos: a thread's unsampled, unblocked tail is named when it
// exceeds this and its samples' span. Shorter ones are a few percent of a
// run long enough for the throttle to settle, and are what a main thread
// that starts its workers and waits for them shows between its last
// sample and its wait (11 and 22 ms in two real runs).
const tailMinNanos = 40e6

// threadTimes are when threads started or ended (jdk.ThreadStart,
// jdk.ThreadEnd), by thread, in nanoseconds from the recording's start.
type threadTimes map[string]int64

func (e *threadTimes) add(thread string, at int64) {
	if *e == nil {
		*e = threadTimes{}
	}
	(*e)[thread] = at
}

// blockedTimes are when threads waited, by thread: [from, to) in
// nanoseconds from the recording's start.
type blockedTimes map[string][][2]int64

func (e *blockedTimes) add(thread string, from, to int64) {
	if *e == nil {
		*e = blockedTimes{}
	}
	(*e)[thread] = append((*e)[thread], [2]int64{from, to})
}

// within is how long a thread waited between from and to (its waits
// overlap at most little: a thread waits for one thing at a time).
func (e blockedTimes) within(thread string, from, to int64) int64 {
	var n int64
	for _, w := range e[thread] {
		n += max(0, min(w[1], to)-max(w[0], from))
	}
	return n
}

// stalledTails is the warning of the threads whose tails went unsampled
// ("" for none), from the threads' held samples, before they are sent,
// and their starts, ends and waits.
func (d *decoder) stalledTails() string {
	type tail struct {
		thread      string
		stall, span int64
		n           int
	}
	var tails []tail
	for th, end := range d.ended {
		var t tail
		from := int64(0)
		if h, ok := d.held.byThread[th]; ok && h.n > 0 {
			from, t.span, t.n = h.rec.Time, h.rec.Time-h.first, h.n
		} else if start, ok := d.started[th]; ok {
			from = start
		} else {
			continue // a thread that started before the recording, and no sample
		}
		t.thread, t.stall = th, end-from-d.blocked.within(th, from, end)
		if t.stall > tailMinNanos && t.stall > t.span {
			tails = append(tails, t)
		}
	}
	if len(tails) == 0 {
		return ""
	}
	slices.SortFunc(tails, func(a, b tail) int {
		return cmp.Or(cmp.Compare(b.stall, a.stall), cmp.Compare(a.thread, b.thread))
	})
	var b strings.Builder
	fmt.Fprintf(&b, "%d thread(s) went on long after their last allocation sample, not waiting, before they ended: "+
		"JFR's throttle, which needs a second or so to settle, took no sample of what they allocated then, and it is on no row (the estimates miss it; docs/jfr.md):", len(tails))
	for i, t := range tails {
		sep := " "
		if i > 0 {
			sep = "; "
		}
		switch {
		case i == 3:
			fmt.Fprintf(&b, "; and %d more", len(tails)-i)
			return b.String()
		case t.n == 0:
			fmt.Fprintf(&b, "%s%s ran %v with no sample", sep, t.thread, ms(t.stall))
		default:
			fmt.Fprintf(&b, "%s%s ran %v after its last sample (its %d samples span %v)", sep, t.thread, ms(t.stall), t.n, ms(t.span))
		}
	}
	return b.String()
}

// ms rounds nanoseconds to a duration in milliseconds.
func ms(ns int64) time.Duration { return time.Duration(ns).Round(time.Millisecond) }
