package jemalloc

import (
	"strings"
	"testing"
)

// TestVersionWarning warns of jemalloc 5.2's sampler only.
func TestVersionWarning(t *testing.T) {
	for _, c := range []struct {
		version string
		warn    bool
	}{
		{"5.2.0", true}, {"5.2.1", true},
		{"5.3.0", false}, {"5.3.1", false}, {"5.1.0", false}, {"4.5.0", false}, {"6.2.1", false},
		{"", false}, {"5.2", false}, {"x.2.1", false},
	} {
		w := VersionWarning(c.version, "/lib/libjemalloc.so.2")
		if (w != "") != c.warn {
			t.Errorf("VersionWarning(%q) = %q, want a warning: %v", c.version, w, c.warn)
		}
		if c.warn && !strings.Contains(w, "/lib/libjemalloc.so.2 is jemalloc "+c.version) {
			t.Errorf("VersionWarning(%q) = %q: it should name the file and the version", c.version, w)
		}
	}
}
