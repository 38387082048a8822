//go:build unix

package main

import (
	"io/fs"
	"syscall"
)

// umask is the process's file mode creation mask (read by setting it,
// then setting it back: POSIX has no other way).
func umask() fs.FileMode {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return fs.FileMode(m)
}
