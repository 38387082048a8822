package symbolize

import (
	"debug/dwarf"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/heapest/heapest/parse"
)

// cProgram has each function on one line, so that every address inside a
// function maps to the line that names it (at -O0).
const cProgram = `#include <stdio.h>
__attribute__((noinline)) int leaf_fn(int x) { return x * 3 + 1; }
__attribute__((noinline)) int middle_fn(int x) { return leaf_fn(x) + 2; }
int main(int argc, char **argv) { printf("%d\n", middle_fn(argc)); return 0; }
`

const cLibrary = `__attribute__((noinline)) int lib_inner(int x) { return x + 7; }
int lib_outer(int x) { return lib_inner(x) * 2; }
`

// randomBase returns a page-aligned load address in the range the kernel
// uses for PIE executables (0x55…) or shared libraries (0x7f…).
func randomBase(rng *rand.Rand, high bool) uint64 {
	if high {
		return 0x7f0000000000 + rng.Uint64N(1<<26)<<12
	}
	return 0x550000000000 + rng.Uint64N(1<<26)<<12
}

// stackIn builds a leaf-first stack of addresses inside the named
// functions of path loaded with bias: the leaf a few bytes into its
// function, the callers at a return address in their middle (the frame
// looked up is one byte earlier, still inside).
func stackIn(t *testing.T, path string, bias uint64, funcs ...string) []parse.Frame {
	t.Helper()
	var st []parse.Frame
	for i, name := range funcs {
		s := elfSymbol(t, path, named(name))
		off := uint64(4)
		if i > 0 {
			off = s.Size/2 + 1
		}
		st = append(st, parse.Frame{Addr: bias + s.Value + off})
	}
	return st
}

type wantFrame struct {
	fn   string
	file string // suffix; "" means no position expected
	line int
}

func checkStack(t *testing.T, p *testProfile, want []wantFrame) {
	t.Helper()
	got := p.Records[0].Stack
	if len(got) != len(want) {
		t.Fatalf("stack has %d frames, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if w.file == "" {
			if g.Func != w.fn {
				t.Errorf("frame %d (%#x): func %q, want %q", i, g.Addr, g.Func, w.fn)
			}
			continue
		}
		// Named by line: "func file:line".
		fn := parse.LineFunc(g.Func)
		pos := strings.TrimPrefix(g.Func, fn+" ")
		if fn != w.fn || !strings.HasSuffix(pos, w.file+":"+strconv.Itoa(w.line)) {
			t.Errorf("frame %d (%#x): %q, want %s at …%s:%d", i, g.Addr, g.Func, w.fn, w.file, w.line)
		}
	}
}

func TestSymbolizeCProgram(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	leafLine := sourceLine(t, cProgram, "int leaf_fn(")
	midLine := sourceLine(t, cProgram, "int middle_fn(")
	mainLine := sourceLine(t, cProgram, "int main(")
	withLines := []wantFrame{{"leaf_fn", "prog_src.c", leafLine}, {"middle_fn", "prog_src.c", midLine}, {"main", "prog_src.c", mainLine}}
	namesOnly := []wantFrame{{"leaf_fn", "", 0}, {"middle_fn", "", 0}, {"main", "", 0}}
	tests := []struct {
		name  string
		flags []string
		want  []wantFrame
	}{
		{"pie-debug", []string{"-O0", "-g", "-fPIE", "-pie"}, withLines},
		{"nopie-debug", []string{"-O0", "-g", "-fno-pie", "-no-pie"}, withLines},
		{"pie-symtab-only", []string{"-O1", "-fPIE", "-pie"}, namesOnly},
		{"nopie-symtab-only", []string{"-O1", "-fno-pie", "-no-pie"}, namesOnly},
		{"pie-dwarf5", []string{"-O0", "-gdwarf-5", "-fPIE", "-pie"}, withLines},
		{"pie-dwarf4", []string{"-O0", "-gdwarf-4", "-fPIE", "-pie"}, withLines},
		{"pie-noseparate-code", []string{"-O0", "-g", "-fPIE", "-pie", "-Wl,-z,noseparate-code"}, withLines},
		{"nopie-noseparate-code", []string{"-O0", "-g", "-fno-pie", "-no-pie", "-Wl,-z,noseparate-code"}, withLines},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sub := filepath.Join(dir, tc.name)
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			bin := build(t, "gcc", sub, "prog", cProgram, tc.flags...)
			base := randomBase(rng, false)
			p := &testProfile{
				Records:  []parse.Record{{Stack: stackIn(t, bin, loadBias(t, bin, base), "leaf_fn", "middle_fn", "main")}},
				MapsText: []byte(mapsFor(t, bin, base)),
			}
			warnings, err := Symbolize(p, Options{Lines: true})
			if err != nil {
				t.Fatal(err)
			}
			// A binary without DWARF is named by function, and said to be.
			noLines := tc.want[0].file == ""
			if len(warnings) != 0 && !(noLines && len(warnings) == 1 && strings.HasPrefix(warnings[0], "--lines: no source line in prog ")) {
				t.Errorf("warnings: %q", warnings)
			}
			if noLines && len(warnings) == 0 {
				t.Error("no warning that prog has no source lines")
			}
			checkStack(t, p, tc.want)
		})
	}
}

func TestSymbolizeStripped(t *testing.T) {
	dir := t.TempDir()
	exported := build(t, "gcc", dir, "prog_exported", cProgram, "-O0", "-g", "-fPIE", "-pie", "-rdynamic")
	full := build(t, "gcc", dir, "prog", cProgram, "-O0", "-g", "-fPIE", "-pie", "-Wl,--build-id")
	base := randomBase(rand.New(rand.NewPCG(3, 4)), false)
	stack := stackIn(t, full, base, "leaf_fn", "middle_fn", "main")

	t.Run("dynsym", func(t *testing.T) {
		// -rdynamic exports every function: a stripped file still names
		// them through .dynsym.
		bin := filepath.Join(dir, "prog.dynsym")
		run(t, "strip", "-s", "-o", bin, exported)
		st := stackIn(t, exported, base, "leaf_fn", "middle_fn", "main")
		p := &testProfile{Records: []parse.Record{{Stack: st}}, MapsText: []byte(mapsFor(t, bin, base))}
		if _, err := Symbolize(p, Options{}); err != nil {
			t.Fatal(err)
		}
		checkStack(t, p, []wantFrame{{"leaf_fn", "", 0}, {"middle_fn", "", 0}, {"main", "", 0}})
	})

	t.Run("build-id-debug-file", func(t *testing.T) {
		bin := filepath.Join(dir, "prog.stripped")
		run(t, "strip", "-s", "-o", bin, full)
		run(t, "objcopy", "--only-keep-debug", full, filepath.Join(dir, "prog.debug"))
		id := noteBuildID(t, full)
		symDir := filepath.Join(dir, "syms")
		debugPath := filepath.Join(symDir, ".build-id", id[:2], id[2:]+".debug")
		if err := os.MkdirAll(filepath.Dir(debugPath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, "prog.debug"), debugPath); err != nil {
			t.Fatal(err)
		}
		p := &testProfile{Records: []parse.Record{{Stack: append([]parse.Frame(nil), stack...)}}, MapsText: []byte(mapsFor(t, bin, base))}
		if _, err := Symbolize(p, Options{SymbolPath: []string{symDir}, Lines: true}); err != nil {
			t.Fatal(err)
		}
		checkStack(t, p, []wantFrame{
			{"leaf_fn", "prog_src.c", sourceLine(t, cProgram, "int leaf_fn(")},
			{"middle_fn", "prog_src.c", sourceLine(t, cProgram, "int middle_fn(")},
			{"main", "prog_src.c", sourceLine(t, cProgram, "int main(")},
		})
	})

	for _, tc := range []struct {
		name    string
		buildID bool // a build-id on both files, compared; else the link's CRC
		where   string
	}{
		{"debuglink-symbol-path", true, "syms"},
		{"debuglink-crc", false, "syms"},
		{"debuglink-beside", true, ""},
		{"debuglink-dot-debug", false, ".debug"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// objcopy --add-gnu-debuglink, as distributions and many
			// build systems ship it: the debug file found by the name
			// the stripped file's .gnu_debuglink gives, where gdb looks.
			sub := t.TempDir()
			src := full
			if !tc.buildID {
				src = filepath.Join(sub, "prog.noid")
				run(t, "objcopy", "--remove-section=.note.gnu.build-id", full, src)
			}
			dbgDir := filepath.Join(sub, tc.where)
			if err := os.MkdirAll(dbgDir, 0o755); err != nil {
				t.Fatal(err)
			}
			dbg := filepath.Join(dbgDir, "prog-dbg.debug")
			run(t, "objcopy", "--only-keep-debug", src, dbg)
			bin := filepath.Join(sub, "prog.linked")
			run(t, "strip", "-s", "-o", bin, src)
			// objcopy reads the debug file by the name given, and records
			// its base name and CRC.
			cmd := exec.Command("objcopy", "--add-gnu-debuglink="+filepath.Base(dbg), bin)
			cmd.Dir = dbgDir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("objcopy --add-gnu-debuglink: %v\n%s", err, out)
			}
			var symPath []string
			if tc.where == "syms" {
				symPath = []string{dbgDir}
			}
			p := &testProfile{Records: []parse.Record{{Stack: append([]parse.Frame(nil), stack...)}}, MapsText: []byte(mapsFor(t, bin, base))}
			if _, err := Symbolize(p, Options{SymbolPath: symPath}); err != nil {
				t.Fatal(err)
			}
			checkStack(t, p, []wantFrame{{"leaf_fn", "", 0}, {"middle_fn", "", 0}, {"main", "", 0}})
		})
	}

	t.Run("debuglink-wrong-crc", func(t *testing.T) {
		// A file of the linked name that is not the debug file (another
		// build's, no build-ids to compare) is not used.
		sub := t.TempDir()
		src := filepath.Join(sub, "prog.noid")
		run(t, "objcopy", "--remove-section=.note.gnu.build-id", full, src)
		dbg := filepath.Join(sub, "prog-dbg.debug")
		run(t, "objcopy", "--only-keep-debug", src, dbg)
		bin := filepath.Join(sub, "prog.linked")
		run(t, "strip", "-s", "-o", bin, src)
		cmd := exec.Command("objcopy", "--add-gnu-debuglink=prog-dbg.debug", bin)
		cmd.Dir = sub
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("objcopy --add-gnu-debuglink: %v\n%s", err, out)
		}
		other := build(t, "gcc", t.TempDir(), "other", cProgram, "-O2", "-g", "-Wl,--build-id=none")
		run(t, "objcopy", "--only-keep-debug", other, dbg) // same name, other contents
		p := &testProfile{Records: []parse.Record{{Stack: append([]parse.Frame(nil), stack...)}}, MapsText: []byte(mapsFor(t, bin, base))}
		if _, err := Symbolize(p, Options{}); err != nil {
			t.Fatal(err)
		}
		if f := p.Records[0].Stack[0].Func; f == "leaf_fn" {
			t.Errorf("leaf named %q from a debug file whose CRC is not the link's", f)
		}
	})

	t.Run("minidebuginfo", func(t *testing.T) {
		// As Fedora and Debian's debhelper make it: the symbol table alone
		// (no DWARF), xz-compressed into .gnu_debugdata of the stripped file.
		bin := filepath.Join(dir, "prog.mini")
		miniDebugInfo(t, full, bin)
		p := &testProfile{Records: []parse.Record{{Stack: append([]parse.Frame(nil), stack...)}}, MapsText: []byte(mapsFor(t, bin, base))}
		warnings, err := Symbolize(p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(warnings) != 0 {
			t.Errorf("warnings: %q", warnings)
		}
		checkStack(t, p, []wantFrame{{"leaf_fn", "", 0}, {"middle_fn", "", 0}, {"main", "", 0}})
	})

	t.Run("no-symbols", func(t *testing.T) {
		bin := filepath.Join(dir, "prog.bare")
		run(t, "strip", "-s", "--remove-section=.note.gnu.build-id", "-o", bin, full)
		p := &testProfile{Records: []parse.Record{{Stack: append([]parse.Frame(nil), stack...)}}, MapsText: []byte(mapsFor(t, bin, base))}
		warnings, err := Symbolize(p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		// Each frame is named by where its function starts, from the
		// unwind tables the stripped file keeps.
		var want []wantFrame
		for _, fn := range []string{"leaf_fn", "middle_fn", "main"} {
			want = append(want, wantFrame{fn: fmt.Sprintf("prog.bare!sub_%x", elfSymbol(t, full, named(fn)).Value)})
		}
		checkStack(t, p, want)
		if len(warnings) != 1 || !strings.Contains(warnings[0], bin) || !strings.Contains(warnings[0], "3 addresses outside every function symbol, each named by where its function starts") {
			t.Errorf("warnings %q: want one naming %s and its 3 addresses named by their functions' starts", warnings, bin)
		}
	})
}

// The unwind tables' code ranges are the functions' own: every function
// symbol of an optimized C++ program whose code has an FDE starts one, and
// stripping the file keeps them.
func TestFuncRanges(t *testing.T) {
	dir := t.TempDir()
	full := build(t, "g++", dir, "cxx", cxxProgram, "-O2", "-g")
	stripped := filepath.Join(dir, "cxx.stripped")
	run(t, "strip", "-s", "-o", stripped, full)
	ranges := func(path string) funcRanges {
		ef, err := elf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer ef.Close()
		return readFuncRanges(ef)
	}
	r, rs := ranges(full), ranges(stripped)
	if len(r) < 3 || !slices.Equal(r, rs) {
		t.Fatalf("%d ranges, %d once stripped: want the same, at least 3", len(r), len(rs))
	}
	ef, err := elf.Open(full)
	if err != nil {
		t.Fatal(err)
	}
	syms, _ := ef.Symbols()
	ef.Close()
	checked := 0
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Size == 0 {
			continue
		}
		for _, at := range []uint64{s.Value, s.Value + s.Size/2, s.Value + s.Size - 1} {
			if start, ok := rs.find(at); !ok || start != s.Value {
				t.Errorf("%s (%#x+%d): address %#x in the range starting %#x (found %v)", s.Name, s.Value, s.Size, at, start, ok)
			}
		}
		checked++
	}
	if checked < 3 {
		t.Errorf("%d functions checked, want at least 3", checked)
	}
	if _, ok := rs.find(0); ok {
		t.Error("address 0 in a function")
	}
	gaps := 0
	for i := 0; i+1 < len(rs); i++ {
		if end := rs[i].end; end < rs[i+1].start {
			gaps++
			if start, ok := rs.find(end); ok {
				t.Errorf("%#x, the end of the function at %#x, found in one starting %#x", end, rs[i].start, start)
			}
		}
	}
	if gaps == 0 {
		t.Error("no padding between functions: the ends were not checked")
	}
}

// noteBuildID reads the GNU build-id note's descriptor (the last 20 bytes
// of a SHA-1 build-id note) straight from the section.
func noteBuildID(t *testing.T, path string) string {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := f.Section(".note.gnu.build-id")
	if s == nil {
		t.Fatalf("%s: no build-id note", path)
	}
	data, err := s.Data()
	if err != nil || len(data) < 36 {
		t.Fatalf("%s: build-id note unreadable: %v", path, err)
	}
	return hex.EncodeToString(data[16:36])
}

func TestSymbolizeDWARFFunctionNames(t *testing.T) {
	// With the symbol table gone, function names come from DWARF
	// subprograms.
	dir := t.TempDir()
	bin := build(t, "gcc", dir, "prog", cProgram, "-O0", "-g", "-fPIE", "-pie")
	o, err := openObject(bin)
	if err != nil {
		t.Fatal(err)
	}
	o.tab = symbolTable{}
	dw := loadDWARF(bin, true, false)
	if dw == nil {
		t.Fatalf("%s: no DWARF loaded", bin)
	}
	withDWARF := func() *dwarfInfo { return dw }
	for _, name := range []string{"leaf_fn", "middle_fn", "main"} {
		s := elfSymbol(t, bin, named(name))
		off := fileOffset(t, bin, s.Value+s.Size/2)
		r, ok := o.resolve(off&^0xfff, off, true, false, withDWARF)
		if !ok || r.fn != name || r.line != sourceLine(t, cProgram, "int "+name+"(") {
			t.Errorf("%s+%d: got %+v (ok %v)", name, s.Size/2, r, ok)
		}
	}
}

func TestSymbolizeDWARFFunctionNamesCXX(t *testing.T) {
	// An out-of-class member definition names itself through
	// DW_AT_specification; the template instance through its linkage name.
	dir := t.TempDir()
	bin := build(t, "g++", dir, "cxx", cxxProgram, "-O0", "-g", "-fPIE", "-pie")
	o, err := openObject(bin)
	if err != nil {
		t.Fatal(err)
	}
	o.tab = symbolTable{}
	dw := loadDWARF(bin, true, false)
	if dw == nil {
		t.Fatalf("%s: no DWARF loaded", bin)
	}
	withDWARF := func() *dwarfInfo { return dw }
	for _, tc := range []struct {
		mangled func(string) bool
		want    string
	}{
		{func(s string) bool { return strings.Contains(s, "Widget4grow") }, "heaplab::Widget::grow"},
		{func(s string) bool { return strings.Contains(s, "5twice") }, "twice"},
		{named("main"), "main"},
	} {
		s := elfSymbol(t, bin, tc.mangled)
		off := fileOffset(t, bin, s.Value+s.Size/2)
		if r, ok := o.resolve(off&^0xfff, off, false, false, withDWARF); !ok || r.fn != tc.want {
			t.Errorf("%s: got %+v (ok %v), want %s", s.Name, r, ok, tc.want)
		}
	}
}

// fileOffset converts a virtual address to a file offset with the
// program headers.
func fileOffset(t *testing.T, path string, vaddr uint64) uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && vaddr >= p.Vaddr && vaddr < p.Vaddr+p.Filesz {
			return vaddr - p.Vaddr + p.Off
		}
	}
	t.Fatalf("%s: %#x in no segment", path, vaddr)
	return 0
}

func TestSymbolizeSharedLibrary(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	lib := build(t, "gcc", dir, "libheaplab.so", cLibrary, "-O0", "-g", "-shared", "-fPIC")
	bin := build(t, "gcc", dir, "prog", cProgram, "-O0", "-g", "-fPIE", "-pie")
	exeBase, libBase := randomBase(rng, false), randomBase(rng, true)
	stack := append(stackIn(t, lib, libBase, "lib_inner", "lib_outer"), stackIn(t, bin, exeBase, "middle_fn", "main")...)
	p := &testProfile{
		Records:  []parse.Record{{Stack: stack}},
		MapsText: []byte(mapsFor(t, bin, exeBase) + "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]\n" + mapsFor(t, lib, libBase)),
	}
	warnings, err := Symbolize(p, Options{Lines: true})
	if err != nil || len(warnings) != 0 {
		t.Fatalf("err %v, warnings %q", err, warnings)
	}
	checkStack(t, p, []wantFrame{
		{"lib_inner", "libheaplab.so_src.c", sourceLine(t, cLibrary, "int lib_inner(")},
		{"lib_outer", "libheaplab.so_src.c", sourceLine(t, cLibrary, "int lib_outer(")},
		{"middle_fn", "prog_src.c", sourceLine(t, cProgram, "int middle_fn(")},
		{"main", "prog_src.c", sourceLine(t, cProgram, "int main(")},
	})
}

const cxxProgram = `namespace heaplab {
struct Widget { int grow(int n); };
__attribute__((noinline)) int Widget::grow(int n) { return n * 2; }
}
template <typename T> __attribute__((noinline)) T twice(T x) { return x + x; }
int main() { heaplab::Widget w; return w.grow(1) + (int)twice<long>(2); }
`

func TestSymbolizeCXXProgram(t *testing.T) {
	dir := t.TempDir()
	for _, flags := range [][]string{{"-O0", "-g", "-fPIE", "-pie"}, {"-O1", "-fno-pie", "-no-pie"}} {
		bin := build(t, "g++", dir, "cxx", cxxProgram, flags...)
		base := randomBase(rand.New(rand.NewPCG(7, 8)), false)
		bias := loadBias(t, bin, base)
		grow := elfSymbol(t, bin, func(s string) bool { return strings.Contains(s, "Widget4grow") })
		twice := elfSymbol(t, bin, func(s string) bool { return strings.Contains(s, "5twice") })
		p := &testProfile{
			Records:  []parse.Record{{Stack: []parse.Frame{{Addr: bias + grow.Value + 1}, {Addr: bias + twice.Value + twice.Size/2 + 1}}}},
			MapsText: []byte(mapsFor(t, bin, base)),
		}
		if _, err := Symbolize(p, Options{}); err != nil {
			t.Fatal(err)
		}
		checkStack(t, p, []wantFrame{{"heaplab::Widget::grow", "", 0}, {"twice", "", 0}})
	}
}

func TestReturnAddressAdjustment(t *testing.T) {
	// An address equal to the start of the function after leaf_fn is, as
	// a return address, the end of a call in leaf_fn (or its padding), and
	// as the leaf frame the next function itself, unless the profile's
	// leaves are return addresses too.
	dir := t.TempDir()
	bin := build(t, "gcc", dir, "prog", cProgram, "-O0", "-fno-pie", "-no-pie")
	leaf := elfSymbol(t, bin, named("leaf_fn"))
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	syms, _ := f.Symbols()
	f.Close()
	var next elf.Symbol
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value > leaf.Value && (next.Value == 0 || s.Value < next.Value) {
			next = s
		}
	}
	if next.Value == 0 || next.Value-(leaf.Value+leaf.Size) >= maxPadding {
		t.Skipf("no function right after leaf_fn in %s", bin)
	}
	p := &testProfile{
		Records: []parse.Record{
			{Stack: []parse.Frame{{Addr: next.Value}, {Addr: next.Value}}},
		},
		MapsText: []byte(mapsFor(t, bin, 0)),
	}
	if _, err := Symbolize(p, Options{}); err != nil {
		t.Fatal(err)
	}
	st := p.Records[0].Stack
	if st[0].Func != next.Name || st[1].Func != "leaf_fn" {
		t.Errorf("leaf %q (want %q), caller %q (want leaf_fn)", st[0].Func, next.Name, st[1].Func)
	}
	if st[1].Addr != next.Value {
		t.Errorf("Addr changed to %#x", st[1].Addr)
	}
	// In a profile whose leaves are return addresses too (gperftools':
	// its stacks begin at malloc's caller), the leaf is the call as well.
	p = &testProfile{Records: []parse.Record{{Stack: []parse.Frame{{Addr: next.Value}}}}, MapsText: []byte(mapsFor(t, bin, 0)), ReturnAddrs: true}
	if _, err := Symbolize(p, Options{}); err != nil {
		t.Fatal(err)
	}
	if got := p.Records[0].Stack[0].Func; got != "leaf_fn" {
		t.Errorf("ReturnAddrs: leaf %q, want leaf_fn", got)
	}
}

func TestSymbolizeOptions(t *testing.T) {
	dir := t.TempDir()
	bin := build(t, "gcc", dir, "t2", cProgram, "-O0", "-g", "-fPIE", "-pie")
	base := randomBase(rand.New(rand.NewPCG(9, 10)), false)
	foreign := strings.ReplaceAll(mapsFor(t, bin, base), bin, "/opt/heaplab/t2")
	want := []wantFrame{{"leaf_fn", "", 0}, {"middle_fn", "", 0}}
	profile := func() *testProfile {
		return &testProfile{
			Records:  []parse.Record{{Stack: stackIn(t, bin, base, "leaf_fn", "middle_fn")}},
			MapsText: []byte(foreign),
		}
	}

	t.Run("missing-file-warns", func(t *testing.T) {
		p := profile()
		warnings, err := Symbolize(p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], "/opt/heaplab/t2") || !strings.Contains(warnings[0], "--binary") {
			t.Errorf("warnings %q: want one naming /opt/heaplab/t2 and --binary", warnings)
		}
		if p.Records[0].Stack[0].Func != "" {
			t.Errorf("resolved %q without the file", p.Records[0].Stack[0].Func)
		}
	})
	t.Run("binary", func(t *testing.T) {
		p := profile()
		if _, err := Symbolize(p, Options{Binary: bin}); err != nil {
			t.Fatal(err)
		}
		checkStack(t, p, want)
	})
	t.Run("symbol-path-by-base-name", func(t *testing.T) {
		p := profile()
		if _, err := Symbolize(p, Options{SymbolPath: []string{t.TempDir(), dir}}); err != nil {
			t.Fatal(err)
		}
		checkStack(t, p, want)
	})
	t.Run("symbol-path-full-path", func(t *testing.T) {
		root := t.TempDir()
		dst := filepath.Join(root, "opt", "heaplab", "t2")
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o755); err != nil {
			t.Fatal(err)
		}
		p := profile()
		if _, err := Symbolize(p, Options{SymbolPath: []string{root}}); err != nil {
			t.Fatal(err)
		}
		checkStack(t, p, want)
	})
	t.Run("binary-other-build-warns", func(t *testing.T) {
		// The profile maps bin, which is there; --binary is another
		// build of it (its build ID differs): said, names kept.
		other := build(t, "gcc", t.TempDir(), "t2", cProgram, "-O0", "-g", "-fPIE", "-pie", "-Wl,--build-id=0x0123456789abcdef0123456789abcdef01234567")
		p := &testProfile{Records: []parse.Record{{Stack: stackIn(t, bin, base, "leaf_fn", "middle_fn")}}, MapsText: []byte(mapsFor(t, bin, base))}
		warnings, err := Symbolize(p, Options{Binary: other})
		if err != nil {
			t.Fatal(err)
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], "its build ID 0123456789ab is not") || !strings.Contains(warnings[0], bin) {
			t.Errorf("warnings %q: want one saying --binary's build ID is not %s's", warnings, bin)
		}
		p = &testProfile{Records: []parse.Record{{Stack: stackIn(t, bin, base, "leaf_fn", "middle_fn")}}, MapsText: []byte(mapsFor(t, bin, base))}
		if warnings, err := Symbolize(p, Options{Binary: bin}); err != nil || len(warnings) != 0 {
			t.Errorf("--binary the mapped file itself: warnings %q, err %v; want none", warnings, err)
		}
	})
	t.Run("binary-without-maps-non-pie", func(t *testing.T) {
		exe := build(t, "gcc", t.TempDir(), "t2", cProgram, "-O0", "-fno-pie", "-no-pie")
		p := &testProfile{Records: []parse.Record{{Stack: stackIn(t, exe, 0, "leaf_fn", "middle_fn")}}}
		if _, err := Symbolize(p, Options{Binary: exe}); err != nil {
			t.Fatal(err)
		}
		checkStack(t, p, want)
	})
	t.Run("binary-without-maps-pie-warns", func(t *testing.T) {
		p := &testProfile{Records: []parse.Record{{Stack: stackIn(t, bin, base, "leaf_fn")}}}
		warnings, err := Symbolize(p, Options{Binary: bin})
		if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "position-independent") {
			t.Errorf("err %v, warnings %q", err, warnings)
		}
	})
}

// TestProfileSymbolsInlined: a jeprof --raw symbol section's inlined
// chain "outer--mid--inner--" names the frame outer and its inlined calls
// inner, mid (innermost first), unless NoInlines.
func TestProfileSymbolsInlined(t *testing.T) {
	for _, noInlines := range []bool{false, true} {
		p := &parse.Profile{Symbols: map[uint64]string{0x2000: "outer--mid--_Z5innerv--", 0x3000: "alone"}}
		ss, err := Open(p, Options{NoInlines: noInlines})
		if err != nil {
			t.Fatal(err)
		}
		ss.Need(0x2001, false)
		ss.Need(0x3001, false)
		if err := ss.Resolve(); err != nil {
			t.Fatal(err)
		}
		name, _ := ss.Name(parse.Frame{Addr: 0x2001}, false)
		inl, _ := ss.Inlined(parse.Frame{Addr: 0x2001}, false)
		alone, _ := ss.Inlined(parse.Frame{Addr: 0x3001}, false)
		want := []string{"inner", "mid"}
		if noInlines {
			want = nil
		}
		if name != "outer" || !slices.Equal(inl, want) || alone != nil {
			t.Errorf("NoInlines %v: %q with inlined calls %q, want outer and %q", noInlines, name, inl, want)
		}
	}
}

func TestProfileSymbols(t *testing.T) {
	// A jeprof --raw symbol section keys callers by address-1 and lists
	// inlined chains outermost first.
	p := &testProfile{
		Records: []parse.Record{{Stack: []parse.Frame{{Addr: 0x1000}, {Addr: 0x2001}, {Addr: 0x3000}, {Addr: 0x4000, Func: "kept"}}}},
		Symbols: map[uint64]string{
			0x1000: "_Z3foov",
			0x2000: "outer--inner--",
			0x3000: "by_raw_address",
			0x4000: "not_used",
		},
	}
	warnings, err := Symbolize(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, f := range p.Records[0].Stack {
		got = append(got, f.Func)
	}
	want := []string{"foo", "outer", "by_raw_address", "kept"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("got %q, want %q", got, want)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings %q", warnings)
	}
}

func TestNoMappingsWarns(t *testing.T) {
	p := &testProfile{Records: []parse.Record{{Stack: []parse.Frame{{Addr: 0x1234}, {Addr: 0x5678}}}}}
	warnings, err := Symbolize(p, Options{})
	if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "2 addresses") {
		t.Errorf("err %v, warnings %q", err, warnings)
	}
}

func TestThreadRecordsSymbolized(t *testing.T) {
	p := &testProfile{
		Records:       []parse.Record{{Stack: []parse.Frame{{Addr: 0x10}}}},
		ThreadRecords: []parse.Record{{Stack: []parse.Frame{{Addr: 0x10}, {Addr: 0x21}}}},
		Symbols:       map[uint64]string{0x10: "malloc", 0x20: "worker"},
	}
	if _, err := Symbolize(p, Options{DropAllocator: true}); err != nil {
		t.Fatal(err)
	}
	if st := p.ThreadRecords[0].Stack; len(st) != 1 || st[0].Func != "worker" {
		t.Errorf("thread record stack %+v, want [worker]", st)
	}
	if st := p.Records[0].Stack; len(st) != 1 || st[0].Func != "malloc" {
		t.Errorf("record stack %+v: the last frame must stay", st)
	}
}

const cInline = `#include <stdlib.h>
static inline __attribute__((always_inline)) int helper(int *p, int n) {
  int s = 0;
  for (int i = 0; i < n; i++) s += p[i] * 3;
  return s;
}
__attribute__((noinline)) int outer(int *p, int n) {
  int a = helper(p, n); // CALL SITE
  return a + 1;
}
int main(int argc, char **argv) { int *p = calloc(argc, sizeof *p); return outer(p, argc); }
`

func TestInlinedCallReportsCallSite(t *testing.T) {
	// An address inside code inlined into outer names outer, at the line
	// of the inlined call: one frame per address, consistent with its
	// function.
	dir := t.TempDir()
	bin := build(t, "gcc", dir, "inl", cInline, "-O2", "-g", "-fno-pie", "-no-pie")
	pcs := inlinedPCs(t, bin, "helper")
	if len(pcs) == 0 {
		t.Skip("skipping: gcc emitted no inlined instance of helper")
	}
	p := &testProfile{Records: []parse.Record{{Stack: []parse.Frame{{Addr: pcs[0]}}}}, MapsText: []byte(mapsFor(t, bin, 0))}
	if _, err := Symbolize(p, Options{Lines: true}); err != nil {
		t.Fatal(err)
	}
	checkStack(t, p, []wantFrame{{"outer", "inl_src.c", sourceLine(t, cInline, "CALL SITE")}})
}

// inlinedPCs returns the low addresses of the inlined instances of fn,
// read with debug/dwarf from the file.
func inlinedPCs(t *testing.T, path, fn string) []uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	var pcs []uint64
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag != dwarf.TagInlinedSubroutine {
			continue
		}
		off, _ := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		ar := d.Reader()
		ar.Seek(off)
		origin, err := ar.Next()
		if err != nil || origin == nil || origin.Val(dwarf.AttrName) != fn {
			continue
		}
		ranges, _ := d.Ranges(e)
		for _, rg := range ranges {
			pcs = append(pcs, rg[0])
		}
	}
	return pcs
}

func TestMappingBuildID(t *testing.T) {
	// Formats that carry build-ids (pprof) find files by build-id first,
	// and refuse a file at the mapped path whose build-id differs.
	dir := t.TempDir()
	bin := build(t, "gcc", dir, "prog", cProgram, "-O0", "-g", "-fPIE", "-pie", "-Wl,--build-id")
	id := noteBuildID(t, bin)
	symDir := filepath.Join(dir, "syms")
	debugPath := filepath.Join(symDir, ".build-id", id[:2], id[2:]+".debug")
	if err := os.MkdirAll(filepath.Dir(debugPath), 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, "objcopy", "--only-keep-debug", bin, debugPath)
	base := uint64(0x561000000000)
	maps, err := ParseMaps([]byte(mapsFor(t, bin, base)))
	if err != nil {
		t.Fatal(err)
	}
	profile := func(file, buildID string) *testProfile {
		ms := append([]parse.Mapping(nil), maps...)
		for i := range ms {
			ms[i].File, ms[i].BuildID = file, buildID
		}
		return &testProfile{Records: []parse.Record{{Stack: stackIn(t, bin, base, "leaf_fn", "main")}}, Mappings: ms}
	}

	p := profile("/elsewhere/prog", strings.ToUpper(id))
	warnings, err := Symbolize(p, Options{SymbolPath: []string{symDir}, Lines: true})
	if err != nil || len(warnings) != 0 {
		t.Fatalf("err %v, warnings %q", err, warnings)
	}
	checkStack(t, p, []wantFrame{
		{"leaf_fn", "prog_src.c", sourceLine(t, cProgram, "int leaf_fn(")},
		{"main", "prog_src.c", sourceLine(t, cProgram, "int main(")},
	})

	p = profile(bin, "0123456789abcdef0123456789abcdef01234567")
	warnings, err = Symbolize(p, Options{})
	if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "does not match") {
		t.Errorf("err %v, warnings %q", err, warnings)
	}
	if p.Records[0].Stack[0].Func != "" {
		t.Errorf("resolved %q from a file of another build", p.Records[0].Stack[0].Func)
	}
}

const rustProgram = `mod heaplab {
    pub struct Widget { pub n: u64 }
    impl Widget {
        #[inline(never)]
        pub fn grow(&mut self, k: u64) -> u64 { self.n = self.n * 3 + k; self.n }
    }
}
fn main() {
    let mut w = heaplab::Widget { n: std::env::args().count() as u64 };
    println!("{}", w.grow(2));
}
`

func TestSymbolizeRustProgram(t *testing.T) {
	// Legacy mangling names the method by its path; v0 writes an inherent
	// impl as <Type>::method (the Rust mangling RFC 2603's form).
	rustc := needTool(t, "rustc")
	dir := t.TempDir()
	src := filepath.Join(dir, "heaplab_rs.rs")
	if err := os.WriteFile(src, []byte(rustProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	// Stable rustc takes -C symbol-mangling-version=v0 only; without it,
	// the toolchain's default (legacy so far) applies.
	for _, flags := range [][]string{nil, {"-C", "symbol-mangling-version=v0"}} {
		bin := filepath.Join(dir, fmt.Sprintf("prog%d", len(flags)))
		args := append(append([]string{"-g", "-C", "opt-level=1"}, flags...), "-o", bin, src)
		if msg, err := exec.Command(rustc, args...).CombinedOutput(); err != nil {
			t.Fatalf("rustc %v: %v\n%s", args, err, msg)
		}
		grow := elfSymbol(t, bin, func(s string) bool {
			return strings.Contains(s, "heaplab") && strings.Contains(s, "6Widget4grow")
		})
		want := "heaplab_rs::heaplab::Widget::grow"
		if strings.HasPrefix(grow.Name, "_R") {
			want = "<heaplab_rs::heaplab::Widget>::grow"
		}
		base := uint64(0x562000000000)
		bias := loadBias(t, bin, base)
		p := &testProfile{
			Records:  []parse.Record{{Stack: []parse.Frame{{Addr: bias + grow.Value + 1}}}},
			MapsText: []byte(mapsFor(t, bin, base)),
		}
		if _, err := Symbolize(p, Options{Lines: true}); err != nil {
			t.Fatal(err)
		}
		checkStack(t, p, []wantFrame{{want, "heaplab_rs.rs", sourceLine(t, rustProgram, "pub fn grow(")}})
	}
}

func TestConcurrentSymbolizeSharesFiles(t *testing.T) {
	// Profiles of one program symbolized at once share the cached file.
	dir := t.TempDir()
	bin := build(t, "gcc", dir, "prog", cProgram, "-O0", "-g", "-fPIE", "-pie")
	rng := rand.New(rand.NewPCG(13, 14))
	const n = 4
	profiles := make([]*testProfile, n)
	for i := range profiles {
		base := randomBase(rng, false)
		profiles[i] = &testProfile{
			Records:  []parse.Record{{Stack: stackIn(t, bin, base, "leaf_fn", "middle_fn", "main")}},
			MapsText: []byte(mapsFor(t, bin, base)),
		}
	}
	errs := make(chan error, n)
	for _, p := range profiles {
		go func() {
			_, err := Symbolize(p, Options{})
			errs <- err
		}()
	}
	for range profiles {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range profiles {
		checkStack(t, p, []wantFrame{{"leaf_fn", "", 0}, {"middle_fn", "", 0}, {"main", "", 0}})
	}
}

// miniDebugInfo writes to out a stripped copy of full carrying its symbol
// table as MiniDebugInfo: the symbols of an --only-keep-debug copy without
// its DWARF, xz-compressed into a .gnu_debugdata section.
func miniDebugInfo(t testing.TB, full, out string) {
	t.Helper()
	dir := t.TempDir()
	syms := filepath.Join(dir, "syms")
	run(t, "objcopy", "--only-keep-debug", full, syms)
	run(t, "objcopy", "--strip-debug", syms)
	run(t, "xz", "-k", syms)
	run(t, "strip", "-s", "-o", out, full)
	run(t, "objcopy", "--add-section", ".gnu_debugdata="+syms+".xz", out)
}

func TestSystemDebugFile(t *testing.T) {
	// A real stripped Debian library: libc.so.6 names its static functions
	// only through the debug file libc6-dbg installs under
	// /usr/lib/debug/.build-id, found by the library's build ID.
	const lib = "/usr/lib/x86_64-linux-gnu/libc.so.6"
	id := ""
	if _, err := os.Stat(lib); err == nil {
		id = noteBuildID(t, lib)
	}
	debugPath := filepath.Join(systemDebugDirs[0], ".build-id", id[:min(2, len(id))], id[min(2, len(id)):]+".debug")
	if _, err := os.Stat(debugPath); id == "" || err != nil {
		t.Skipf("skipping: no %s with its debug file (apt-get install libc6-dbg)", lib)
	}
	sym := staticOnly(t, debugPath)
	base := uint64(0x7f1234560000)
	p := &testProfile{Records: []parse.Record{{Stack: []parse.Frame{{Addr: base + sym.Value + 1}}}}, MapsText: []byte(mapsFor(t, lib, base))}
	warnings, err := Symbolize(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Records[0].Stack[0].Func; got != sym.Name {
		t.Errorf("%s+%#x: %q (warnings %q), want the static function %q from %s", lib, sym.Value, got, warnings, sym.Name, debugPath)
	}
}

// staticOnly returns a sized local function of the debug file that is
// alone at its address (local, so absent from .dynsym): one only the debug
// file can name.
func staticOnly(t *testing.T, debugPath string) elf.Symbol {
	t.Helper()
	f, err := elf.Open(debugPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	at := map[uint64]int{}
	for _, s := range syms {
		at[s.Value]++
	}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && elf.ST_BIND(s.Info) == elf.STB_LOCAL && s.Size > 16 && at[s.Value] == 1 && !strings.Contains(s.Name, ".") {
			return s
		}
	}
	t.Skipf("skipping: %s has no lone static function", debugPath)
	return elf.Symbol{}
}

// A return address past a function's end is that function's within its
// alignment padding, and past the next 16-byte boundary only when no
// function of the unwind tables starts in between: there may start a
// function the symbol table does not name.
func TestLookupPadding(t *testing.T) {
	tab := symbolTable{syms: []symbol{{addr: 0x1000, size: 0x16}, {addr: 0x1060}, {addr: 0x1080, size: 0x20}, {addr: 0x1100, size: 0x10}}}
	for _, c := range []struct {
		vaddr  uint64
		want   int
		beyond bool
	}{
		{0xfff, -1, false},
		{0x1000, 0, false}, {0x1015, 0, false},
		{0x1016, 0, false}, {0x101f, 0, false}, // padding up to 0x1020
		{0x1020, 0, true}, {0x1055, 0, true}, // beyond: up to 64 bytes past the end
		{0x1056, -1, false},
		{0x1060, 1, false}, {0x107f, 1, false}, // a symbol without a size runs to the next one
		{0x10a0, 2, true}, {0x10df, 2, true}, {0x10e0, -1, false},
	} {
		if got, beyond := tab.lookup(c.vaddr); got != c.want || beyond != c.beyond {
			t.Errorf("lookup(%#x) = %d, %v; want %d, %v", c.vaddr, got, beyond, c.want, c.beyond)
		}
	}
	// The unwind tables say a function starts at 0x1020: the bytes from
	// there are not 0x1000's padding. Without them they are.
	names := []string{"first", "second", "third", "fourth"}
	tab.names, tab.syms[0].nameLen = strings.Join(names, ""), 5
	for i, n := range names[1:] {
		tab.syms[i+1].name = tab.syms[i].name + tab.syms[i].nameLen
		tab.syms[i+1].nameLen = uint32(len(n))
	}
	for _, c := range []struct {
		ranges funcRanges
		vaddr  uint64
		want   string
	}{
		{funcRanges{{0x1000, 0x1016}, {0x1020, 0x1050}}, 0x101f, "first"},
		{funcRanges{{0x1000, 0x1016}, {0x1020, 0x1050}}, 0x1023, ""},
		{nil, 0x1023, "first"},
		{funcRanges{{0x1000, 0x1016}}, 0x1023, "first"},
	} {
		o := &object{tab: tab, ranges: c.ranges, rangesRead: true}
		if got := o.funcName(c.vaddr).name; got != c.want {
			t.Errorf("ranges %x: funcName(%#x) = %q, want %q", c.ranges, c.vaddr, got, c.want)
		}
	}
}

// A mapped file the profile's maps mark deleted is still read where it
// is, with a caution: what is at its path now may be another build. Given
// by --binary, it is the build that ran.
func TestDeletedMappingCaution(t *testing.T) {
	dir := t.TempDir()
	bin := build(t, "gcc", dir, "prog", cProgram, "-O0", "-g", "-fPIE", "-pie")
	base := randomBase(rand.New(rand.NewPCG(11, 12)), false)
	maps := strings.ReplaceAll(mapsFor(t, bin, base), bin, bin+" (deleted)")
	stack := stackIn(t, bin, base, "leaf_fn", "middle_fn", "main")
	for _, c := range []struct {
		opt     Options
		caution bool
	}{{Options{}, true}, {Options{Binary: bin}, false}} {
		p := &testProfile{Records: []parse.Record{{Stack: append([]parse.Frame(nil), stack...)}}, MapsText: []byte(maps)}
		warnings, err := Symbolize(p, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		checkStack(t, p, []wantFrame{{"leaf_fn", "", 0}, {"middle_fn", "", 0}, {"main", "", 0}})
		got := len(warnings) == 1 && strings.Contains(warnings[0], "deleted or replaced")
		if got != c.caution || !c.caution && len(warnings) != 0 {
			t.Errorf("--binary %q: warnings %q, want a caution about the deleted file: %v", c.opt.Binary, warnings, c.caution)
		}
	}
}

func TestMainFile(t *testing.T) {
	maps := func(files ...string) []parse.Mapping {
		var out []parse.Mapping
		for _, f := range files {
			out = append(out, parse.Mapping{File: f})
		}
		return out
	}
	for _, tc := range []struct {
		maps   []parse.Mapping
		binary string
		want   string
	}{
		{maps("/opt/app", "/lib/libc.so.6"), "", "/opt/app"},
		// A library linked to load below the program comes first.
		{maps("/opt/lib/libbar.so", "/opt/app", "/lib/libc.so.6"), "", "/opt/app"},
		{maps("/opt/lib/libbar.so", "/opt/app"), "/tmp/app_copy", "/opt/app"},
		{maps("/opt/lib/libbar.so", "/opt/app"), "/tmp/libbar.so", "/opt/lib/libbar.so"},
		{maps("/lib/ld-linux-x86-64.so.2", "/usr/bin/python3.11"), "", "/usr/bin/python3.11"},
		{maps("/lib/libc.so.6"), "", "/lib/libc.so.6"},
		{nil, "", ""},
	} {
		if got := mainFile(tc.maps, tc.binary); got != tc.want {
			t.Errorf("mainFile(%v, %q) = %q, want %q", tc.maps, tc.binary, got, tc.want)
		}
	}
}
