package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// gperftools' heap profiler with HEAP_PROFILE_MMAP records mmap and sbrk
// calls beside the allocations, tcmalloc's own among them: the memory its
// page heap gets from the system to serve those allocations. Its frames
// are dropped from the leaf end of those stacks with the rest of
// libtcmalloc's, which made each the program function's that allocated:
// big() counted 419 MiB for the 200 MB it holds, the total 531 MiB for
// 274. Those stacks are left out; the program's own mmap stays.
func TestGperftoolsHeapProfileMmap(t *testing.T) {
	gxx := needGperftools(t)
	dir := t.TempDir()
	src := filepath.Join(repoRoot(t), "testdata", "realdata", "gperftools", "mmap.cc")
	bin := filepath.Join(dir, "mmap")
	run(t, nil, gxx, "-O1", "-g", "-fno-omit-frame-pointer", "-no-pie", "-o", bin, src, "-ltcmalloc")
	run(t, []string{"HEAPPROFILE=" + filepath.Join(dir, "hp"), "HEAP_PROFILE_MMAP=true"}, bin)
	dumps, _ := filepath.Glob(filepath.Join(dir, "hp.*.heap"))
	if len(dumps) == 0 {
		t.Fatal("the program wrote no heap profile")
	}
	var rep Report
	if err := heapestReport(heapestBinary(t), dumps[len(dumps)-1], "inuse_space", &rep); err != nil {
		t.Fatal(err)
	}
	rows := rowsByKey(rep)
	// The profiler records every allocation (sampling period 1): exact.
	for fn, want := range map[string]float64{"big": 200e6, "small": 20e6, "main": 64 << 20} {
		if got := rows[fn].Estimate; got != want {
			t.Errorf("%s: %.0f bytes in use, want %.0f", fn, got, want)
		}
	}
	// Besides those, the vector's 1.6 MB and the C++ runtime's few
	// hundred KiB: nothing near tcmalloc's 257 MiB of its own.
	if known := 200e6 + 20e6 + 64<<20; rep.Total.Estimate > known+4e6 {
		t.Errorf("total %.0f bytes in use, want about %.0f", rep.Total.Estimate, float64(known))
	}
	// pprof's conversion to proto drops the header that told the mallocs
	// apart: tcmalloc's own memory is counted again, and a warning says
	// it may be (the text, read above, has none).
	proto := filepath.Join(dir, "hp.pb.gz")
	out, errOut, err := runErr(nil, needTool(t, "go"), "tool", "pprof", "-proto", bin, dumps[len(dumps)-1])
	if err != nil {
		t.Fatalf("go tool pprof -proto: %v\n%s", err, errOut)
	}
	writeFile(t, proto, out)
	_, errOut, err = runErr(nil, heapestBinary(t), "report", proto)
	if err != nil || !strings.Contains(string(errOut), "stacks of the allocator's own memory (tcmalloc growing its heap, the heap profiler's own arena) are counted under the functions that allocated") {
		t.Errorf("the profile as a proto: err %v, want the warning that tcmalloc's own memory may count twice; stderr:\n%s", err, errOut)
	}
	// With HEAP_PROFILE_ONLY_MMAP the mallocs are not recorded: tcmalloc's
	// sbrk and mmap calls are the heap, and count for the functions whose
	// mallocs made it grow, as before.
	only := filepath.Join(t.TempDir(), "only")
	run(t, []string{"HEAPPROFILE=" + only, "HEAP_PROFILE_ONLY_MMAP=true"}, bin)
	dumps, _ = filepath.Glob(only + ".*.heap")
	if len(dumps) == 0 {
		t.Fatal("the program wrote no heap profile with HEAP_PROFILE_ONLY_MMAP")
	}
	if err := heapestReport(heapestBinary(t), dumps[len(dumps)-1], "inuse_space", &rep); err != nil {
		t.Fatal(err)
	}
	if big, mapped := rowsByKey(rep)["big"].Estimate, rowsByKey(rep)["main"].Estimate; big < 200e6 || mapped < 64<<20 {
		t.Errorf("HEAP_PROFILE_ONLY_MMAP: big %.0f bytes (its mallocs' pages: want at least 200,000,000), main %.0f (its own mmap and more)", big, mapped)
	}
}
