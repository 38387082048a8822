package jfr

import "github.com/heapest/heapest/parse"

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
		h = &heldSample{}
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
