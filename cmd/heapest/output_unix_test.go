//go:build unix

package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWriteOutput checks -o's cases: a new file gets 0666 less the umask,
// an existing file keeps its mode, a symlink is followed (the link
// stays), a FIFO is written through, and errors name the user's path.
func TestWriteOutput(t *testing.T) {
	dir := t.TempDir()
	write := func(w io.Writer) error { _, err := io.WriteString(w, "report\n"); return err }
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)

	fresh := filepath.Join(dir, "new.txt")
	if err := writeOutput(fresh, nil, write); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(fresh); st.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v, want 0644 (0666 less umask 022)", st.Mode().Perm())
	}

	kept := filepath.Join(dir, "kept.txt")
	os.WriteFile(kept, []byte("old"), 0o640)
	os.Chmod(kept, 0o640)
	if err := writeOutput(kept, nil, write); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(kept); st.Mode().Perm() != 0o640 {
		t.Errorf("existing file mode %v, want 0640 kept", st.Mode().Perm())
	}

	link := filepath.Join(dir, "link.txt")
	os.Symlink(kept, link)
	if err := writeOutput(link, nil, write); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(link); st.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the symlink became a %v", st.Mode())
	}

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	got := make(chan string)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- string(b)
	}()
	if err := writeOutput(fifo, nil, write); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "report\n" {
		t.Errorf("read %q from the FIFO", s)
	}
	if st, _ := os.Lstat(fifo); st.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the FIFO became a %v", st.Mode())
	}

	err := writeOutput(filepath.Join(dir, "missing", "out.txt"), nil, write)
	if err == nil || !strings.Contains(err.Error(), "missing/out.txt") || strings.Contains(err.Error(), ".tmp") {
		t.Errorf("error %v, want one naming the path given and not the temporary file", err)
	}
}

// TestWriteOutputPlaces checks the places -o writes as the shell's >
// does: the open descriptor a /dev/fd/N names (appending where the shell
// appends), the file a dangling link names, a name too long for a
// temporary file's prefix, and, for a user other than root, a file that
// may not be written.
func TestWriteOutputPlaces(t *testing.T) {
	dir := t.TempDir()
	write := func(w io.Writer) error { _, err := io.WriteString(w, "report\n"); return err }

	log := filepath.Join(dir, "log")
	os.WriteFile(log, []byte("HEADER\n"), 0o644)
	f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := writeOutput(fmt.Sprintf("/dev/fd/%d", f.Fd()), nil, write); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(log); string(b) != "HEADER\nreport\n" {
		t.Errorf("/dev/fd/N of a file open to append: the file holds %q, want the report appended", b)
	}

	dangling := filepath.Join(dir, "dangling")
	os.Symlink("made.txt", dangling)
	if err := writeOutput(dangling, nil, write); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "made.txt")); err != nil || string(b) != "report\n" {
		t.Errorf("a dangling link's target holds %q (%v), want the report", b, err)
	}
	if st, _ := os.Lstat(dangling); st.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the dangling link became a %v", st.Mode())
	}

	long := filepath.Join(dir, strings.Repeat("r", 250))
	if err := writeOutput(long, nil, write); err != nil {
		t.Errorf("a 250-byte name: %v", err)
	}

	if os.Geteuid() != 0 {
		ro := filepath.Join(dir, "ro.txt")
		os.WriteFile(ro, []byte("keep\n"), 0o444)
		if err := writeOutput(ro, nil, write); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("a read-only file: error %v, want permission denied", err)
		}
		if b, _ := os.ReadFile(ro); string(b) != "keep\n" {
			t.Errorf("the read-only file was replaced: %q", b)
		}
	}
}

// A signal that ends heapest while it writes -o takes the temporary file
// with it: the test runs itself again, as a child that signals itself
// mid-write.
func TestWriteOutputSignal(t *testing.T) {
	if dir := os.Getenv("HEAPEST_TEST_SIGNAL_DIR"); dir != "" {
		writeOutput(filepath.Join(dir, "out.txt"), nil, func(w io.Writer) error {
			io.WriteString(w, "half a report")
			syscall.Kill(os.Getpid(), syscall.SIGTERM)
			time.Sleep(10 * time.Second)
			return nil
		})
		os.Exit(0)
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriteOutputSignal$")
	cmd.Env = append(os.Environ(), "HEAPEST_TEST_SIGNAL_DIR="+dir)
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Errorf("the child ended with %v, want SIGTERM", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}
