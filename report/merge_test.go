package report

import (
	"fmt"
	"os"
	"syscall"
	"testing"
)

// The limit on open files is no fault of an input: --keep-going must not
// skip inputs for it, whatever wraps the error.
func TestOutOfFiles(t *testing.T) {
	emfile := &os.PathError{Op: "open", Path: "a.heap", Err: syscall.EMFILE}
	if !OutOfFiles(fmt.Errorf("reading: %w", emfile)) || !OutOfFiles(syscall.ENFILE) {
		t.Error("EMFILE or ENFILE not told")
	}
	if OutOfFiles(&os.PathError{Op: "open", Path: "a.heap", Err: syscall.EACCES}) {
		t.Error("EACCES told as the limit on open files")
	}
}
