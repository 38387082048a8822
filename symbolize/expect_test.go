package symbolize

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/heapest/heapest/parse"
)

// TestExpect: a session told how many addresses to expect makes its index
// once, at the first address a file can name, and names every address as
// a session that was not told does.
func TestExpect(t *testing.T) {
	open, main := mainSessions(t, rand.New(rand.NewPCG(9, 10)))
	// Return addresses in main's page, which the executable mapping
	// holds whole (the page's first would be looked up in the mapping
	// before): main's first.
	const n = 2000
	addrs := make([]uint64, n)
	page := main &^ 0xfff
	for i := range addrs {
		addrs[i] = page + 1 + uint64(i)
	}
	m := main + 1
	addrs[m-page-1], addrs[0] = addrs[0], m
	told, untold := open(), open()
	told.Need(0, false) // no address: nothing made yet
	told.Expect(n)
	for i, a := range addrs {
		told.Need(a, false)
		untold.Need(a, false)
		if i == 0 {
			if got := len(told.s.callers.keys); got < 2*n {
				t.Fatalf("after the first address, the index has %d slots for %d expected", got, n)
			}
		}
	}
	if told.s.callers.n != n {
		t.Fatalf("%d addresses indexed, want %d", told.s.callers.n, n)
	}
	if want := len(newAddrIndex(n).keys); len(told.s.callers.keys) != want {
		t.Errorf("index of %d slots after %d addresses, want the %d made for them", len(told.s.callers.keys), n, want)
	}
	for _, s := range []*Session{told, untold} {
		if err := s.Resolve(); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range addrs {
		f := parse.Frame{Addr: a}
		if x, y := fmt.Sprint(told.Name(f, false)), fmt.Sprint(untold.Name(f, false)); x != y {
			t.Fatalf("%#x: named %s when told, %s when not", a, x, y)
		}
	}
	if name, _ := told.Name(parse.Frame{Addr: addrs[0]}, false); name != "main" {
		t.Errorf("%#x: named %q, want main", addrs[0], name)
	}
}

// TestNeedHandle: addresses registered once each by NeedHandle are named
// by NameHandle as Need and Name name them, as leaves and as callers;
// an address no file can name (outside every mapping, or 0) gets no
// handle, and no index is made.
func TestNeedHandle(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	open, main := mainSessions(t, rng)
	page := main &^ 0xfff
	addrs := []uint64{0, 0x10, main + 1}
	for i := 0; i < 500; i++ {
		addrs = append(addrs, page+uint64(rng.IntN(0x3000)))
	}
	slices.Sort(addrs)
	addrs = slices.Compact(addrs)
	byHandle, byAddr := open(), open()
	type told struct {
		h  uint32
		ok bool
	}
	handles := map[[2]uint64]told{}
	for _, leaf := range []bool{false, true} {
		for _, a := range addrs {
			h, ok := byHandle.NeedHandle(a, leaf)
			handles[[2]uint64{a, uint64(b2u(leaf))}] = told{h, ok}
			byAddr.Need(a, leaf)
			if (a == 0 || a == 0x10) && ok {
				t.Errorf("%#x: a handle for an address nothing can name", a)
			}
		}
	}
	if byHandle.s.callers.n != 0 || byHandle.s.leaves.n != 0 {
		t.Errorf("%d and %d addresses indexed, want none", byHandle.s.callers.n, byHandle.s.leaves.n)
	}
	for _, s := range []*Session{byHandle, byAddr} {
		if err := s.Resolve(); err != nil {
			t.Fatal(err)
		}
	}
	for k, h := range handles {
		f, leaf := parse.Frame{Addr: k[0]}, k[1] == 1
		want := fmt.Sprint(byAddr.Name(f, leaf))
		got := fmt.Sprint(byHandle.Name(f, leaf)) // no handle: as Name says
		if h.ok {
			got = fmt.Sprint(byHandle.NameHandle(h.h))
		}
		if got != want {
			t.Fatalf("%#x (leaf %v): named %s by handle, %s by address", k[0], leaf, got, want)
		}
	}
	if h := handles[[2]uint64{main + 1, 0}]; !h.ok {
		t.Errorf("main's return address: no handle")
	} else if name, _ := byHandle.NameHandle(h.h); name != "main" {
		t.Errorf("main's return address: named %q, want main", name)
	}
}

func b2u(b bool) uint {
	if b {
		return 1
	}
	return 0
}

// mainSessions builds a C program (PIE) and returns a function opening a
// session for a profile that maps it at a random base, with the address
// of its main there.
func mainSessions(t *testing.T, rng *rand.Rand) (open func() *Session, main uint64) {
	t.Helper()
	bin := build(t, "gcc", t.TempDir(), "prog", cProgram, "-O1", "-fPIE", "-pie")
	base := randomBase(rng, false)
	main = loadBias(t, bin, base) + elfSymbol(t, bin, named("main")).Value
	maps := []byte(mapsFor(t, bin, base))
	return func() *Session {
		s, err := Open(&parse.Profile{MapsText: maps}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, main
}
