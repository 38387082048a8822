package symbolize

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/heapest/heapest/parse"
)

// mapsLine maps one executable range of path at 0x555555554000 with file
// offset 0x1000.
func mapsLine(path string) string {
	return "555555555000-555555556000 r-xp 00001000 fe:00 1 " + path + "\n"
}

func oneFrameProfile(path string) *testProfile {
	return &testProfile{
		Records:  []parse.Record{{Stack: []parse.Frame{{Addr: 0x555555555123}, {Addr: 0x555555555456}}}},
		MapsText: []byte(mapsLine(path)),
	}
}

func TestBadMappedFiles(t *testing.T) {
	dir := t.TempDir()
	good := build(t, "gcc", dir, "prog", cProgram, "-O0", "-g", "-fPIE", "-pie")
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := map[string]struct {
		path string
		want string
	}{
		"missing":   {filepath.Join(dir, "nope"), "no such file"},
		"not-elf":   {write("text.so", []byte("#!/bin/sh\necho not an ELF file\n")), "not an ELF file"},
		"empty":     {write("empty.so", nil), "not an ELF file"},
		"directory": {dir, "a directory here"},
	}
	for _, n := range []int{4, 16, 52, 64, 100, 500, len(data) / 3, len(data) / 2} {
		cases["truncated-"+itoa(n)] = struct {
			path string
			want string
		}{write("trunc"+itoa(n), data[:n]), ""}
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := oneFrameProfile(tc.path)
			warnings, err := Symbolize(p, Options{})
			switch {
			case name == "missing" || name == "directory":
				// A dump from another machine: the file is simply absent
				// (no object is ever mapped from a directory).
				if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], tc.path) || !strings.Contains(warnings[0], tc.want) {
					t.Errorf("warnings %q, err %v: want one warning naming %s and %q", warnings, err, tc.path, tc.want)
				}
			case err == nil:
				t.Errorf("a mapped file that exists but is unusable must be an error; got warnings %q", warnings)
			case !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "expected an ELF"):
				t.Errorf("error %q does not name %s, %q and what was expected", err, tc.path, tc.want)
			}
			// The same file given with --binary is an error naming it.
			_, err = Symbolize(oneFrameProfile(tc.path), Options{Binary: tc.path})
			if err == nil && !strings.HasPrefix(name, "truncated-") {
				t.Errorf("--binary %s: no error", tc.path)
			}
			if err != nil && (!strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), "expected")) {
				t.Errorf("--binary error %q does not name the file and what was expected", err)
			}
		})
	}
}

// TestOutsideEveryMapping: a frame in no mapping of the profile (a real
// plugin's, dlclose'd before the dump: its library is no longer in the
// process's maps) is left unsymbolized, and the warning says what such
// code is.
func TestOutsideEveryMapping(t *testing.T) {
	p := &testProfile{
		Records:  []parse.Record{{Stack: []parse.Frame{{Addr: 0x7fde27613138}, {Addr: 0x7fde27613165}, {Addr: 0x555555555456}}}},
		MapsText: []byte(mapsLine(filepath.Join(t.TempDir(), "gone"))),
	}
	warnings, err := Symbolize(p, Options{})
	want := "2 addresses outside every executable mapping of the profile left unsymbolized: code unmapped before the dump (a library the program dlclose'd)"
	if err != nil || !slices.ContainsFunc(warnings, func(w string) bool { return strings.HasPrefix(w, want) }) {
		t.Errorf("warnings %q, err %v: want one starting %q", warnings, err, want)
	}
}

// TestGarbageAddresses: addresses no code can be at (an unwinder's
// garbage: gperftools' generic_fp without frame pointers) are told apart
// from code outside every mapping, in a warning of their own.
func TestGarbageAddresses(t *testing.T) {
	p := &testProfile{
		Records: []parse.Record{{Stack: []parse.Frame{{Addr: 0x42}}}, {Stack: []parse.Frame{{Addr: 0xfffffffffffffff0}}},
			{Stack: []parse.Frame{{Addr: 0xffff}, {Addr: 0x7fde27613138}}}, {Stack: []parse.Frame{{Addr: 0x10000}}}},
		MapsText: []byte(mapsLine(filepath.Join(t.TempDir(), "gone"))),
	}
	warnings, err := Symbolize(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"3 addresses no code can be at (below 64 KiB, or above user space): the stack unwinder returned garbage",
		"2 addresses outside every executable mapping",
	} {
		if !slices.ContainsFunc(warnings, func(w string) bool { return strings.HasPrefix(w, want) }) {
			t.Errorf("warnings %q: want one starting %q", warnings, want)
		}
	}
}

func TestUnreadableFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("skipping: running as root, file permissions do not stop reads")
	}
	p := filepath.Join(t.TempDir(), "secret.so")
	if err := os.WriteFile(p, []byte("\x7fELF"), 0o000); err != nil {
		t.Fatal(err)
	}
	warnings, err := Symbolize(oneFrameProfile(p), Options{})
	if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "permission denied") {
		t.Errorf("err %v, warnings %q", err, warnings)
	}
}

func TestBinaryMismatch(t *testing.T) {
	dir := t.TempDir()
	bin := build(t, "gcc", dir, "prog", cProgram, "-O0", "-fPIE", "-pie")
	p := &testProfile{
		Records:  []parse.Record{{Stack: []parse.Frame{{Addr: 0x555555555123}}}},
		MapsText: []byte("555555555000-555555556000 r-xp 07000000 fe:00 1 /opt/heaplab/prog\n"),
	}
	_, err := Symbolize(p, Options{Binary: bin})
	if err == nil || !strings.Contains(err.Error(), bin) || !strings.Contains(err.Error(), "0x7000000") {
		t.Errorf("err %v: want one naming %s and the offset", err, bin)
	}
	// Found on its own (by --symbol-path), a mismatched file is a warning.
	warnings, err := Symbolize(p, Options{SymbolPath: []string{dir}})
	if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "different build") {
		t.Errorf("err %v, warnings %q", err, warnings)
	}
}

func TestCorruptDWARF(t *testing.T) {
	// Damaged debug sections must not stop symbolization: names still come
	// from the symbol table, and nothing panics.
	dir := t.TempDir()
	bin := build(t, "gcc", dir, "prog", cProgram, "-O0", "-g", "-fPIE", "-pie")
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{".debug_info", ".debug_line", ".debug_abbrev"} {
		if s := f.Section(name); s != nil {
			for i := s.Offset + 8; i < s.Offset+s.Size; i += 3 {
				data[i] ^= 0x5a
			}
		}
	}
	f.Close()
	bad := filepath.Join(dir, "prog.bad")
	if err := os.WriteFile(bad, data, 0o755); err != nil {
		t.Fatal(err)
	}
	base := uint64(0x560000000000)
	p := &testProfile{
		Records:  []parse.Record{{Stack: stackIn(t, bin, base, "leaf_fn", "middle_fn")}},
		MapsText: []byte(mapsFor(t, bad, base)),
	}
	if _, err := Symbolize(p, Options{}); err != nil {
		t.Fatal(err)
	}
	if got := p.Records[0].Stack[0].Func; got != "leaf_fn" {
		t.Errorf("leaf %q, want leaf_fn from the symbol table", got)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// FuzzELF feeds damaged ELF files to the loader and the lookups: whatever
// the bytes, a mapped file is usable or a warning, never a crash.
func FuzzELF(f *testing.F) {
	if _, err := exec.LookPath("gcc"); err == nil || os.Getenv("CI") == "true" {
		bin := build(f, "gcc", f.TempDir(), "prog", cProgram, "-O0", "-g", "-fPIE", "-pie")
		if data, err := os.ReadFile(bin); err == nil {
			f.Add(data)
			f.Add(data[:len(data)/2])
		}
		if _, err := exec.LookPath("xz"); err == nil {
			// A stripped file with MiniDebugInfo: the xz stream and the
			// ELF file inside are fuzzed too.
			mini := filepath.Join(f.TempDir(), "prog.mini")
			miniDebugInfo(f, bin, mini)
			if data, err := os.ReadFile(mini); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte("\x7fELF\x02\x01\x01\x00"))
	f.Add([]byte("\x7fELF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		defer forgetObjects() // every input is a new file: do not keep them
		path := filepath.Join(t.TempDir(), "fuzz.so")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		o, err := openObject(path)
		if err != nil {
			return
		}
		for _, s := range o.segs {
			o.funcStart(s.vaddr + s.memsz/2) // the unwind tables
		}
		for _, lines := range []bool{false, true} {
			dw := loadDWARF(path, lines, true)
			for _, s := range o.segs {
				for _, off := range []uint64{s.off, s.off + s.filesz/2, s.off + s.filesz} {
					o.resolve(s.pageStart(), off, lines, true, func() *dwarfInfo { return dw })
				}
			}
		}
		// Warnings about the file (its size, the addresses it named by
		// their functions' starts, those it left unnamed), each once.
		warnings, err := Symbolize(oneFrameProfile(path), Options{})
		if err != nil || len(warnings) > 3 {
			t.Fatalf("err %v, warnings %q", err, warnings)
		}
		for i, w := range warnings {
			if !strings.Contains(w, path) || slices.Contains(warnings[:i], w) {
				t.Fatalf("warnings %q: each should be about %s, once", warnings, path)
			}
		}
	})
}

func TestMappingSizeMismatchWarns(t *testing.T) {
	// The right offset but a mapping longer than the file's code: most
	// likely another build of the file. Names still come (as jeprof would
	// give them), with a warning.
	dir := t.TempDir()
	bin := build(t, "gcc", dir, "prog", cProgram, "-O0", "-fPIE", "-pie")
	base := uint64(0x560000000000)
	var maps strings.Builder
	for _, l := range strings.SplitAfter(mapsFor(t, bin, base), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[1] == "r-xp" {
			lo, _, _ := strings.Cut(f[0], "-")
			start, _ := strconv.ParseUint(lo, 16, 64)
			l = strconv.FormatUint(start, 16) + "-" + strconv.FormatUint(start+0x100000, 16) + l[len(f[0]):]
		}
		maps.WriteString(l)
	}
	for _, opt := range []Options{{}, {Binary: bin}} {
		p := &testProfile{Records: []parse.Record{{Stack: stackIn(t, bin, base, "leaf_fn")}}, MapsText: []byte(maps.String())}
		warnings, err := Symbolize(p, opt)
		if err != nil {
			t.Fatal(err)
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], "different build") || !strings.Contains(warnings[0], bin) {
			t.Errorf("%+v: warnings %q", opt, warnings)
		}
		if got := p.Records[0].Stack[0].Func; got != "leaf_fn" {
			t.Errorf("%+v: leaf %q, want leaf_fn", opt, got)
		}
	}
}

// A mapped path that exists but holds no ELF object is an error naming the
// dump's MAPPED_LIBRARIES line; a path that does not exist (a dump from
// another machine) is only a warning.
func TestMappedFileNotELF(t *testing.T) {
	dir := t.TempDir()
	notELF := filepath.Join(dir, "server")
	if err := os.WriteFile(notELF, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dump := "heap_v2/524288\n  t*: 1: 64 [0: 0]\n  t0: 1: 64 [0: 0]\n@ 0x401010 0x401020\n  t*: 1: 64 [0: 0]\n  t0: 1: 64 [0: 0]\n\nMAPPED_LIBRARIES:\n" +
		"00400000-00452000 r-xp 00000000 08:02 173521      " + notELF + "\n"
	p, err := readDump("d.heap", dump)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Symbolize(p, Options{DropAllocator: true})
	if err == nil || !strings.Contains(err.Error(), "d.heap:9: MAPPED_LIBRARIES: "+notELF+": not an ELF file (expected an ELF") {
		t.Errorf("err = %v", err)
	}
	p, _ = readDump("d.heap", strings.Replace(dump, notELF, filepath.Join(dir, "absent"), 1))
	if warns, err := Symbolize(p, Options{}); err != nil || len(warns) == 0 {
		t.Errorf("absent file: err %v, warnings %v; want a warning only", err, warns)
	}
}

func TestMappingWithoutFileWarning(t *testing.T) {
	// Legacy text and protos may map code no file backs; the warning says
	// so instead of "cannot open : no such file".
	tests := []struct {
		name, file, want string
	}{
		{"anonymous", "", "the profile's mapping 0x555555554000-0x555555556000 names no file; 2 addresses unsymbolized"},
		{"pseudo", "[vdso]", "the profile's mapping [vdso] at 0x555555554000-0x555555556000 is no file; 2 addresses unsymbolized"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &testProfile{
				Records:  []parse.Record{{Stack: []parse.Frame{{Addr: 0x555555555123}, {Addr: 0x555555555456}}}},
				Mappings: []parse.Mapping{{Start: 0x555555554000, Limit: 0x555555556000, File: tc.file}},
			}
			warnings, err := Symbolize(p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(warnings) != 1 || warnings[0] != tc.want {
				t.Errorf("warnings %q, want [%q]", warnings, tc.want)
			}
		})
	}
}

// TestMergedMappingNonPIE: pprof merges a file's adjacent maps lines, so
// a non-PIE program's read-only first segment and its code become one
// mapping at file offset 0 (go tool pprof -proto of gperftools' text).
// Its frames are named, with and without --binary, and without a
// warning: the mapping spans the segments as the kernel maps them.
func TestMergedMappingNonPIE(t *testing.T) {
	bin := build(t, "gcc", t.TempDir(), "prog", cProgram, "-O0", "-fno-PIE", "-no-pie")
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	var first, code *elf.Prog
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && first == nil {
			first = p
		}
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && code == nil {
			code = p
		}
	}
	f.Close()
	if first == nil || code == nil || first == code || first.Off != 0 {
		t.Skipf("the linker laid %s out otherwise (first LOAD %+v, code %+v): no merged mapping to make", bin, first, code)
	}
	start := first.Vaddr &^ 0xfff
	limit := (code.Vaddr + code.Memsz + 0xfff) &^ 0xfff
	for _, opt := range []Options{{}, {Binary: bin}} {
		p := &testProfile{Records: []parse.Record{{Stack: stackIn(t, bin, 0, "leaf_fn")}},
			Mappings: []parse.Mapping{{Start: start, Limit: limit, Offset: 0, File: bin}}}
		warnings, err := Symbolize(p, opt)
		if err != nil {
			t.Fatalf("%+v: %v", opt, err)
		}
		if len(warnings) != 0 {
			t.Errorf("%+v: warnings %q", opt, warnings)
		}
		if got := p.Records[0].Stack[0].Func; got != "leaf_fn" {
			t.Errorf("%+v: leaf %q, want leaf_fn", opt, got)
		}
	}
}
