package jemalloc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"

	"github.com/heapest/heapest/parse"
)

// The scanners below work on a line's bytes in place: no string is made on
// the path every stack takes.

// mixAddr folds a frame address into a stack's 64-bit hash (a
// multiply–rotate mix in the manner of xxHash's rounds): duplicate stacks
// are found by hash, without keeping each stack's text.
func mixAddr(h, a uint64) uint64 {
	h ^= a * 0xc2b2ae3d27d4eb4f
	h = bits.RotateLeft64(h, 31) * 0x9e3779b185ebca87
	return h ^ h>>29
}

// scanStack reads the addresses of an "@" line (s: what follows the '@')
// into frames, reused and grown as needed, writing only their Addr, and
// folds them into the hash h. For a field that is not a 0x-prefixed hex
// address of 1 to 16 digits it returns the field's bounds, else bad < 0.
// This loop is where a dump's time goes.
func scanStack(s []byte, frames []parse.Frame, h uint64) (out []parse.Frame, hash uint64, bad, badEnd int) {
	frames = frames[:cap(frames)]
	nf, n := 0, len(s)
	for i := 0; i < n; {
		if c := s[i]; c == ' ' || c == '\t' {
			i++
			continue
		}
		if i+2 >= n || s[i] != '0' || s[i+1] != 'x' {
			return frames[:nf], h, i, fieldEnd(s, i)
		}
		a, j := hexRun(s, i+2)
		if d := j - i - 2; d < 1 || d > 16 || j < n && s[j] != ' ' && s[j] != '\t' {
			return frames[:nf], h, i, fieldEnd(s, i)
		}
		if nf == len(frames) {
			frames = append(frames, parse.Frame{})
			frames = frames[:cap(frames)]
		}
		frames[nf].Addr = a // Func stays empty: no pointer written
		nf++
		h = mixAddr(h, a)
		i = j
	}
	return frames[:nf], h, -1, -1
}

const ones, high = 0x0101010101010101, 0x8080808080808080

// nonHex sets the high bit of each of the 8 bytes of x that is not a hex
// digit, testing all bytes at once. The first byte is x's low byte, so
// TrailingZeros64(nonHex(x))/8 counts the digits that lead x.
func nonHex(x uint64) uint64 {
	// The high bit of each byte of valid is set for '0'-'9', or 'a'-'f'
	// once lower-cased by | 0x20. The comparisons hold for bytes below
	// 0x80; "&^ x" drops the others.
	lower := x | 0x20*ones
	valid := (atLeast(x, '0')&^atLeast(x, '9'+1) | atLeast(lower, 'a')&^atLeast(lower, 'f'+1)) &^ x
	return ^valid & high
}

// hexWordValue is the value of the k (1 to 8) hex digits that lead x,
// converted all at once.
func hexWordValue(x uint64, k uint) uint64 {
	// A digit's value is its low nibble, plus 9 for a letter (bit 6 set).
	// Shifting the k digits to the top makes the bytes below them leading
	// zeros; then each step joins neighbouring fields (the first one the
	// more significant) into one twice as wide, by a multiply.
	v := (x&(0x0f*ones) + (x>>6&ones)*9) << ((64 - 8*k) & 63)
	v = (v * (1 + 16<<8) >> 8) & 0x00ff00ff00ff00ff
	v = (v * (1 + 256<<16) >> 16) & 0x0000ffff0000ffff
	return v * (1 + 65536<<32) >> 32
}

// atLeast sets the high bit of each byte of y that is at least k (≤ 0x80),
// for bytes below 0x80: or-ing in the high bit keeps the subtraction from
// borrowing across bytes.
func atLeast(y, k uint64) uint64 { return ((y | high) - k*ones) & high }

// hexRun reads the run of hex digits at s[j:]: its value (meaningful for
// up to 16 digits) and where it ends. Digits are read eight at a time
// while a whole word of s is left, then one at a time.
func hexRun(s []byte, j int) (uint64, int) {
	var a uint64
	for j+8 <= len(s) {
		x := binary.LittleEndian.Uint64(s[j : j+8])
		k := uint(bits.TrailingZeros64(nonHex(x))) >> 3 // digits in x
		if k < 8 {
			if k > 0 {
				a = a<<(4*k) | hexWordValue(x, k)
			}
			return a, j + int(k)
		}
		a = a<<32 | hexWordValue(x, 8)
		j += 8
	}
	for ; j < len(s); j++ {
		d := hexValue[s[j]]
		if d > 15 {
			break
		}
		a = a<<4 | uint64(d)
	}
	return a, j
}

// fieldEnd is where the blank-separated field at s[i:] ends.
func fieldEnd(s []byte, i int) int {
	for i < len(s) && s[i] != ' ' && s[i] != '\t' {
		i++
	}
	return i
}

// hexValue maps a byte to its hex digit value, or 0xff.
var hexValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i := byte(0); i < 10; i++ {
		t['0'+i] = i
	}
	for i := byte(0); i < 6; i++ {
		t['a'+i], t['A'+i] = 10+i, 10+i
	}
	return t
}()

// threadPrefix splits "  tX: rest" into X and rest; star reports X == "*",
// else X is an unsigned decimal.
func threadPrefix(l []byte) (uid []byte, star bool, rest []byte, ok bool) {
	i := skipBlanks(l, 0)
	if len(l)-i < 3 || l[i] != 't' {
		return nil, false, nil, false
	}
	i++
	j := i + 1
	if l[i] != '*' {
		var over bool
		if _, j, over = scanUint(l, i); j == i || over {
			return nil, false, nil, false
		}
	}
	if j == len(l) || l[j] != ':' {
		return nil, false, nil, false
	}
	return l[i:j], l[i] == '*', l[j+1:], true
}

// scanUint reads the decimal digits at s[i:]: their value, where they end,
// and whether the value is beyond 64 bits.
func scanUint(s []byte, i int) (v uint64, end int, over bool) {
	start := i
	for ; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 {
			break
		}
		v = v*10 + uint64(d)
	}
	if i-start > 19 { // only 20 digits and more can wrap: redo with checks
		v = 0
		for _, c := range s[start:i] {
			d := uint64(c - '0')
			if v > (math.MaxUint64-d)/10 {
				return 0, i, true
			}
			v = v*10 + d
		}
	}
	return v, i, false
}

// countsFast parses counts as jemalloc writes them, " a: b [c: d]" with
// single blanks, nothing after and no number beyond 19 digits; anything
// else it leaves to parseCounts (ok false), which accepts more and says
// what is wrong.
func countsFast(s []byte) (c jeCounts, ok bool) {
	if len(s) == 0 || s[0] != ' ' {
		return c, false
	}
	i := 1
	if c.curObjs, i, ok = fastNum(s, i, ':', ' '); !ok {
		return c, false
	}
	if c.curBytes, i, ok = fastNum(s, i, ' ', '['); !ok {
		return c, false
	}
	if c.accObjs, i, ok = fastNum(s, i, ':', ' '); !ok {
		return c, false
	}
	if c.accBytes, i, ok = fastNum(s, i, ']', 0); !ok || i != len(s) {
		return c, false
	}
	return c, c.check() == nil
}

// check says what makes counts impossible: objects without bytes or bytes
// without objects, or more objects than bytes (every object takes a byte
// at least, raw or unbiased).
func (c jeCounts) check() error {
	switch {
	case (c.curObjs == 0) != (c.curBytes == 0) || (c.accObjs == 0) != (c.accBytes == 0):
		return errors.New("objects and bytes must be both zero or both non-zero")
	case c.curBytes < c.curObjs || c.accBytes < c.accObjs:
		return errors.New("more objects than bytes")
	}
	return nil
}

// fastNum reads 1 to 19 digits at s[i:] followed by sep1 and sep2 (sep2
// 0: by sep1 alone): the value and the index after the separators.
func fastNum(s []byte, i int, sep1, sep2 byte) (uint64, int, bool) {
	start := i
	var v uint64
	for ; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 {
			break
		}
		v = v*10 + uint64(d)
	}
	if n := i - start; n == 0 || n > 19 || i >= len(s) || s[i] != sep1 {
		return 0, 0, false
	}
	if sep2 == 0 {
		return v, i + 1, true
	}
	if i+1 >= len(s) || s[i+1] != sep2 {
		return 0, 0, false
	}
	return v, i + 2, true
}

// parseCounts parses " a: b [c: d]" and, if allowName, a trailing name.
func parseCounts(s []byte, allowName bool) (jeCounts, string, error) {
	var vals [4]uint64
	i := 0
	for k := range countFields {
		f := &countFields[k]
		i = skipBlanks(s, i)
		start := i
		v, end, over := scanUint(s, i)
		if over {
			return jeCounts{}, "", fmt.Errorf("%s: %q: value out of range", f.what, clip(s[start:end]))
		}
		if end == start {
			return jeCounts{}, "", fmt.Errorf("expected %s (an unsigned integer), got %q", f.what, clip(s[start:]))
		}
		vals[k] = v
		i = skipBlanks(s, end)
		if i == len(s) || s[i] != f.sep {
			return jeCounts{}, "", fmt.Errorf("expected '%c' after %s", f.sep, f.what)
		}
		i++
	}
	c := jeCounts{vals[0], vals[1], vals[2], vals[3]}
	name := ""
	if rest := s[i:]; len(rest) > 0 {
		if !allowName || (rest[0] != ' ' && rest[0] != '\t') {
			return c, "", fmt.Errorf("unexpected text %q after the counts", clip(rest))
		}
		name = string(bytes.TrimSpace(rest))
	}
	if err := c.check(); err != nil {
		return c, "", err
	}
	return c, name, nil
}

// countFields names the four numbers of a counts line and the separator
// that follows each.
var countFields = [4]struct {
	what string
	sep  byte
}{
	{"current objects", ':'},
	{"current bytes", '['},
	{"accumulated objects", ':'},
	{"accumulated bytes", ']'},
}

func skipBlanks(s []byte, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// addCounts sums two quadruples, failing on overflow; the sum wraps then.
func addCounts(a, b jeCounts) (jeCounts, error) {
	var r jeCounts
	var c0, c1, c2, c3 uint64
	r.curObjs, c0 = bits.Add64(a.curObjs, b.curObjs, 0)
	r.curBytes, c1 = bits.Add64(a.curBytes, b.curBytes, 0)
	r.accObjs, c2 = bits.Add64(a.accObjs, b.accObjs, 0)
	r.accBytes, c3 = bits.Add64(a.accBytes, b.accBytes, 0)
	if c0|c1|c2|c3 != 0 {
		return r, fmt.Errorf("the stacks' counts overflow uint64 when summed")
	}
	return r, nil
}

func parseUint(b []byte) (uint64, error) {
	v, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok {
			return 0, fmt.Errorf("%q: %v", clip(b), ne.Err)
		}
		return 0, err
	}
	return v, nil
}

// clip shortens b for error messages.
func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}
