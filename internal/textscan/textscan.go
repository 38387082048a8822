// Package textscan splits text into white-space separated tokens without
// allocating, for the text formats heapest reads and writes (legacy heap
// profiles, the statistics codec).
package textscan

import (
	"unicode"
	"unicode/utf8"
)

// Next returns the first white-space separated token of b (nil when none
// is left) and what follows it. White space is Unicode's, as
// strings.Fields has it.
func Next(b []byte) (tok, rest []byte) {
	start := -1
	for i := 0; i < len(b); {
		r, n := rune(b[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRune(b[i:])
		}
		space := unicode.IsSpace(r)
		switch {
		case start < 0 && !space:
			start = i
		case start >= 0 && space:
			return b[start:i], b[i:]
		}
		i += n
	}
	if start < 0 {
		return nil, nil
	}
	return b[start:], nil
}
