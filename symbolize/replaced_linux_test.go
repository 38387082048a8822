//go:build linux

package symbolize

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heapest/heapest/parse"
)

// TestReplacedSince checks the warning for a program rebuilt at its path
// after the profile was written: its names come from the new build. A
// profile written after the file, or one whose maps name another device
// (another machine's), gets none.
func TestReplacedSince(t *testing.T) {
	dir := t.TempDir()
	bin := build(t, "gcc", dir, "prog", cProgram, "-O1")
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	dev := devName(uint64(fi.Sys().(*syscall.Stat_t).Dev))
	base := uint64(0x550000000000)
	prof := filepath.Join(dir, "prof.heap")
	if err := os.WriteFile(prof, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		dev   string
		age   time.Duration // of the profile against the file
		warns bool
	}{
		{"rebuilt", dev, time.Hour, true},
		{"profile-newer", dev, -time.Hour, false},
		{"other-device", "ab:cd", time.Hour, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			when := fi.ModTime().Add(-tc.age)
			if err := os.Chtimes(prof, when, when); err != nil {
				t.Fatal(err)
			}
			p := &testProfile{
				Source:   parse.Source{Path: prof},
				Records:  []parse.Record{{Stack: stackIn(t, bin, loadBias(t, bin, base), "leaf_fn", "main")}},
				MapsText: []byte(strings.ReplaceAll(mapsFor(t, bin, base), "fe:00", tc.dev)),
			}
			warnings, err := Symbolize(p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			said := strings.Contains(strings.Join(warnings, "\n"), bin+": written after the profile was")
			if said != tc.warns {
				t.Errorf("warned %v, want %v: %q", said, tc.warns, warnings)
			}
		})
	}
}

func TestDevName(t *testing.T) {
	for dev, want := range map[uint64]string{0xfe00: "fe:00", 0x0801: "08:01", 0x10302: "103:02", 0x2f: "00:2f",
		// glibc's makedev(0x1002, 0x101): a major above 0xfff.
		0x1000_0010_0201: "1002:101"} {
		if got := devName(dev); got != want {
			t.Errorf("devName(%#x) = %q, want %q", dev, got, want)
		}
	}
}
