package fleet

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"github.com/heapest/heapest/fetch"
	"github.com/heapest/heapest/parse/formats"
)

// Expand turns command-line arguments into input paths: a directory
// becomes every regular file under it (recursively, hidden entries
// skipped), a glob the files it matches, and "-" — when stdin lists paths
// (listed) — the non-empty lines read from stdin. Other arguments stay as
// they are (a missing file is reported when it is read), and so does a
// URL (fetch.IsURL): it is never a glob or a path, whatever it holds.
// With listed false, "-" stays "-": the profile itself is read from
// standard input.
//
// The result is sorted and without repeats (of a path, or of a file under
// another path), so that the same set of inputs, given in any order, is
// merged in one order and gives the same bytes.
func Expand(args []string, stdin io.Reader, listed bool) ([]string, error) {
	var out []string
	for _, a := range args {
		var err error
		switch {
		case a == "-" && listed:
			out, err = readList(out, stdin)
		case a == "-" || fetch.IsURL(a):
			out = append(out, a)
		default:
			out, err = expandArg(out, a)
		}
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(out)
	return sameFiles(dedupe(out)), nil
}

// sameFiles drops the paths that name a file an earlier path names, the
// same file spelled another way (./a and a, dir/../a, a link to it): it is
// one input, as a path given twice is.
func sameFiles(paths []string) []string {
	type key struct {
		size  int64
		mtime int64
	}
	seen := map[key][]os.FileInfo{}
	out := paths[:0]
next:
	for _, p := range paths {
		if p == "-" || fetch.IsURL(p) {
			out = append(out, p)
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			out = append(out, p) // reported when it is read
			continue
		}
		k := key{st.Size(), st.ModTime().UnixNano()}
		for _, prev := range seen[k] {
			if os.SameFile(prev, st) {
				continue next
			}
		}
		seen[k] = append(seen[k], st)
		out = append(out, p)
	}
	return out
}

func expandArg(out []string, a string) ([]string, error) {
	st, err := os.Stat(a)
	switch {
	case err == nil && st.IsDir():
		return walk(out, a)
	case err == nil:
		return append(out, a), nil
	case hasMeta(a):
		matches, gerr := filepath.Glob(a)
		if gerr != nil {
			return nil, fmt.Errorf("%s: %v", a, gerr)
		}
		if len(matches) == 0 {
			return nil, fmt.Errorf("%s: no file matches the pattern", a)
		}
		for _, m := range matches {
			if out, err = expandArg(out, m); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return append(out, a), nil // the reader reports why it cannot be read
}

// hasMeta reports whether a holds glob syntax (the shell left it
// unexpanded: quoted, or matched nothing).
func hasMeta(a string) bool { return strings.ContainsAny(a, "*?[") }

// walk appends the regular files under dir, skipping hidden entries (a
// tool's .tmp files, .git). An empty directory is an error: a merge of
// nothing is a mistake, not a report with no rows.
func walk(out []string, dir string) ([]string, error) {
	n := len(out)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil && p != dir && d != nil && d.IsDir() && !OutOfFiles(err) {
			// A directory under dir that cannot be read is an input
			// its reader reports, as a file that cannot be: one that
			// --keep-going skips and names.
			out = append(out, p)
			return nil
		}
		if err != nil {
			return err
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case d.Type().IsRegular():
			out = append(out, p)
		case d.Type()&fs.ModeSymlink != 0:
			// A link to a file is an input; a link to nothing is one
			// too, which its reader reports. Links to directories are
			// not followed (no cycles), as find does by default.
			if st, err := os.Stat(p); err != nil || !st.IsDir() {
				out = append(out, p)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == n {
		return nil, fmt.Errorf("%s: directory holds no profile", dir)
	}
	return out, nil
}

// OutOfFiles reports whether err is the system's limit on open files: no
// fault of an input or a directory, which --keep-going must not skip as
// unreadable.
func OutOfFiles(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// readList appends the paths listed in r, one per line (find's output),
// or each ended by a NUL byte (find -print0's, for names that hold line
// breaks).
func readList(out []string, r io.Reader) ([]string, error) {
	br := bufio.NewReaderSize(r, 4096)
	head, _ := br.Peek(4096)
	what := formats.Recognize(head)
	if what == "" && nulList(head) {
		return readNulList(out, br)
	}
	if what == "" && (!utf8.Valid(head[:max(0, len(head)-utf8.UTFMax)]) || bytes.IndexByte(head, 0) >= 0) {
		what = "binary data"
	}
	if what != "" && what != "binary data" {
		what = "a " + what + " profile"
	}
	if what != "" {
		// A profile piped in, as report and the other commands take it.
		return nil, fmt.Errorf("standard input holds %s, not paths: merge - reads a list of input paths, one a line or each ended by a NUL byte (give a profile's own path, or use report - for one profile)", what)
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if line := strings.TrimRight(sc.Text(), "\r"); strings.TrimSpace(line) != "" {
			out = append(out, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading input paths from standard input: %v", err)
	}
	return out, nil
}

// nulList reports whether head starts a list of NUL-ended paths: a NUL
// ends its first path, which names a file or is printable text (a URL, a
// glob, a file gone since). A path may hold any byte but NUL: binary data
// is told by a first "path" that is neither.
func nulList(head []byte) bool {
	i := bytes.IndexByte(head, 0)
	if i <= 0 {
		return false
	}
	first := string(head[:i])
	if _, err := os.Lstat(first); err == nil {
		return true
	}
	return utf8.ValidString(first) && !strings.ContainsFunc(first, unicode.IsControl)
}

// readNulList appends the NUL-ended paths of r.
func readNulList(out []string, r *bufio.Reader) ([]string, error) {
	for {
		p, err := r.ReadBytes(0)
		if p = bytes.TrimSuffix(p, []byte{0}); len(p) > 0 {
			out = append(out, string(p))
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading input paths from standard input: %v", err)
		}
	}
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}
