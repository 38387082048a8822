package nettrace

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/heapest/heapest/parse"
)

// TestResolvedMatchesLookup checks the sorted walk of resolved against
// lookup, address by address, on random nested and overlapping method
// ranges, and addrSet against a map.
func TestResolvedMatchesLookup(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		var methods []methodRange
		for range rng.IntN(40) {
			start := uint64(rng.IntN(4000))
			methods = append(methods, methodRange{start: start, end: start + uint64(rng.IntN(300)), name: "m"})
		}
		syms := newSymbols(methods)
		set, want := newAddrSet[uint64](0, 0), map[uint64]bool{}
		for range rng.IntN(3000) {
			addWant(set, want, uint64(rng.IntN(4500)), rng.IntN(3) == 0)
		}
		if set.len() != len(want) {
			t.Fatalf("trial %d: the set holds %d addresses, want %d", trial, set.len(), len(want))
		}
		n := 0
		for addr, leaf := range want {
			ip := addr
			if !leaf && ip > 0 {
				ip--
			}
			if syms.lookup(ip) != "" {
				n++
			}
		}
		set.each(func(addr uint64, leaf bool) {
			if want[addr] != leaf {
				t.Fatalf("trial %d: address %d first a leaf %v, want %v", trial, addr, leaf, want[addr])
			}
		})
		if got := syms.resolved(set); got != n {
			t.Fatalf("trial %d: resolved %d, lookup finds %d", trial, got, n)
		}
	}
}

// addWant adds addr to set and, the first time, to want, the map the set
// is checked against: the first copy's leaf flag wins in both.
func addWant(set *addrSet[uint64], want map[uint64]bool, addr uint64, leaf bool) {
	set.add(addr, leaf)
	if _, ok := want[addr]; !ok {
		want[addr] = leaf
	}
}

// TestCoverHas checks cover against a look at every range, on ranges in
// clusters far apart (buckets of very uneven load), up to the top of the
// address space.
func TestCoverHas(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	bases := []uint64{0, 1 << 20, 0x7f0000000000, 1<<64 - 1<<16}
	for trial := range 300 {
		var r []methodRange
		for range rng.IntN(60) {
			start := bases[rng.IntN(len(bases))] + uint64(rng.IntN(50000))
			end := start + uint64(rng.IntN(400))
			if end < start {
				continue
			}
			r = append(r, methodRange{start: start, end: end, name: "m"})
		}
		syms := newSymbols(r)
		c := newCover(syms.r)
		for range 2000 {
			ip := bases[rng.IntN(len(bases))] + uint64(rng.IntN(51000))
			if rng.IntN(10) == 0 {
				ip = rng.Uint64()
			}
			want := false
			for _, m := range syms.r {
				want = want || m.start <= ip && ip < m.end
			}
			if got := c.has(ip); got != want {
				t.Fatalf("trial %d: has(%#x) = %v, want %v", trial, ip, got, want)
			}
		}
	}
}

// TestAddrSetMerges checks addrSet against a map over many merges: repeats
// within and across merges (the first copy's leaf flag wins), address 0,
// and addresses of 2⁶³ and above.
func TestAddrSetMerges(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, spread := range []int{1000, 50_000, 1 << 20} {
		set, want := &addrSet[uint64]{minMerge: 5000}, map[uint64]bool{}
		for range 300_000 {
			addr := uint64(rng.IntN(spread)) << uint(rng.IntN(3)*20)
			if rng.IntN(50) == 0 {
				addr |= 1 << 63
			}
			addWant(set, want, addr, rng.IntN(3) == 0)
		}
		checkAddrs(t, fmt.Sprintf("spread %d", spread), set, want)
		// The same within 2³¹ of a base, in uint32s.
		const base = 0x7ff0_0000_0000
		narrow, want := &addrSet[uint32]{base: base, minMerge: 5000}, map[uint64]bool{}
		for range 300_000 {
			addr := base + uint64(rng.IntN(spread))<<uint(rng.IntN(2)*10)
			leaf := rng.IntN(3) == 0
			narrow.add(addr, leaf)
			if _, ok := want[addr]; !ok {
				want[addr] = leaf
			}
		}
		checkAddrs(t, fmt.Sprintf("spread %d, narrow", spread), narrow, want)
	}
}

// checkAddrs checks a set's addresses and their leaf flags against want.
func checkAddrs(t *testing.T, name string, set addrs, want map[uint64]bool) {
	t.Helper()
	if set.len() != len(want) {
		t.Fatalf("%s: the set holds %d addresses, want %d", name, set.len(), len(want))
	}
	seen := 0
	set.each(func(addr uint64, leaf bool) {
		if l, ok := want[addr]; !ok || l != leaf {
			t.Fatalf("%s: address %#x first a leaf %v, want %v (held %v)", name, addr, leaf, l, ok)
		}
		seen++
	})
	if seen != len(want) {
		t.Fatalf("%s: each gave %d addresses, want %d", name, seen, len(want))
	}
}

// distinct holds a trace's addresses in uint32s when they span less than
// 2³¹, else in uint64s; either way, every stack's addresses, the first
// copy's leaf flag winning.
func TestDistinctWidths(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, c := range []struct {
		span   uint64
		narrow bool
	}{{1 << 20, true}, {1<<31 - 1, true}, {1 << 31, false}, {1 << 40, false}} {
		st, want := newStackTable(), map[uint64]bool{}
		for k := range 2000 {
			frames := make([]parse.Frame, 1+rng.IntN(6))
			for i := range frames {
				frames[i].Addr = 0x7ff0_0000_0000 + rng.Uint64N(c.span+1)
			}
			if k == 0 { // the span's two ends
				frames = []parse.Frame{{Addr: 0x7ff0_0000_0000}, {Addr: 0x7ff0_0000_0000 + c.span}}
			}
			if _, added := internFrames(&st, frames); !added {
				continue
			}
			for i, f := range frames {
				if _, ok := want[f.Addr]; !ok {
					want[f.Addr] = i == 0
				}
			}
		}
		d := st.distinct()
		if _, narrow := d.(*addrSet[uint32]); narrow != c.narrow {
			t.Errorf("span %#x: narrow %v, want %v", c.span, narrow, c.narrow)
		}
		checkAddrs(t, fmt.Sprintf("span %#x", c.span), d, want)
	}
}

// TestStackTable checks stack ids against a map: the same id for the same
// addresses, new ones in order, across the slots' growth and chunks, with
// a stack longer than a chunk.
func TestStackTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	st, want := newStackTable(), map[string]int32{}
	for k := range 50_000 {
		n := rng.IntN(6)
		if k%10_000 == 0 {
			n = stackChunk + 3
		}
		frames := make([]parse.Frame, n)
		for i := range frames {
			frames[i].Addr = uint64(rng.IntN(8))
		}
		key := fmt.Sprint(frames)
		g, added := internFrames(&st, frames)
		w, ok := want[key]
		if !ok {
			w = int32(len(want))
			want[key] = w
		}
		if g != w || added == ok {
			t.Fatalf("stack %d: id %d (new %v), want %d (new %v)", k, g, added, w, !ok)
		}
	}
}

// internFrames interns frames as a stack block of 8-byte IPs holds them.
func internFrames(st *stackTable, frames []parse.Frame) (int32, bool) {
	ips := make([]byte, 0, 8*len(frames))
	for _, f := range frames {
		ips = binary.LittleEndian.AppendUint64(ips, f.Addr)
	}
	return st.intern(frames, st.hashIPs(ips))
}
