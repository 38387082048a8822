package symbolize

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/heapest/heapest/parse"
)

const jeVersion52 = "5.2.1-0-gea6b3e973b477b8061e0076bb257dbd7f3faa756"

// needJemalloc is the path of name, a file of Debian's libjemalloc-dev.
// A missing file skips the test, except under CI=true, where it fails
// it (scripts/install-deps.sh installs the package).
func needJemalloc(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join("/usr/lib/x86_64-linux-gnu", name)
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required under CI=true (scripts/install-deps.sh installs libjemalloc-dev): %v", path, err)
		}
		t.Skipf("skipping: %v (install libjemalloc-dev)", err)
	}
	return path
}

// TestFindJemallocVersion finds jemalloc's version string as its
// library's read-only data holds it (a NUL-ended string of its own), and
// nothing that only looks like one.
func TestFindJemallocVersion(t *testing.T) {
	for _, c := range []struct {
		name, data, want string
	}{
		{"alone", jeVersion52 + "\x00", "5.2.1"},
		{"among strings", "prof.dump\x00" + jeVersion52 + "\x00Version\x00", "5.2.1"},
		{"commits since the tag", "\x005.3.0-12-g" + strings.Repeat("a", 40) + "\x00", "5.3.0"},
		{"a -g before it", "-gdb\x00x-g\x00" + jeVersion52 + "\x00", "5.2.1"},
		{"inside a longer string", "libfoo " + jeVersion52 + "\x00", ""},
		{"short hash", "\x005.2.1-0-gea6b3e9\x00", ""},
		{"not hex", "\x005.2.1-0-g" + strings.Repeat("z", 40) + "\x00", ""},
		{"no NUL after", "\x00" + jeVersion52 + "x", ""},
		{"two parts", "\x005.2-0-g" + strings.Repeat("a", 40) + "\x00", ""},
		{"no count", "\x005.2.1-g" + strings.Repeat("a", 40) + "\x00", ""},
		{"none", "malloc\x00free\x00", ""},
	} {
		if got := findJemallocVersion([]byte(c.data)); got != c.want {
			t.Errorf("%s: findJemallocVersion(%q) = %q, want %q", c.name, c.data, got, c.want)
		}
	}
}

// TestScanJemallocVersionChunks finds the string wherever it falls
// against scanJemallocVersion's 256 KiB chunks, across their seams too.
func TestScanJemallocVersionChunks(t *testing.T) {
	for _, at := range []int{0, 100, 256<<10 - 30, 256<<10 - 1, 256 << 10, 3<<18 + 7} {
		data := make([]byte, 1<<20)
		copy(data[at:], jeVersion52+"\x00")
		if got := scanJemallocVersion(bytes.NewReader(data)); got != "5.2.1" {
			t.Errorf("string at %d: got %q, want 5.2.1", at, got)
		}
	}
	if got := scanJemallocVersion(bytes.NewReader(make([]byte, 600<<10))); got != "" {
		t.Errorf("no string: got %q", got)
	}
}

// TestJemallocVersionOfLibrary reads the version of a real libjemalloc
// mapped by a profile, and of a copy whose version string says 5.2.1.
func TestJemallocVersionOfLibrary(t *testing.T) {
	lib := needJemalloc(t, "libjemalloc.so.2")
	data, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	real := regexp.MustCompile(`\x00(\d+\.\d+\.\d+)-\d+-g[0-9a-f]{40}\x00`).FindSubmatchIndex(data)
	if real == nil {
		t.Fatalf("%s holds no version string", lib)
	}
	want := string(data[real[2]:real[3]])
	// The copy: the same library, its version string patched to 5.2.1.
	patched := bytes.Clone(data)
	copy(patched[real[2]:], "5.2.1")
	dir := t.TempDir()
	copyPath := filepath.Join(dir, "libjemalloc.so.2")
	if err := os.WriteFile(copyPath, patched, 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{lib: want, copyPath: "5.2.1"} {
		p := &parse.Profile{Mappings: []parse.Mapping{
			{Start: 0x400000, Limit: 0x401000, File: "/bin/prog"},
			{Start: 0x7f0000000000, Limit: 0x7f0000100000, File: path},
		}}
		s, err := Open(p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if v, file := s.JemallocVersion(); v != want || file != path {
			t.Errorf("%s: JemallocVersion() = %q, %q; want %q", path, v, file, want)
		}
	}
}

// TestJemallocVersionStatic reads the version of a jemalloc linked into
// the program (as Rust's tikv-jemallocator links it), once the program's
// frames were looked up.
func TestJemallocVersionStatic(t *testing.T) {
	archive := needJemalloc(t, "libjemalloc.a")
	dir := t.TempDir()
	prog := build(t, "gcc", dir, "static", "#include <stdlib.h>\nint main(void) { return malloc(1) == 0; }\n",
		"-no-pie", "-x", "c")
	// Relink with jemalloc's archive after the source: build puts flags first.
	run(t, "gcc", "-no-pie", "-o", prog, filepath.Join(dir, "static_src.c"), archive, "-lpthread", "-lm", "-ldl")
	s, err := Open(&parse.Profile{MapsText: []byte(mapsFor(t, prog, 0))}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Need(elfSymbol(t, prog, named("main")).Value, false)
	if err := s.Resolve(); err != nil {
		t.Fatal(err)
	}
	if v, file := s.JemallocVersion(); !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(v) || file != prog {
		t.Errorf("JemallocVersion() = %q, %q; want the archive's version, in %s", v, file, prog)
	}
}

// TestJemallocVersionSymbolPath finds the library where --symbol-path
// puts it, for a dump read on another machine than the one it came from.
func TestJemallocVersionSymbolPath(t *testing.T) {
	lib := needJemalloc(t, "libjemalloc.so.2")
	data, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "libjemalloc.so.2"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	p := &parse.Profile{Mappings: []parse.Mapping{
		{Start: 0x7f0000000000, Limit: 0x7f0000100000, File: "/opt/elsewhere/lib/libjemalloc.so.2"},
	}}
	s, err := Open(p, Options{SymbolPath: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	if v, file := s.JemallocVersion(); v == "" || file != filepath.Join(dir, "libjemalloc.so.2") {
		t.Errorf("JemallocVersion() = %q, %q; want the version of the copy in %s", v, file, dir)
	}
}
