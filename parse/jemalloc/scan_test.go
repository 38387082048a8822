package jemalloc

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"
)

// refHexAddr is scanStack's specification for one field, written the slow, obvious way.
func refHexAddr(b []byte, i int) (uint64, int, bool) {
	end := i
	for end < len(b) && b[end] != ' ' && b[end] != '\t' {
		end++
	}
	f := b[i:end]
	if len(f) < 3 || len(f) > 18 || !bytes.HasPrefix(f, []byte("0x")) {
		return 0, end, false
	}
	for _, c := range f[2:] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return 0, end, false
		}
	}
	a, err := strconv.ParseUint(string(f[2:]), 16, 64)
	return a, end, err == nil
}

func TestScanHexAddr(t *testing.T) {
	check := func(b []byte) {
		t.Helper()
		a, end, ok := scanHexAddr(b)
		ra, rend, rok := refHexAddr(b, 0)
		if ok != rok || end != rend || ok && a != ra {
			t.Fatalf("scanStack(%q) = %#x, %d, %v; want %#x, %d, %v", b, a, end, ok, ra, rend, rok)
		}
	}
	for _, s := range []string{
		"0x1", "0x", "0x0", "0x7f709aca2630", "0x7F709ACA2630 0x1", "0xffffffffffffffff",
		"0x1ffffffffffffffff", "0x0000000000000000", "0x00000000000000001", "0x12345678",
		"0x123456789", "0x12345678 ", "0x1234567g", "0x12345678\t0x2", "0xabcdefABCDEF0123",
		"0x:", "0x/", "0x@", "0xG", "0x`", "0x\xb0\xb1", "0x1\xb1234567", "1234", "0xx1",
	} {
		check([]byte(s))
	}
	alphabet := []byte("0123456789abcdefABCDEFx:/@`gG \t\xb0\xc6")
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		b := []byte("0x")
		for n := r.IntN(24); n > 0; n-- {
			if r.IntN(4) == 0 {
				b = append(b, alphabet[r.IntN(len(alphabet))])
			} else {
				b = append(b, "0123456789abcdef"[r.IntN(16)])
			}
		}
		check(b)
	}
}

// scanHexAddr reads the one address field that leads b with scanStack.
func scanHexAddr(b []byte) (uint64, int, bool) {
	end := fieldEnd(b, 0)
	frames, _, bad, badEnd := scanStack(b[:end], nil, 0)
	if bad >= 0 {
		return 0, badEnd, false
	}
	return frames[0].Addr, end, true
}

// TestCountsFast: the fast path takes jemalloc's own layout and gives what
// parseCounts gives; whatever it refuses parseCounts still judges.
func TestCountsFast(t *testing.T) {
	for _, s := range []string{" 1: 64 [0: 0]", " 0: 0 [0: 0]", " 42: 336 [5: 240]",
		" 9999999999999999999: 9999999999999999999 [1: 1]"} {
		c, ok := countsFast([]byte(s))
		want, _, err := parseCounts([]byte(s), false)
		if !ok || err != nil || c != want {
			t.Errorf("countsFast(%q) = %v, %v; parseCounts: %v, %v", s, c, ok, want, err)
		}
	}
	alphabet := []byte("0123456789: [] x\t")
	r := rand.New(rand.NewPCG(3, 4))
	for range 300000 {
		b := []byte(" 1: 2 [3: 4]")
		for n := r.IntN(3); n > 0; n-- { // mutate a canonical line
			b[r.IntN(len(b))] = alphabet[r.IntN(len(alphabet))]
		}
		if r.IntN(3) == 0 {
			b = append(b, alphabet[r.IntN(len(alphabet))])
		}
		c, ok := countsFast(b)
		want, _, err := parseCounts(b, false)
		if ok && (err != nil || c != want) {
			t.Fatalf("countsFast(%q) = %v; parseCounts: %v, %v", b, c, want, err)
		}
		if !ok && err == nil && bytes.Equal(b, []byte(" "+strconv.FormatUint(want.curObjs, 10)+": "+
			strconv.FormatUint(want.curBytes, 10)+" ["+strconv.FormatUint(want.accObjs, 10)+": "+strconv.FormatUint(want.accBytes, 10)+"]")) {
			t.Fatalf("countsFast refused the canonical %q", b)
		}
	}
}

// TestDupCheckFirst compares the bucketed search of the log with a map.
func TestDupCheckFirst(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 2, 10, 1000, 50000, 3*logChunk + 7} {
		for _, distinct := range []int{n + 1, n, n / 2} {
			var d dupCheck
			d.init(false, 0)
			seen := map[uint64]int{}
			wantLine, wantPrev := 0, 0
			for line := 1; line <= n; line++ {
				h := r.Uint64()
				if distinct < n && distinct > 0 {
					h = uint64(r.IntN(distinct)) * 0x9e3779b97f4a7c15 // repeats
				}
				d.add(h, line)
				if prev, ok := seen[h]; ok && wantLine == 0 {
					wantLine, wantPrev = line, prev
				} else if !ok {
					seen[h] = line
				}
			}
			line, prev, ok := d.first()
			if ok != (wantLine > 0) || line != wantLine || prev != wantPrev {
				t.Errorf("n=%d distinct=%d: first() = %d, %d, %v; want %d, %d", n, distinct, line, prev, ok, wantLine, wantPrev)
			}
		}
	}
	// The one repeat is the last stack of the fourth chunk, of the first.
	var d dupCheck
	d.init(false, 100)
	for line := 1; line <= 4*logChunk; line++ {
		h := uint64(line) * 0x9e3779b97f4a7c15
		if line == 4*logChunk {
			h = 0x9e3779b97f4a7c15
		}
		d.add(h, line)
	}
	if line, prev, ok := d.first(); !ok || line != 4*logChunk || prev != 1 || len(d.log) != 4 {
		t.Errorf("across chunks: first() = %d, %d, %v with %d chunks; want %d, 1, true with 4", line, prev, ok, len(d.log), 4*logChunk)
	}
}
