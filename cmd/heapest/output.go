package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// writeOutput calls write with standard output, or writes path. A regular
// file (or a new one) is written to a temporary file beside it that is
// renamed to it only once write succeeded: an interrupted run never leaves
// a half-written report. The file keeps an existing file's mode, and a new
// one gets 0666 less the umask, as any tool's output does. A symbolic link
// is followed: the file it names is replaced, the link stays. Anything
// else (a device such as /dev/stdout, a FIFO, /dev/fd/N) cannot be
// replaced by a rename and is written through. Errors name path, not the
// temporary file.
func writeOutput(path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == "" || path == "-" {
		return write(stdout)
	}
	if err := writeFile(path, write); err != nil {
		return fmt.Errorf("writing %s: %w", path, unwrapPath(err))
	}
	return nil
}

func writeFile(path string, write func(io.Writer) error) error {
	target, mode := path, fs.FileMode(0o666)&^umask()
	if real, err := filepath.EvalSymlinks(path); err == nil {
		target = real
	}
	if st, err := os.Stat(target); err == nil {
		if !st.Mode().IsRegular() {
			return writeThrough(target, write)
		}
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".tmp*")
	if err != nil {
		return err
	}
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
	return os.Rename(tmp.Name(), target)
}

// writeThrough writes to a file that is not a regular one, in place.
func writeThrough(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// unwrapPath drops an *fs.PathError's path (the temporary file's, which
// means nothing to the user): writeOutput names the user's.
func unwrapPath(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}
