package e2e

import (
	"path/filepath"
	"testing"
)

// TestAllocatorNamedFunctions runs a program whose own allocating
// functions are named like an allocator's internals
// (testdata/realdata/jemalloc/allocnames.c: prof_record_event, arena_grow,
// malloc_buffer, tc_like_user), built against jemalloc as a shared
// library and linked statically, every allocation sampled: each function
// is its own row with the program's bytes, and no allocator frame is one.
// The allocator's frames end at its entry point (malloc, or the
// je_malloc_default a static malloc tail-calls), not at the last frame
// named like one.
func TestAllocatorNamedFunctions(t *testing.T) {
	gcc, _ := needJemalloc(t)
	static := "/usr/lib/x86_64-linux-gnu/libjemalloc_pic.a"
	needFile(t, static)
	heapest := heapestBinary(t)
	dir := t.TempDir()
	src := filepath.Join(repoRoot(t), "testdata", "realdata", "jemalloc", "allocnames.c")
	flags := []string{"-O1", "-g", "-fno-omit-frame-pointer", "-fno-optimize-sibling-calls"}
	builds := map[string][]string{
		"shared": {src, "-ljemalloc"},
		"static": {src, static, "-lpthread", "-ldl", "-lm", "-lstdc++"},
	}
	const block = 4096
	want := map[string]float64{
		"prof_record_event": 400 * block, "arena_grow": 300 * block, "malloc_buffer": 200 * block,
		"tc_like_user": 100 * block, "plain_site": 50 * block,
	}
	for name, args := range builds {
		t.Run(name, func(t *testing.T) {
			prog := filepath.Join(dir, name)
			run(t, nil, gcc, append(append(append([]string{}, flags...), "-o", prog), args...)...)
			dump := prog + ".heap"
			run(t, []string{"MALLOC_CONF=prof:true,lg_prof_sample:0"}, prog, dump)
			rows := map[string]Row{}
			for _, r := range parseReport(t, run(t, nil, heapest, "report", "--format", "json", "--top", "0", dump)).Rows {
				rows[r.Key] = r
			}
			for fn, bytes := range want {
				if got := rows[fn].Estimate; got != bytes {
					t.Errorf("%s: flat %.0f B, want the program's %.0f", fn, got, bytes)
				}
			}
			for _, fn := range []string{"main", "prof_backtrace_impl", "je_prof_backtrace", "je_malloc_default", "malloc", "calloc", "realloc", "posix_memalign"} {
				if r, ok := rows[fn]; ok && r.Estimate != 0 {
					t.Errorf("%s: flat %.0f B, want none (an allocator's frame, or the caller of the sites)", fn, r.Estimate)
				}
			}
		})
	}
}
