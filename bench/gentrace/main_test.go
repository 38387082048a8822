package main

import (
	"bytes"
	"testing"
)

// TestGenerate checks the size contract and determinism for each format
// version: at least the requested bytes, at most one event block (the
// writer's 102,399-byte bound) more, the version's magic, the same bytes
// for the same seed and different bytes for another.
func TestGenerate(t *testing.T) {
	const size, block = 300_000, 102_399
	for _, v := range []int{4, 5, 6} {
		o := options{size: size, version: v, types: 50, methods: 300, stacks: 500, threads: 4, frames: 20, seed: 1}
		a, events := generate(o)
		if len(a) < size || len(a) > size+2*block {
			t.Errorf("V%d: %d bytes, want %d to %d", v, len(a), size, size+2*block)
		}
		if !bytes.HasPrefix(a, []byte("Nettrace")) {
			t.Errorf("V%d: no Nettrace magic: %q", v, a[:8])
		}
		// An AllocationSampled payload alone is over 40 bytes, so the
		// events cannot be more than size/40.
		if events < 100 || events > size/40 {
			t.Errorf("V%d: %d events in %d bytes", v, events, len(a))
		}
		b, _ := generate(o)
		if !bytes.Equal(a, b) {
			t.Errorf("V%d: two runs with seed 1 differ", v)
		}
		o.seed = 2
		if c, _ := generate(o); bytes.Equal(a, c) {
			t.Errorf("V%d: seeds 1 and 2 give the same trace", v)
		}
	}
}
