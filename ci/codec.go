package ci

// The text form of Stats, which heapest writes into its pprof output (a
// string label per value) and reads back, so that re-reading a file
// reproduces its intervals exactly and files merge again. Writing and
// reading go through one list of the fields (Stats.field), side by side,
// so the two cannot drift apart; a test checks the list against the struct.

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"unsafe"

	"github.com/heapest/heapest/internal/textscan"
)

// numStatsFields is the number of fields of Stats; a test checks it.
const numStatsFields = 27

// firstOptionalField is the first field added after the format was
// fixed (Weighted, Spill, Excess: JFR's weights; LargeMissed,
// LargeMissedValue: comparisons of large allocations; Conditional: object
// counts of sampled sizes; Correlated: inputs whose samples may be
// correlated; Seen: the sampled allocations' own value): files written
// before lack them, and they read as zero, which is what those files
// meant (or, for the last five, what intervals assumed before them).
const firstOptionalField = 19

// field returns the name of field i of Stats, in struct order (the order
// they are written in), and a pointer to it through the one accessor its
// kind has: a count (non-negative, decimal), a number (the shortest text
// that parses back to the same bits) or a flag (0 or 1). The names are the
// Go field names: the format predates this code and must not change
// (heapest-pprof/1).
func (s *Stats) field(i int) (name string, count *int64, num *float64, flag *bool) {
	switch i {
	case 0:
		return "N", &s.N, nil, nil
	case 1:
		return "Estimate", nil, &s.Estimate, nil
	case 2:
		return "Var", nil, &s.Var, nil
	case 3:
		return "Samples", nil, &s.Samples, nil
	case 4:
		return "SamplesBound", nil, nil, &s.SamplesBound
	case 5:
		return "MaxWeight", nil, &s.MaxWeight, nil
	case 6:
		return "Mixed", nil, nil, &s.Mixed
	case 7:
		return "P", nil, &s.P, nil
	case 8:
		return "Unit", nil, &s.Unit, nil
	case 9:
		return "Rate", nil, &s.Rate, nil
	case 10:
		return "MixedRate", nil, nil, &s.MixedRate
	case 11:
		return "Offset", nil, &s.Offset, nil
	case 12:
		return "HasOffset", nil, nil, &s.HasOffset
	case 13:
		return "OpenStart", nil, nil, &s.OpenStart
	case 14:
		return "OpenEnd", nil, nil, &s.OpenEnd
	case 15:
		return "Bias", nil, &s.Bias, nil
	case 16:
		return "Complete", nil, nil, &s.Complete
	case 17:
		return "NoInterval", nil, nil, &s.NoInterval
	case 18:
		return "Approx", nil, nil, &s.Approx
	case 19:
		return "Weighted", nil, nil, &s.Weighted
	case 20:
		return "Spill", nil, &s.Spill, nil
	case 21:
		return "Excess", nil, &s.Excess, nil
	case 22:
		return "LargeMissed", nil, &s.LargeMissed, nil
	case 23:
		return "LargeMissedValue", nil, &s.LargeMissedValue, nil
	case 24:
		return "Conditional", nil, nil, &s.Conditional
	case 25:
		return "Correlated", nil, nil, &s.Correlated
	case 26:
		return "Seen", nil, &s.Seen, nil
	}
	panic("ci: Stats has no field " + strconv.Itoa(i))
}

// MarshalText writes every field of s as "Name=value", space-separated, in
// struct order: integers in decimal, floats in the shortest form that
// parses back to the same bits, booleans as 0 or 1. The fields added later
// (see firstOptionalField) are written only when they are not zero, so
// that statistics without them read the same as before. It never fails.
func (s Stats) MarshalText() ([]byte, error) {
	return s.AppendText(make([]byte, 0, 256))
}

// AppendText appends the text of MarshalText to b.
func (s Stats) AppendText(b []byte) ([]byte, error) {
	for i := range numStatsFields {
		name, count, num, flag := s.field(i)
		if i >= firstOptionalField && (flag != nil && !*flag || num != nil && math.Float64bits(*num) == 0) {
			continue
		}
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, name...)
		b = append(b, '=')
		switch {
		case count != nil:
			b = strconv.AppendInt(b, *count, 10)
		case num != nil:
			b = appendNumber(b, *num)
		case *flag:
			b = append(b, '1')
		default:
			b = append(b, '0')
		}
	}
	return b, nil
}

// appendNumber appends strconv.AppendFloat(b, x, 'g', -1, 64), the
// shortest text that parses back to x, byte for byte. Most numbers of a
// profile's statistics are zero or whole (counts, rates, sizes), and those
// are written here without the general algorithm, which took a third of
// writing a large pprof output.
func appendNumber(b []byte, x float64) []byte {
	if math.Float64bits(x) == 0 {
		return append(b, '0')
	}
	// Whole numbers below 2⁵³ are exact, and no shorter decimal lies
	// within half a unit of them: their digits, trailing zeros dropped,
	// are the shortest text.
	if x != math.Trunc(x) || math.Abs(x) >= 1<<53 || x == 0 {
		return strconv.AppendFloat(b, x, 'g', -1, 64)
	}
	if math.Abs(x) < 1e6 { // 'g' writes exponents below 6 without e
		return strconv.AppendInt(b, int64(x), 10)
	}
	return appendWholeExp(b, int64(x))
}

// appendWholeExp appends n, at least 10⁶ in magnitude, as 'g' does:
// d.ddde+XX, with the trailing zeros of its digits dropped.
func appendWholeExp(b []byte, n int64) []byte {
	if n < 0 {
		b = append(b, '-')
		n = -n
	}
	var buf [20]byte
	d := strconv.AppendInt(buf[:0], n, 10)
	exp := len(d) - 1
	for d[len(d)-1] == '0' {
		d = d[:len(d)-1]
	}
	b = append(b, d[0])
	if len(d) > 1 {
		b = append(b, '.')
		b = append(b, d[1:]...)
	}
	b = append(b, 'e', '+', byte('0'+exp/10), byte('0'+exp%10)) // exp is 6 to 15
	return b
}

// SameBits reports whether s and t are the same bytes in memory: then
// every field has the same bits (== takes -0 for 0), and the two write
// the same text. It may say no for the same statistics, if the padding
// between their fields differs, never yes for different ones. It is a
// comparison of 200 bytes; the field by field one cost a fifth of
// writing a text.
func (s *Stats) SameBits(t *Stats) bool { return s.Bits() == t.Bits() }

// Bits is the bit pattern of a Stats: a map key under which statistics
// SameBits calls the same meet.
type Bits [unsafe.Sizeof(Stats{})]byte

// Bits returns s's bit pattern.
func (s *Stats) Bits() Bits { return *(*Bits)(unsafe.Pointer(s)) }

// UnmarshalText reads what MarshalText wrote, fields in any order separated
// by white space. Every field must be present exactly once: a field read as
// zero because it is missing would silently change an interval. Only the
// fields added later (see firstOptionalField) may be missing. A field
// this Stats does not know is an error too (a file from a newer heapest).
// NaN is refused: no statistic heapest writes is NaN. On error s is left
// unchanged.
func (s *Stats) UnmarshalText(text []byte) error {
	var out Stats
	var seen uint32
	next := 0 // the field expected next: MarshalText's order is the fast path
	for rest := text; ; {
		var tok []byte
		tok, rest = textscan.Next(rest)
		if tok == nil {
			break
		}
		i, err := readStatsField(&out, tok, next)
		if err != nil {
			return err
		}
		if seen&(1<<i) != 0 {
			name, _, _, _ := out.field(i)
			return fmt.Errorf("statistics field %s given twice", name)
		}
		seen |= 1 << i
		next = i + 1
	}
	for i := range numStatsFields {
		if seen&(1<<i) == 0 && i < firstOptionalField {
			name, _, _, _ := out.field(i)
			return fmt.Errorf("statistics %.80q: field %s missing (every field is written; written by an older heapest?)",
				text, name)
		}
	}
	*s = out
	return nil
}

// readStatsField parses one "Name=value" token into s and returns the
// field's index. guess is the index most likely to match.
func readStatsField(s *Stats, tok []byte, guess int) (int, error) {
	eq := -1
	for i, c := range tok {
		if c == '=' {
			eq = i
			break
		}
	}
	if eq < 0 {
		return 0, fmt.Errorf("statistics field %.40q: expected Name=value", tok)
	}
	name, val := tok[:eq], tok[eq+1:]
	i := s.fieldIndex(name, guess)
	if i < 0 {
		return 0, fmt.Errorf("statistics field %.40q unknown (written by a newer heapest?)", name)
	}
	if err := s.set(i, val); err != nil {
		return 0, fmt.Errorf("statistics field %s=%.40q: %v", name, val, err)
	}
	return i, nil
}

// fieldIndex finds a field by name, trying guess first.
func (s *Stats) fieldIndex(name []byte, guess int) int {
	if guess < numStatsFields {
		if n, _, _, _ := s.field(guess); string(name) == n {
			return guess
		}
	}
	for i := range numStatsFields {
		if n, _, _, _ := s.field(i); string(name) == n {
			return i
		}
	}
	return -1
}

var (
	errNotNumber = errors.New("expected a number")
	errNotCount  = errors.New("expected a count")
	errNotFlag   = errors.New("expected 0 or 1")
)

// set parses val into field i of s.
func (s *Stats) set(i int, val []byte) error {
	_, count, num, flag := s.field(i)
	switch {
	case count != nil:
		x, err := strconv.ParseInt(string(val), 10, 64)
		if err != nil || x < 0 {
			return errNotCount
		}
		*count = x
	case num != nil:
		x, err := strconv.ParseFloat(string(val), 64)
		if err != nil || math.IsNaN(x) {
			return errNotNumber
		}
		*num = x
	default:
		if len(val) != 1 || (val[0] != '0' && val[0] != '1') {
			return errNotFlag
		}
		*flag = val[0] == '1'
	}
	return nil
}
