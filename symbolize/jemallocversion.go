package symbolize

import (
	"bytes"
	"debug/elf"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// JemallocVersion is the version ("5.2.1") of the jemalloc whose
// library the profile maps (libjemalloc*), or that its program links
// statically, and the file that says so: "" when no file does. jemalloc
// keeps its version as git describes it ("5.2.1-0-gea6b3e9…", mallctl
// "version"), a string in its read-only data. Dumps look alike from
// jemalloc 4.0 to 5.3, but their samplers differ (parse/jemalloc's
// VersionWarning).
func (ss *Session) JemallocVersion() (version, file string) {
	s := ss.s
	for i := range s.maps {
		m := &s.maps[i]
		if !m.allocator || !strings.HasPrefix(filepath.Base(m.File), "libjemalloc") || !usablePath(m.File) {
			continue
		}
		// Where --symbol-path (or the build ID) finds the library first,
		// as for any mapped file: a dump read on another machine.
		for _, c := range s.candidates(m.Mapping) {
			if v := jemallocVersionOf(c); v != "" {
				return v, c
			}
		}
	}
	// Linked statically (Rust's tikv-jemallocator, a C program built
	// with jemalloc's archive): the program holds jemalloc's symbols.
	if fs := s.files[s.mainPath()]; fs != nil && fs.obj != nil {
		fs.obj.mu.Lock()
		links := fs.obj.linksAllocator()
		fs.obj.mu.Unlock()
		if links {
			if v := jemallocVersionOf(fs.obj.path); v != "" {
				return v, fs.obj.path
			}
		}
	}
	return "", ""
}

// jemallocVersions caches jemallocVersionOf by file: a merge of a
// fleet's dumps maps the one library a thousand times.
var jemallocVersions = struct {
	sync.Mutex
	m map[objectKey]string
}{m: map[objectKey]string{}}

// jemallocVersionOf is the jemalloc version string's "X.Y.Z" in the
// read-only data of the ELF file at path, or "".
func jemallocVersionOf(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return ""
	}
	key := objectKey{path, st.Size(), st.ModTime().UnixNano()}
	jemallocVersions.Lock()
	v, ok := jemallocVersions.m[key]
	jemallocVersions.Unlock()
	if ok {
		return v
	}
	if f, err := elf.Open(path); err == nil {
		if sec := f.Section(".rodata"); sec != nil && sec.Type != elf.SHT_NOBITS {
			v = scanJemallocVersion(sec.Open())
		}
		f.Close()
	}
	jemallocVersions.Lock()
	jemallocVersions.m[key] = v
	jemallocVersions.Unlock()
	return v
}

// scanJemallocVersion reads r (a static program's read-only data can be
// tens of megabytes) in chunks that overlap by a version string's length,
// for the first jemalloc version string.
func scanJemallocVersion(r io.Reader) string {
	const overlap = 80 // "X.Y.Z-N-g" and 40 hex digits, with room
	buf := make([]byte, 256<<10)
	have := 0
	for {
		n, err := io.ReadFull(r, buf[have:])
		have += n
		if v := findJemallocVersion(buf[:have]); v != "" {
			return v
		}
		if err != nil {
			return ""
		}
		have = copy(buf, buf[have-overlap:have])
	}
}

// findJemallocVersion finds "X.Y.Z-N-g" followed by 40 hex digits and a
// NUL in data, and returns its "X.Y.Z".
func findJemallocVersion(data []byte) string {
	for i := 0; ; {
		j := bytes.Index(data[i:], []byte("-g"))
		if j < 0 {
			return ""
		}
		j += i
		i = j + 2
		end := j + 2 + 40
		if end >= len(data) || data[end] != 0 || !allHex(data[j+2:end]) {
			continue
		}
		k := j // the count of commits since the tag: digits before "-g"
		for k > 0 && isDigit(data[k-1]) {
			k--
		}
		if k == j || k == 0 || data[k-1] != '-' {
			continue
		}
		start := k - 1
		for start > 0 && (isDigit(data[start-1]) || data[start-1] == '.') {
			start--
		}
		if start > 0 && data[start-1] != 0 {
			continue // inside a longer string: not jemalloc's own
		}
		if v := string(data[start : k-1]); strings.Count(v, ".") == 2 && !strings.Contains(v, "..") && v[0] != '.' && v[len(v)-1] != '.' {
			return v
		}
	}
}

func allHex(b []byte) bool {
	for _, c := range b {
		if !isDigit(c) && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
