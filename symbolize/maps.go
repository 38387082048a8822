package symbolize

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/heapest/heapest/parse"
)

// ParseMaps parses the text of a Linux /proc/<pid>/maps file (the
// MAPPED_LIBRARIES section of a jemalloc dump) into the executable mappings
// that name a file, in the order they appear. Offset is the file offset of
// each mapping's first byte, which with the file's program headers gives the
// load bias of PIE executables and shared libraries.
//
// It also reads the two other forms jemalloc writes: FreeBSD's
// /proc/curproc/map, whose lines carry no file offset (Offset is then the
// distance from the file's first mapping, exact for the usual layout where
// file offsets and virtual addresses advance together), and macOS's
// synthesized "start-end: path" lines (Offset 0).
//
// Lines it cannot read are skipped. The mappings of every readable line are
// always returned; the error, when not nil, says how many lines were
// skipped and where the first one is, for the caller to report as a warning.
func ParseMaps(text []byte) ([]parse.Mapping, error) {
	var (
		out       []parse.Mapping
		repeated  int // lines that repeat the mapping before them
		bad       int
		firstBad  int
		firstText string
		bsdBase   = map[string]uint64{}
	)
	lineNo := 0
	for len(text) > 0 {
		var line []byte
		line, text, _ = bytes.Cut(text, []byte("\n"))
		lineNo++
		s := strings.TrimSpace(string(line))
		if s == "" || s == "MAPPED_LIBRARIES:" || strings.HasPrefix(s, "--- ") {
			continue
		}
		m, ok, readable := parseMapsLine(s, bsdBase)
		if !readable {
			if bad == 0 {
				firstBad, firstText = lineNo, s
			}
			bad++
			continue
		}
		if ok {
			if n := len(out); n > 0 && sameRange(out[n-1], m) {
				// The kernel lists each mapping once: a repeat is
				// damage, and a million of them were gigabytes.
				repeated++
				continue
			}
			m.Line = lineNo
			out = append(out, m)
		}
	}
	if repeated > 0 && bad == 0 {
		return out, fmt.Errorf("%d line(s) repeat the mapping before them: read once", repeated)
	}
	if bad > 0 {
		if len(firstText) > 60 {
			firstText = firstText[:60] + "…"
		}
		return out, fmt.Errorf("maps line %d: expected \"start-end perms offset dev inode [path]\", got %q (%d unreadable line(s) skipped)",
			firstBad, firstText, bad)
	}
	return out, nil
}

// parseMapsLine reads one trimmed line. ok says it is an executable mapping
// of a file; readable says the line had one of the known forms at all.
func parseMapsLine(s string, bsdBase map[string]uint64) (m parse.Mapping, ok, readable bool) {
	fields := strings.Fields(s)
	first := fields[0]
	if strings.HasPrefix(first, "0x") && len(fields) >= 6 {
		return parseBSDLine(fields, bsdBase)
	}
	lo, hi, found := strings.Cut(first, "-")
	if !found {
		return m, false, false
	}
	macOS := strings.HasSuffix(hi, ":")
	hi = strings.TrimSuffix(hi, ":")
	start, err1 := strconv.ParseUint(lo, 16, 64)
	limit, err2 := strconv.ParseUint(hi, 16, 64)
	if err1 != nil || err2 != nil || limit <= start {
		return m, false, false
	}
	m.Start, m.Limit = start, limit
	if macOS {
		// "%016llx-%016llx: %s": an image's address range and path.
		m.File = strings.TrimSpace(s[len(first):])
		return m, isFilePath(m.File), true
	}
	if len(fields) < 5 || len(fields[1]) != 4 {
		return m, false, false
	}
	off, err := strconv.ParseUint(fields[2], 16, 64)
	if err != nil {
		return m, false, false
	}
	m.Offset = off
	if fields[4] != "0" {
		m.Dev = fields[3] // of a file, not of an anonymous mapping
	}
	path := restAfterFields(s, 5)
	m.File = cleanPath(path)
	m.Deleted = m.File != path
	return m, fields[1][2] == 'x' && isFilePath(m.File), true
}

// parseBSDLine reads a FreeBSD /proc/curproc/map line:
// "start end resident privres obj prot ref shadow flags cow nc type path ...".
func parseBSDLine(fields []string, bsdBase map[string]uint64) (m parse.Mapping, ok, readable bool) {
	start, err1 := strconv.ParseUint(strings.TrimPrefix(fields[0], "0x"), 16, 64)
	limit, err2 := strconv.ParseUint(strings.TrimPrefix(fields[1], "0x"), 16, 64)
	if err1 != nil || err2 != nil || limit <= start {
		return m, false, false
	}
	m.Start, m.Limit = start, limit
	prot := fields[5]
	exec := len(prot) == 3 && prot[2] == 'x'
	for i := 6; i+1 < len(fields); i++ {
		if fields[i] == "vnode" {
			m.File = fields[i+1]
			break
		}
	}
	if !isFilePath(m.File) {
		return m, false, true
	}
	base, seen := bsdBase[m.File]
	if !seen {
		base = start
		bsdBase[m.File] = start
	}
	if start >= base {
		m.Offset = start - base
	}
	return m, exec, true
}

// restAfterFields returns s after its first n blank-separated fields, with
// the blanks before the rest removed: a path may itself contain blanks.
func restAfterFields(s string, n int) string {
	for i := 0; i < n; i++ {
		s = strings.TrimLeft(s, " \t")
		j := strings.IndexAny(s, " \t")
		if j < 0 {
			return ""
		}
		s = s[j:]
	}
	return strings.TrimLeft(s, " \t")
}

// cleanPath removes the " (deleted)" mark the kernel appends to files
// replaced or removed since they were mapped.
func cleanPath(p string) string {
	return strings.TrimSuffix(p, " (deleted)")
}

// isFilePath reports whether a maps path names a file rather than a
// pseudo-mapping ([vdso], [heap], anonymous memory).
func isFilePath(p string) bool {
	return p != "" && !strings.HasPrefix(p, "[")
}

// sameRange reports whether two mappings are one: the same addresses of
// the same file at the same offset.
func sameRange(a, b parse.Mapping) bool {
	return a.Start == b.Start && a.Limit == b.Limit && a.Offset == b.Offset && a.File == b.File
}
