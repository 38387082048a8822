package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The expected lines are real jemalloc 5.3.0 output quoted in
// ../shared/reference/jemalloc.md §3.2 and ../shared/samples/jemalloc/README.md
// (R = 2^19 unless given), not values computed by this code.
func TestEncodeMatchesJemalloc(t *testing.T) {
	type part struct{ n, size uint64 }
	cases := []struct {
		name         string
		rate         uint64
		parts        []part
		wantC, wantS uint64
	}{
		{"20 x 48 B", 1 << 19, []part{{20, 48}}, 20, 960},
		{"35 x 1 MiB", 1 << 19, []part{{35, 1 << 20}}, 34, 37013180},
		{"6 x 256 KiB + 2 x 16 B", 1 << 19, []part{{6, 256 << 10}, {2, 16}}, 10, 741},
		{"8 B + 64 MiB", 1 << 19, []part{{1, 8}, {1, 64 << 20}}, 129, 132994},
		{"one 80 KiB", 1 << 19, []part{{1, 80 << 10}}, 1, 82338},
		{"one 5120 B", 1 << 19, []part{{1, 5120}}, 1, 5121},
		{"one 64 KiB at 2^20", 1 << 20, []part{{1, 64 << 10}}, 1, 65556},
		{"20 x 64 KiB at 2^20", 1 << 20, []part{{20, 64 << 10}}, 20, 1311120},
		{"nothing", 1 << 19, nil, 0, 0},
	}
	for _, c := range cases {
		var h htSums
		for _, p := range c.parts {
			h.add(p.n, p.size, c.rate)
		}
		gotC, gotS := h.encode(c.rate)
		if gotC != c.wantC || gotS != c.wantS {
			t.Errorf("%s: encoded %d: %d, jemalloc wrote %d: %d", c.name, gotC, gotS, c.wantC, c.wantS)
		}
	}
}

func TestSizeClasses(t *testing.T) {
	cl := sizeClasses(1 << 20)
	// The first classes past the quantum-spaced ones, from jemalloc's table.
	want := map[uint64]bool{8: true, 16: true, 128: true, 160: true, 192: true, 224: true,
		256: true, 320: true, 5120: true, 81920: true, 1 << 20: true}
	seen := map[uint64]bool{}
	for i, s := range cl {
		seen[s] = true
		if i > 0 && s <= cl[i-1] {
			t.Fatalf("not increasing at %d: %d after %d", i, s, cl[i-1])
		}
	}
	for s := range want {
		if !seen[s] {
			t.Errorf("size class %d missing", s)
		}
	}
	if seen[144] || seen[5000] {
		t.Errorf("non-classes present: %v", cl[:20])
	}
}

// TestGenerate checks a generated dump against the format's invariants
// (reference/jemalloc.md §1.2, §3.5): the requested number of distinct
// stacks and frames, thread lines under each stack, a raw-mode header equal
// to the sum of the stacks' t* lines, and a MAPPED_LIBRARIES section naming
// the binary.
func TestGenerate(t *testing.T) {
	// Any ELF file with defined function symbols will do; go test's own
	// binary has no symbol table, libc has dynamic symbols everywhere.
	bin := "/lib/x86_64-linux-gnu/libc.so.6"
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and no %s to point the stacks into: %v", bin, err)
		}
		t.Skipf("no %s to point the stacks into: %v", bin, err)
	}
	out := filepath.Join(t.TempDir(), "d.heap")
	o := options{binary: bin, stacks: 200, frames: 12, threads: 4, lg: 19, seed: 7}
	if err := generate(o, out); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	body, maps, ok := strings.Cut(string(data), "\nMAPPED_LIBRARIES:\n")
	if !ok || !strings.Contains(maps, bin) {
		t.Fatalf("no MAPPED_LIBRARIES section naming %s", bin)
	}
	lines := strings.Split(body, "\n")
	if lines[0] != "heap_v2/524288" {
		t.Fatalf("header %q", lines[0])
	}
	var header, sum [2]uint64
	stacks := map[string]bool{}
	inStack := false
	for i, l := range lines[1:] {
		switch {
		case strings.HasPrefix(l, "@ "):
			if n := len(strings.Fields(l)) - 1; n != o.frames {
				t.Fatalf("line %d: %d frames, want %d", i+2, n, o.frames)
			}
			stacks[l] = true
			inStack = true
		case strings.HasPrefix(l, "  t*: "):
			var c, b uint64
			if _, err := fmt.Sscanf(l, "  t*: %d: %d [0: 0]", &c, &b); err != nil {
				t.Fatalf("line %d: %q: %v", i+2, l, err)
			}
			if inStack {
				sum[0] += c
				sum[1] += b
			} else {
				header = [2]uint64{c, b}
			}
		}
	}
	if len(stacks) != o.stacks {
		t.Errorf("%d distinct stacks, want %d", len(stacks), o.stacks)
	}
	if header != sum || header[0] == 0 {
		t.Errorf("raw header %v, sum of stacks %v: must be equal", header, sum)
	}
}

// TestGenerateForeign checks the made-up program mode with -size: the dump
// has about the requested size, its only mapping names the -map-as path,
// and every frame lies inside that mapping's text (so a reader that could
// open the file would find it there).
func TestGenerateForeign(t *testing.T) {
	out := filepath.Join(t.TempDir(), "d.heap")
	const want = 200_000
	o := options{funcs: 50_000, middle: 5000, mapAs: "/nonexistent/server", size: want,
		stacks: 1, frames: 16, threads: 4, lg: 19, unbias: true, seed: 3}
	if err := generate(o, out); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(data); n < want*99/100 || n > want*101/100 {
		t.Errorf("%d bytes, want about %d", n, want)
	}
	body, maps, ok := strings.Cut(string(data), "\nMAPPED_LIBRARIES:\n")
	if !ok {
		t.Fatal("no MAPPED_LIBRARIES section")
	}
	var lo, hi uint64
	var perm, path string
	if _, err := fmt.Sscanf(maps, "%x-%x %s %s", &lo, &hi, &perm, new(string)); err != nil || perm != "r-xp" {
		t.Fatalf("first mapping %q: %v", strings.SplitN(maps, "\n", 2)[0], err)
	}
	fields := strings.Fields(strings.SplitN(maps, "\n", 2)[0])
	if path = fields[len(fields)-1]; path != o.mapAs {
		t.Errorf("mapping names %q, want %q", path, o.mapAs)
	}
	frames := 0
	for _, l := range strings.Split(body, "\n") {
		if !strings.HasPrefix(l, "@ ") {
			continue
		}
		for _, f := range strings.Fields(l)[1:] {
			var a uint64
			if _, err := fmt.Sscanf(f, "0x%x", &a); err != nil || a < lo || a >= hi {
				t.Fatalf("frame %s outside the text mapping %#x-%#x", f, lo, hi)
			}
			frames++
		}
	}
	if frames == 0 {
		t.Fatal("no stacks")
	}
}

// TestFleetMembersDistinct checks that fleet members, including ones 4096
// apart and ones past 4096 (a fleet of 20,000), map the allocator library
// at distinct addresses below the top of user space, so that no two of them
// look like one process, while their program mappings stay those of one
// build.
func TestFleetMembersDistinct(t *testing.T) {
	lib := "/lib/x86_64-linux-gnu/libc.so.6" // has malloc and friends
	if _, err := os.Stat(lib); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and no %s: %v", lib, err)
		}
		t.Skipf("no %s: %v", lib, err)
	}
	dir := t.TempDir()
	libMaps := map[string]uint64{}
	var progMaps string
	for _, m := range []uint64{1, 2, 4097, 8193, 20000, maxMembers - 1} {
		out := filepath.Join(dir, fmt.Sprintf("jeprof.%d.0.f.heap", m))
		o := options{binary: lib, lib: lib, stacks: 50, frames: 8, threads: 4, lg: 19, seed: 7, member: m}
		if err := generate(o, out); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		_, maps, ok := strings.Cut(string(data), "\nMAPPED_LIBRARIES:\n")
		if !ok {
			t.Fatalf("member %d: no MAPPED_LIBRARIES section", m)
		}
		lines := strings.Split(strings.TrimSpace(maps), "\n")
		// The program's segments come first, then the library's, then [stack].
		var prog, libs []string
		for _, l := range lines[:len(lines)-1] {
			var lo uint64
			if _, err := fmt.Sscanf(l, "%x-", &lo); err != nil {
				t.Fatalf("member %d: mapping %q: %v", m, l, err)
			}
			if lo >= 0x7f0000000000 {
				libs = append(libs, l)
				if lo >= 0x7fff00000000 {
					t.Errorf("member %d: library at %#x, too close to the top of user space", m, lo)
				}
			} else {
				prog = append(prog, l)
			}
		}
		if len(libs) == 0 {
			t.Fatalf("member %d: no library mapping in %q", m, maps)
		}
		if p := strings.Join(prog, "\n"); progMaps == "" {
			progMaps = p
		} else if p != progMaps {
			t.Errorf("member %d: program mapped as\n%s\nnot as member 1's\n%s", m, p, progMaps)
		}
		key := strings.Join(libs, "\n")
		if other, dup := libMaps[key]; dup {
			t.Errorf("members %d and %d map the library at the same addresses", other, m)
		}
		libMaps[key] = m
	}
}
