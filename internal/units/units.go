// Package units reads the sizes and percentages heapest's flags and
// budget files take: "50MiB", "10MB", "2GiB", "4096", "10%".
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// sizeUnits are the suffixes a size may carry, longest first so that
// "MiB" is not read as "B". Binary units are powers of 1024, SI units
// powers of 1000, as everywhere heapest prints sizes (binary).
var sizeUnits = []struct {
	name string
	mult float64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40}, {"pib", 1 << 50},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12}, {"pb", 1e15},
	{"b", 1},
}

// ParseSize reads a byte count with an optional unit (B, KiB, MiB, GiB,
// TiB, PiB, or KB, MB, GB, TB, PB; any case, a blank allowed before it).
// hasUnit says whether a unit was given. The count must be finite and
// ≥ 0.
func ParseSize(s string) (bytes float64, hasUnit bool, err error) {
	t := strings.TrimSpace(s)
	num, mult := t, 1.0
	lower := strings.ToLower(t)
	for _, u := range sizeUnits {
		if strings.HasSuffix(lower, u.name) {
			num, mult, hasUnit = strings.TrimSpace(t[:len(t)-len(u.name)]), u.mult, true
			break
		}
	}
	x, perr := strconv.ParseFloat(num, 64)
	switch {
	case perr != nil && strings.ContainsAny(num[len(num)-min(len(num), 1):], "kKmMgGtTpP"):
		return 0, false, fmt.Errorf("size %q: write the unit in full, KiB (1024) or KB (1000)", s)
	case perr != nil || num == "":
		return 0, false, fmt.Errorf("size %q: want a number of bytes with an optional unit, such as 4096, 512KiB or 10MB", s)
	case !(x >= 0) || math.IsInf(x, 0):
		return 0, false, fmt.Errorf("size %q: want a finite size ≥ 0", s)
	}
	return x * mult, hasUnit, nil
}

// countUnits are the suffixes a count may carry, as Format writes them.
var countUnits = map[byte]float64{'k': 1e3, 'm': 1e6, 'g': 1e9, 't': 1e12, 'p': 1e15}

// ParseCount reads a count of objects with an optional SI suffix, as
// Format writes counts: "2000", "2k", "1.5M" (any case). hasUnit says
// whether a suffix was given. The count must be finite and ≥ 0.
func ParseCount(s string) (n float64, hasUnit bool, err error) {
	t := strings.TrimSpace(s)
	num, mult := t, 1.0
	if t != "" {
		if m, ok := countUnits[strings.ToLower(t[len(t)-1:])[0]]; ok {
			num, mult, hasUnit = strings.TrimSpace(t[:len(t)-1]), m, true
		}
	}
	x, perr := strconv.ParseFloat(num, 64)
	if perr != nil || num == "" || !(x >= 0) || math.IsInf(x, 0) {
		return 0, false, fmt.Errorf("count %q: want a number of objects ≥ 0 with an optional k, M, G, T or P, such as 2000 or 2k", s)
	}
	return x * mult, hasUnit, nil
}

// ParsePercent reads a percentage written with its sign, "10%" or
// "2.5 %", and returns it as a fraction (0.1). A bare number is refused:
// "10" could mean 10% or 1000%.
func ParsePercent(s string) (float64, error) {
	t := strings.TrimSpace(s)
	if !strings.HasSuffix(t, "%") {
		return 0, fmt.Errorf("%q: write a percentage with its sign, such as 10%%", s)
	}
	x, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(t, "%")), 64)
	if err != nil || !(x >= 0) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%q: want a percentage ≥ 0, such as 10%%", s)
	}
	return x / 100, nil
}

// Format writes x with three significant digits: in binary units for
// bytes (4.00MiB), with SI suffixes for counts (1.50M). Whole numbers
// below the first unit print in full.
func Format(x float64, bytes bool) string {
	if math.IsInf(x, 1) {
		return "inf"
	}
	names, base := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}, 1024.0
	if !bytes {
		names, base = []string{"", "k", "M", "G", "T", "P", "E"}, 1000
	}
	i := 0
	for math.Abs(x) >= base && i < len(names)-1 {
		x /= base
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f%s", x, names[0])
	}
	return sig3(x) + names[i]
}

// sig3 prints x with three significant digits.
func sig3(x float64) string {
	switch a := math.Abs(x); {
	case a >= 100:
		return fmt.Sprintf("%.0f", x)
	case a >= 10:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.2f", x)
}

// Exact writes n bytes in the largest binary unit that divides it
// exactly (512 MiB, 3 KiB), or in bytes: for limits quoted in messages,
// which must not round.
func Exact(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
