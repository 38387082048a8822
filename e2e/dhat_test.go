package e2e

import (
	"path/filepath"
	"testing"
)

// TestDHAT runs a real program under Valgrind's DHAT, which records every
// allocation, and reads its profile: each site's bytes and blocks, at the
// peak and over the run, are the program's own, exactly, and the
// allocator's frames (Valgrind's malloc and calloc) are not rows.
func TestDHAT(t *testing.T) {
	gcc, valgrind := needTool(t, "gcc"), needTool(t, "valgrind")
	dir := t.TempDir()
	bin := filepath.Join(dir, "c-sites")
	run(t, nil, gcc, "-O0", "-g", "-o", bin, filepath.Join(repoRoot(t), "parse", "dhat", "testdata", "c-sites.c"))
	out := filepath.Join(dir, "c-sites.dhat.json")
	run(t, nil, valgrind, "--tool=dhat", "--dhat-out-file="+out, bin)
	heapest := heapestBinary(t)
	for _, tt := range []struct {
		value string
		want  map[string]Row // estimate and samples (blocks)
	}{
		// site_b frees each block at once: none is live at the peak.
		{"inuse_space", map[string]Row{"site_a": {Estimate: 48000, Samples: 1000}, "site_c": {Estimate: 219900, Samples: 200}}},
		{"alloc_space", map[string]Row{"site_a": {Estimate: 48000, Samples: 1000}, "site_b": {Estimate: 2e6, Samples: 500}, "site_c": {Estimate: 219900, Samples: 200}}},
	} {
		var rep Report
		if err := heapestReport(heapest, out, tt.value, &rep); err != nil {
			t.Fatal(err)
		}
		rows := rowsByKey(rep)
		for fn, want := range tt.want {
			got := rows[fn]
			if got.Estimate != want.Estimate || got.Samples != want.Samples || got.Lo != got.Hi {
				t.Errorf("%s %s: %.0f B [%.0f, %.0f] in %v blocks, want exactly %.0f in %v", tt.value, fn, got.Estimate, got.Lo, got.Hi, got.Samples, want.Estimate, want.Samples)
			}
		}
		for _, alloc := range []string{"malloc", "calloc"} {
			if _, ok := rows[alloc]; ok {
				t.Errorf("%s: the allocator's %s is a row", tt.value, alloc)
			}
		}
	}
}
