package textscan

import (
	"strings"
	"testing"
)

// Next splits like strings.Fields, token by token.
func TestNext(t *testing.T) {
	for _, s := range []string{"", "  ", "a", " a b\tc\n", "x\u00a0y\u2003 z", "tail "} {
		var got []string
		for rest := []byte(s); ; {
			var tok []byte
			if tok, rest = Next(rest); tok == nil {
				break
			}
			got = append(got, string(tok))
		}
		if want := strings.Fields(s); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%q: %q, want %q", s, got, want)
		}
	}
}
