package jemalloc

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"
)

// refHexAddr is scanHexAddr's specification, written the slow, obvious way.
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
		a, end, ok := scanHexAddr(b, 0)
		ra, rend, rok := refHexAddr(b, 0)
		if ok != rok || end != rend || ok && a != ra {
			t.Fatalf("scanHexAddr(%q) = %#x, %d, %v; want %#x, %d, %v", b, a, end, ok, ra, rend, rok)
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
