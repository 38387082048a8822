package symbolize

import (
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
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

// TestLinesOption checks what Options.Lines changes: without it names
// come from the symbol table and are functions' alone, and no DWARF is
// read unless inlined calls are wanted (Options.NoInlines); with it names
// have their positions, from DWARF. A file whose symbol table was
// stripped but whose DWARF was kept is named from DWARF either way.
func TestLinesOption(t *testing.T) {
	dir := t.TempDir()
	full := build(t, "gcc", dir, "prog", cProgram, "-O0", "-g", "-fPIE", "-pie")
	dwarfOnly := filepath.Join(dir, "prog.dwarf-only")
	run(t, "strip", "-s", "--keep-section=.debug_*", "-o", dwarfOnly, full)
	symtabOnly := filepath.Join(dir, "prog.symtab-only")
	run(t, "strip", "--strip-debug", "-o", symtabOnly, full)
	base := randomBase(rand.New(rand.NewPCG(21, 22)), false)
	stack := stackIn(t, full, base, "leaf_fn", "middle_fn", "main")
	withLines := []wantFrame{
		{"leaf_fn", "prog_src.c", sourceLine(t, cProgram, "int leaf_fn(")},
		{"middle_fn", "prog_src.c", sourceLine(t, cProgram, "int middle_fn(")},
		{"main", "prog_src.c", sourceLine(t, cProgram, "int main(")},
	}
	namesOnly := []wantFrame{{"leaf_fn", "", 0}, {"middle_fn", "", 0}, {"main", "", 0}}
	tests := []struct {
		name      string
		bin       string
		lines     bool
		noInlines bool
		want      []wantFrame
		readDWARF bool
		warning   string // "": none
	}{
		{"symtab-names-only", full, false, true, namesOnly, false, ""},
		{"symtab-names-inlines", full, false, false, namesOnly, true, ""}, // -O0: nothing inlined
		{"symtab-lines", full, true, false, withLines, true, ""},
		{"dwarf-only-names", dwarfOnly, false, true, namesOnly, true, ""},
		{"dwarf-only-lines", dwarfOnly, true, false, withLines, true, ""},
		// Lines asked of a file without line tables: functions, and said.
		{"no-dwarf-lines", symtabOnly, true, false, namesOnly, false, "--lines: no source line in prog.symtab-only (no DWARF line tables"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &testProfile{
				Records:  []parse.Record{{Stack: append([]parse.Frame(nil), stack...)}},
				MapsText: []byte(mapsFor(t, tc.bin, base)),
			}
			forgetObjects()
			before := dwarfLoads.Load()
			warnings, err := Symbolize(p, Options{Lines: tc.lines, NoInlines: tc.noInlines})
			if err != nil || len(warnings) != min(len(tc.warning), 1) || tc.warning != "" && !strings.HasPrefix(warnings[0], tc.warning) {
				t.Fatalf("err %v, warnings %q; want %q", err, warnings, tc.warning)
			}
			checkStack(t, p, tc.want)
			if read := dwarfLoads.Load() != before; read != tc.readDWARF {
				t.Errorf("DWARF read: %v, want %v", read, tc.readDWARF)
			}
		})
	}
}

// TestUnitEntries compares the unit entries found from the unit headers
// alone with those debug/dwarf's reader reaches walking every entry, for
// DWARF 4 and 5, on a program of two compilation units.
func TestUnitEntries(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, "lib.c")
	if err := os.WriteFile(lib, []byte(cLibrary), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, flags := range [][]string{{"-gdwarf-4"}, {"-gdwarf-5"}} {
		bin := build(t, "gcc", dir, "prog"+flags[0], cProgram, append(flags, "-O0", "-fPIE", "-pie", lib)...)
		ef, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		d, err := ef.DWARF()
		if err != nil {
			t.Fatal(err)
		}
		var want []dwarf.Offset
		r := d.Reader()
		for {
			e, err := r.Next()
			if err != nil || e == nil {
				break
			}
			want = append(want, e.Offset)
			r.SkipChildren()
		}
		info, err := ef.Section(".debug_info").Data()
		if err != nil {
			t.Fatal(err)
		}
		got := unitEntries(info, ef.ByteOrder)
		ef.Close()
		if len(want) < 2 || !slices.Equal(got, want) {
			t.Errorf("%s: unit entries %v, want %v (one per source file at least)", flags[0], got, want)
		}
	}
}

// FuzzUnitEntries feeds arbitrary bytes to the unit header reader: it
// must return increasing offsets inside the section, and never panic.
func FuzzUnitEntries(f *testing.F) {
	f.Add([]byte{})
	// A DWARF 4 unit of 7 bytes and a DWARF 5 one of 8, 32-bit.
	f.Add([]byte{7, 0, 0, 0, 4, 0, 0, 0, 0, 0, 8, 8, 0, 0, 0, 5, 0, 1, 8, 0, 0, 0, 0})
	// A 64-bit DWARF 5 skeleton unit.
	f.Add(append([]byte{0xff, 0xff, 0xff, 0xff, 28, 0, 0, 0, 0, 0, 0, 0, 5, 0, 4, 8}, make([]byte, 24)...))
	f.Fuzz(func(t *testing.T, info []byte) {
		for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			prev := dwarf.Offset(0)
			for i, off := range unitEntries(info, bo) {
				if off > dwarf.Offset(len(info)) || (i > 0 && off <= prev) {
					t.Fatalf("entry %d at %d after %d in %d bytes", i, off, prev, len(info))
				}
				prev = off
			}
		}
	})
}

// TestSplitDWARF: a program built with -gsplit-dwarf keeps its line
// tables in the file itself, under skeleton units (DWARF 5) or units
// naming their .dwo (DWARF 4), and its functions and inlined calls in the
// .dwo files, which are not read: lines are read from the skeletons, and
// one warning says what the .dwo files would have given.
func TestSplitDWARF(t *testing.T) {
	for _, version := range []string{"-gdwarf-4", "-gdwarf-5"} {
		t.Run(version, func(t *testing.T) {
			dir := t.TempDir()
			bin := build(t, "gcc", dir, "prog", cProgram, "-O2", "-g", version, "-gsplit-dwarf", "-fPIE", "-pie")
			base := randomBase(rand.New(rand.NewPCG(31, 32)), false)
			p := &testProfile{
				Records:  []parse.Record{{Stack: stackIn(t, bin, base, "leaf_fn", "middle_fn")}},
				MapsText: []byte(mapsFor(t, bin, base)),
			}
			warnings, err := Symbolize(p, Options{Lines: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(warnings) != 1 || !strings.Contains(warnings[0], "split into .dwo files") {
				t.Errorf("warnings %q: want one of the .dwo files", warnings)
			}
			for i, want := range []string{"leaf_fn", "middle_fn"} {
				fn, file, line, ok := parse.SplitLineName(p.Records[0].Stack[i].Func)
				if !ok || fn != want || !strings.HasSuffix(file, "prog_src.c") || line != int64(sourceLine(t, cProgram, "int "+want+"(")) {
					t.Errorf("frame %d: %q, want %s at its line of prog_src.c", i, p.Records[0].Stack[i].Func, want)
				}
			}
		})
	}
}

// TestRelativeSourcePaths checks that a program compiled from a path
// relative to the compiler's working directory ("gcc -g src/prog.c") has
// absolute source paths, made from its compilation directory, in DWARF 4
// and 5 alike: DWARF 5 names its directories relative to that one.
func TestRelativeSourcePaths(t *testing.T) {
	gcc := needTool(t, "gcc")
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "src", "prog.c"), []byte(cProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{"-gdwarf-4", "-gdwarf-5"} {
		t.Run(version, func(t *testing.T) {
			bin := filepath.Join(dir, "prog"+version)
			cmd := exec.Command(gcc, "-O0", version, "-o", bin, "src/prog.c")
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			base := uint64(0x550000000000)
			p := &testProfile{
				Records:  []parse.Record{{Stack: stackIn(t, bin, loadBias(t, bin, base), "leaf_fn")}},
				MapsText: []byte(mapsFor(t, bin, base)),
			}
			forgetObjects()
			if _, err := Symbolize(p, Options{Lines: true}); err != nil {
				t.Fatal(err)
			}
			want := "leaf_fn " + filepath.Join(dir, "src", "prog.c") + ":" + strconv.Itoa(sourceLine(t, cProgram, "int leaf_fn("))
			if got := p.Records[0].Stack[0].Func; got != want {
				t.Errorf("leaf %q, want %q", got, want)
			}
		})
	}
}
