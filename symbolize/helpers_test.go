package symbolize

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/heapest/heapest/parse"
)

// needTool skips the test when an external build tool is missing, except
// under CI=true, where a missing tool is a failure.
func needTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required under CI=true (scripts/install-deps.sh installs it): %v", name, err)
		}
		t.Skipf("skipping: %s not found (install gcc/g++/binutils to run this test)", name)
	}
	return p
}

// build compiles one source file with the given compiler and flags into
// dir/out and returns the output path.
func build(t testing.TB, compiler, dir, name, src string, flags ...string) string {
	t.Helper()
	cc := needTool(t, compiler)
	ext := ".c"
	if compiler == "g++" {
		ext = ".cc"
	}
	srcPath := filepath.Join(dir, name+"_src"+ext)
	if err := os.WriteFile(srcPath, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name)
	args := append(append([]string{}, flags...), "-o", out, srcPath)
	cmd := exec.Command(cc, args...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", compiler, strings.Join(args, " "), err, msg)
	}
	return out
}

// run runs a build tool (objcopy, strip) in a test.
func run(t testing.TB, tool string, args ...string) {
	t.Helper()
	p := needTool(t, tool)
	if msg, err := exec.Command(p, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, msg)
	}
}

// elfSymbol reads a function symbol's address and size straight from the
// file's .symtab (or .dynsym), independently of the code under test. match
// picks the symbol by its (mangled) name.
func elfSymbol(t testing.TB, path string, match func(string) bool) elf.Symbol {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, _ := f.Symbols()
	dyn, _ := f.DynamicSymbols()
	for _, s := range append(syms, dyn...) {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 && match(s.Name) {
			return s
		}
	}
	t.Fatalf("%s: no function symbol matches", path)
	return elf.Symbol{}
}

func named(name string) func(string) bool { return func(s string) bool { return s == name } }

// mapsFor writes /proc/<pid>/maps lines for an ELF file loaded at base (PIE
// and shared objects; fixed-address executables ignore it) the way the
// kernel maps it: one line per PT_LOAD, page-aligned, with the
// segment's permissions and file offset.
func mapsFor(t testing.TB, path string, base uint64) string {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Type == elf.ET_EXEC {
		base = 0 // a fixed-address executable loads where its headers say
	}
	var b strings.Builder
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		start := (base + p.Vaddr) &^ 0xfff
		end := (base + p.Vaddr + p.Memsz + 0xfff) &^ 0xfff
		perms := []byte("---p")
		if p.Flags&elf.PF_R != 0 {
			perms[0] = 'r'
		}
		if p.Flags&elf.PF_W != 0 {
			perms[1] = 'w'
		}
		if p.Flags&elf.PF_X != 0 {
			perms[2] = 'x'
		}
		fmt.Fprintf(&b, "%x-%x %s %08x fe:00 1234567                    %s\n", start, end, perms, p.Off&^0xfff, path)
	}
	return b.String()
}

// loadBias is what must be added to a symbol's value to get its runtime
// address when the file is mapped at base: base for PIE and shared
// objects, 0 for fixed-address executables.
func loadBias(t testing.TB, path string, base uint64) uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Type == elf.ET_EXEC {
		return 0
	}
	return base
}

// sourceLine returns the 1-based line of src that contains marker.
func sourceLine(t testing.TB, src, marker string) int {
	t.Helper()
	for i, l := range strings.Split(src, "\n") {
		if strings.Contains(l, marker) {
			return i + 1
		}
	}
	t.Fatalf("marker %q not in source", marker)
	return 0
}

// samplesDir is the shared sample directory beside the repository.
func samplesDir() string {
	return filepath.Join("..", "..", "shared", "samples")
}

// dumpStacks reads the stacks ("@ 0x…" lines) and the raw MAPPED_LIBRARIES
// text of a jemalloc dump, enough to exercise symbolization without the
// dump parser.
func dumpStacks(t testing.TB, path string) (recs []parse.Record, maps []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("skipping: sample %s not readable: %v", path, err)
	}
	head, tail, _ := bytes.Cut(data, []byte("MAPPED_LIBRARIES:\n"))
	sc := bufio.NewScanner(bytes.NewReader(head))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "@") {
			continue
		}
		var st []parse.Frame
		for _, a := range strings.Fields(line)[1:] {
			v, err := strconv.ParseUint(strings.TrimPrefix(a, "0x"), 16, 64)
			if err != nil {
				t.Fatalf("%s: bad address %q", path, a)
			}
			st = append(st, parse.Frame{Addr: v})
		}
		recs = append(recs, parse.Record{Stack: st})
	}
	return recs, tail
}
