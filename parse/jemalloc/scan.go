package jemalloc

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strconv"
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

// scanHexAddr parses "0x" and 1 to 16 hex digits at b[i:], up to the next
// blank or the end. It returns the address and where the field ends.
// Digits are read eight at a time while a whole word of the line is left
// (SWAR: all eight bytes tested and converted at once, with no table and
// no branch), then one at a time.
func scanHexAddr(b []byte, i int) (uint64, int, bool) {
	n := len(b)
	if i+2 < n && b[i] == '0' && b[i+1] == 'x' {
		var a uint64
		j := i + 2
		more := true
		for more && j+8 <= n {
			x := binary.LittleEndian.Uint64(b[j:]) // the first byte is x's low byte
			// The high bit of each byte of valid is set for a hex digit:
			// '0'-'9', or 'a'-'f' once lower-cased by | 0x20. The
			// comparisons hold for bytes below 0x80; "&^ x" drops the rest.
			lower := x | 0x20*ones
			digit := atLeast(x, '0') &^ atLeast(x, '9'+1)
			letter := atLeast(lower, 'a') &^ atLeast(lower, 'f'+1)
			valid := (digit | letter) &^ x
			k := bits.TrailingZeros64(^valid&high) >> 3 // digits in x
			// A digit's value is its low nibble, plus 9 for a letter
			// (bit 6 set). The first digit is the most significant:
			// reverse the bytes, drop those after the k digits, and
			// pack the nibbles pairwise.
			v := x&(0x0f*ones) + (x>>6&ones)*9
			v = bits.ReverseBytes64(v) >> (64 - 8*k)
			v = (v | v>>4) & 0x00ff00ff00ff00ff
			v = (v | v>>8) & 0x0000ffff0000ffff
			v = (v | v>>16) & 0x00000000ffffffff
			a = a<<(4*k) | v
			j += k
			more = k == 8
		}
		for ; more && j < n; j++ {
			d := hexValue[b[j]]
			if d > 15 {
				break
			}
			a = a<<4 | uint64(d)
		}
		if d := j - i - 2; d >= 1 && d <= 16 && (j == n || b[j] == ' ' || b[j] == '\t') {
			return a, j, true
		}
	}
	end := i
	for end < n && b[end] != ' ' && b[end] != '\t' {
		end++
	}
	return 0, end, false
}

const ones, high = 0x0101010101010101, 0x8080808080808080

// atLeast sets the high bit of each byte of y that is at least k (≤ 0x80),
// for bytes below 0x80: or-ing in the high bit keeps the subtraction from
// borrowing across bytes.
func atLeast(y, k uint64) uint64 { return ((y | high) - k*ones) & high }

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
	t := l[i:]
	if len(t) < 3 || t[0] != 't' {
		return nil, false, nil, false
	}
	colon := bytes.IndexByte(t, ':')
	if colon < 2 {
		return nil, false, nil, false
	}
	uid = t[1:colon]
	star = len(uid) == 1 && uid[0] == '*'
	if !star && !isUint(uid) {
		return nil, false, nil, false
	}
	return uid, star, t[colon+1:], true
}

// isUint reports whether b is an unsigned decimal that fits in 64 bits.
func isUint(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return false
		}
		v = v*10 + d
	}
	return true
}

// parseCounts parses " a: b [c: d]" and, if allowName, a trailing name.
func parseCounts(s []byte, allowName bool) (jeCounts, string, error) {
	var vals [4]uint64
	i := 0
	for k := range countFields {
		i = skipBlanks(s, i)
		start := i
		var v uint64
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			d := uint64(s[i] - '0')
			if v > (math.MaxUint64-d)/10 {
				return jeCounts{}, "", fmt.Errorf("%s: %q: value out of range", countFields[k].what, clip(numberAt(s, start)))
			}
			v = v*10 + d
			i++
		}
		if i == start {
			return jeCounts{}, "", fmt.Errorf("expected %s (an unsigned integer), got %q", countFields[k].what, clip(s[start:]))
		}
		vals[k] = v
		i = skipBlanks(s, i)
		if i == len(s) || s[i] != countFields[k].sep {
			return jeCounts{}, "", fmt.Errorf("expected '%c' after %s", countFields[k].sep, countFields[k].what)
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
	if (c.curObjs == 0) != (c.curBytes == 0) || (c.accObjs == 0) != (c.accBytes == 0) {
		return c, "", fmt.Errorf("objects and bytes must be both zero or both non-zero")
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

// numberAt is the run of digits at s[i:], for error messages.
func numberAt(s []byte, i int) []byte {
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	return s[i:j]
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
