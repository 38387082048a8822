package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"
)

// writeOutput calls write with standard output, or writes path. A regular
// file (or a new one) is written to a temporary file beside it that is
// renamed to it only once write succeeded: an interrupted run never leaves
// a half-written report, nor, on SIGINT, SIGTERM or SIGHUP, the temporary
// file. The file keeps an existing file's mode, and a new one gets 0666
// less the umask, as any tool's output does; a file the user may not
// write is refused, as the shell's > refuses it. A symbolic link is
// followed: the file it names is replaced (or made), the link stays. A
// name of an open descriptor (/dev/stdout, /dev/fd/N, /proc/self/fd/N) is
// written to that descriptor, as a shell redirection to it writes, so
// that "-o /dev/stdout >> log" appends. Anything else that cannot be
// replaced by a rename (a FIFO, a device, a bind-mounted file, a file in
// a directory the user may not write) is written in place. Errors name
// path, not the temporary file.
func writeOutput(path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == "" || path == "-" {
		return write(stdout)
	}
	if fd, ok := descriptor(path); ok {
		if fd == 1 && stdout != nil {
			return write(stdout)
		}
		if err := write(openFile(fd, path)); err != nil {
			return fmt.Errorf("writing %s: %w", path, unwrapPath(err))
		}
		return nil
	}
	if err := writeFile(path, write); err != nil {
		return fmt.Errorf("writing %s: %w", path, unwrapPath(err))
	}
	return nil
}

// descriptor is the open descriptor a path names (/dev/stdout,
// /dev/stderr, /dev/fd/N, /proc/self/fd/N), when it is one this process
// has open. Opening such a path opens the file anew: at its start, not at
// the shell's append position, or, renamed over, not the file at all.
func descriptor(path string) (int, bool) {
	var fd int
	switch {
	case path == "/dev/stdout":
		fd = 1
	case path == "/dev/stderr":
		fd = 2
	case strings.HasPrefix(path, "/dev/fd/"), strings.HasPrefix(path, "/proc/self/fd/"):
		n, err := strconv.Atoi(path[strings.LastIndexByte(path, '/')+1:])
		if err != nil || n < 0 {
			return 0, false
		}
		fd = n
	default:
		return 0, false
	}
	if _, err := os.Stat(path); err != nil {
		return 0, false
	}
	return fd, true
}

// openFiles are the *os.File of descriptors named by /dev/fd/N: one for
// each, kept for the life of the process. The descriptor is the shell's,
// never closed, and an *os.File left to the garbage collector would close
// it (its finalizer does), under a file opened later with its number.
var openFiles struct {
	sync.Mutex
	m map[int]*os.File
}

// openFile is the *os.File of an open descriptor.
func openFile(fd int, name string) *os.File {
	switch fd {
	case 1:
		return os.Stdout
	case 2:
		return os.Stderr
	}
	openFiles.Lock()
	defer openFiles.Unlock()
	f, ok := openFiles.m[fd]
	if !ok {
		if openFiles.m == nil {
			openFiles.m = map[int]*os.File{}
		}
		f = os.NewFile(uintptr(fd), name)
		openFiles.m[fd] = f
	}
	return f
}

func writeFile(path string, write func(io.Writer) error) error {
	target, err := linkTarget(path)
	if err != nil {
		return err
	}
	mode := fs.FileMode(0o666) &^ umask()
	st, err := os.Stat(target)
	exists := err == nil
	if exists {
		if !st.Mode().IsRegular() {
			return writeThrough(target, os.O_WRONLY, write)
		}
		// The shell's > opens the file to write: a file the user may not
		// write is refused, though its directory would let a rename
		// replace it.
		f, err := os.OpenFile(target, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		f.Close()
		mode = st.Mode().Perm()
	}
	tmp, release, err := createTemp(filepath.Dir(target), tempPattern(target))
	if err != nil {
		if exists && errors.Is(err, fs.ErrPermission) {
			// A directory the user may not write holds a file they may.
			return writeThrough(target, os.O_WRONLY|os.O_TRUNC, write)
		}
		return err
	}
	defer release()
	defer os.Remove(tmp.Name()) // no-op after the rename
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	err = os.Rename(tmp.Name(), target)
	if errors.Is(err, syscall.EBUSY) || errors.Is(err, syscall.EXDEV) || errors.Is(err, fs.ErrPermission) {
		// A bind-mounted file (docker -v out.txt:/out.txt) cannot be
		// renamed over, nor another user's file in a sticky directory
		// (/tmp): it is written in place, as the user may write it.
		return copyInto(target, tmp.Name())
	}
	return err
}

// linkTarget is the file path names, through any symbolic links: the
// file a dangling link would name, too, as the shell's > makes it.
func linkTarget(path string) (string, error) {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real, nil
	}
	target := path
	for range 40 { // the kernel's own limit on links followed
		st, err := os.Lstat(target)
		if err != nil || st.Mode()&fs.ModeSymlink == 0 {
			return target, nil
		}
		link, err := os.Readlink(target)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			// Relative to the link's directory as the kernel finds it:
			// ".." of a directory reached through a link is its real
			// parent, not the link's.
			dir := filepath.Dir(target)
			if real, err := filepath.EvalSymlinks(dir); err == nil {
				dir = real
			}
			link = filepath.Join(dir, link)
		}
		target = link
	}
	return "", fmt.Errorf("too many levels of symbolic links")
}

// tempPattern names the temporary file of target: hidden, beside it, and
// within a file system's 255 bytes a name, however long target's is.
func tempPattern(target string) string {
	base := filepath.Base(target)
	if len(base) > 200 {
		return ".heapest.tmp*"
	}
	return "." + base + ".tmp*"
}

// writeThrough writes to path in place.
func writeThrough(path string, flag int, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// copyInto writes the file from holds into path, in place.
func copyInto(path, from string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	return writeThrough(path, os.O_WRONLY|os.O_TRUNC, func(w io.Writer) error {
		_, err := io.Copy(w, src)
		return err
	})
}

// unwrapPath drops an *fs.PathError's or *os.LinkError's paths (the
// temporary file's, which means nothing to the user): writeOutput names
// the user's.
func unwrapPath(err error) error {
	// Only the error itself: one wrapped by write may name an input.
	switch e := err.(type) {
	case *fs.PathError:
		return fmt.Errorf("%s: %w", e.Op, e.Err)
	case *os.LinkError:
		return fmt.Errorf("%s: %w", e.Op, e.Err)
	}
	return err
}

// outputsApart refuses a command line whose output file (-o, --junit,
// --markdown) is one of its inputs, or is named by two of those flags:
// the output would replace the profile, or one output the other. Only
// regular files count: /dev/null or a FIFO may take several outputs.
func outputsApart(cmd *cobra.Command, inputs []string) error {
	type output struct {
		flag string
		st   fs.FileInfo // nil for a file not made yet
		path string      // a new file's absolute path, its directory's links resolved
	}
	var outs []output
	for _, name := range []string{"output", "junit", "markdown"} {
		f := cmd.Flags().Lookup(name)
		v := ""
		if f != nil {
			v = f.Value.String()
		}
		if _, fd := descriptor(v); v == "" || v == "-" || fd {
			continue // descriptors are written through, one after the other
		}
		o := output{flag: "--" + name}
		if f.Shorthand != "" {
			o.flag = "-" + f.Shorthand
		}
		st, err := os.Stat(v)
		switch {
		case err == nil && !st.Mode().IsRegular():
			continue // /dev/null, a FIFO
		case err == nil:
			o.st = st
		default:
			o.path = newPath(v)
		}
		for _, p := range outs {
			if p.st != nil && o.st != nil && os.SameFile(p.st, o.st) || p.st == nil && o.st == nil && p.path == o.path {
				return usageError{fmt.Errorf("%s and %s name one file, %s: give each output a file of its own", p.flag, o.flag, v)}
			}
		}
		outs = append(outs, o)
	}
	if len(outs) == 0 {
		return nil
	}
	// Files read besides the profiles: the rows --from-parquet reads,
	// ci's budgets.
	for _, name := range []string{"from-parquet", "budgets"} {
		if f := cmd.Flags().Lookup(name); f != nil && f.Value.String() != "" {
			inputs = append(slices.Clip(inputs), f.Value.String())
		}
	}
	for _, in := range inputs {
		st, err := os.Stat(in)
		if err != nil {
			continue
		}
		for _, o := range outs {
			if o.st != nil && os.SameFile(o.st, st) {
				return usageError{fmt.Errorf("%s %s is an input too: writing it would replace it; give another file", o.flag, in)}
			}
		}
	}
	return nil
}

// newPath is the absolute path of a file not made yet, its directory's
// links resolved: two names of one new file give one newPath.
func newPath(path string) string {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return filepath.Join(dir, base)
}
