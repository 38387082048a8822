package unbias

import (
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/parse"
)

// weighted is a record whose producer gave it a weight in bytes (JFR's
// ObjectAllocationSample: the bytes its thread allocated since its
// previous emitted sample; an ObjectAllocationInNewTLAB event: its TLAB's
// size). The estimate is the weight itself, so a group's estimate is the
// sum of its weights, the number jfr and JMC print.
//
// The sampling is not a design with known inclusion probabilities: the
// JVM throttles events in time (a rate per second) and a weight covers
// whatever its thread allocated since its previous event. The interval is
// model-based. The model: each event's weight is attributed to its group
// by a draw independent of the others, with the group's share of the
// thread's bytes as probability; then a group's sum of weights has
// variance Σ w²·p(1−p) ≤ Σ w², which is the variance of a sum of Poisson
// counts with weights w. So Var = w², and the Fay–Feuer gamma interval
// uses the weights as its w (MaxWeight).
//
// The model leaves out what the JVM's throttle does in time: it can accept
// no sample of a thread for hundreds of milliseconds, and the next sample
// then weighs every byte of the gap, whatever stack allocated them. The
// parser marks such gaps (Record.Spill on the record before, Excess on
// the one after, when their stacks differ) and the interval widens by
// them (ci.Stats.Spill, Excess). Bytes after a thread's last sample are in
// no weight at all. docs/jfr.md measures what coverage this gives, and the
// interval carries ci.NoteWeighted, which says it.
//
// Object counts cannot be estimated from weights (the sampled object's
// size is not recorded): they get no interval and their estimate is the
// counts as given (0 for ObjectAllocationSample).
func weighted(c parse.Counts, v Value, rec *parse.Record) Contribution {
	if !v.IsSpace() {
		return Contribution{Stats: ci.Stats{Estimate: c.Objects, Samples: c.Samples, NoInterval: true, Mixed: true}}
	}
	w := c.Bytes
	return Contribution{Stats: ci.Stats{Estimate: w, Var: w * w, MaxWeight: w, Samples: c.Samples, Mixed: true, Weighted: true,
		Spill: rec.Spill, Excess: min(rec.Excess, w)}}
}
