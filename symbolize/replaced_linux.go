//go:build linux

package symbolize

import (
	"fmt"
	"os"
	"syscall"

	"github.com/heapest/heapest/parse"
)

// replacedSince reports whether the file at a mapping's path was
// written after the profile at profilePath was, on the device the maps
// line names: a rebuild or an upgrade since, in place (the same inode)
// or as a new file. The dump does not say which build ran, only which
// file. (A dump from another machine names devices of that machine; a
// file there is compared only when this machine's device has the same
// number, and then only by its time.)
func replacedSince(m parse.Mapping, profilePath string) bool {
	if m.Dev == "" {
		return false
	}
	fi, err := os.Stat(m.File)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || devName(uint64(st.Dev)) != m.Dev {
		return false
	}
	prof, err := os.Stat(profilePath)
	return err == nil && fi.ModTime().After(prof.ModTime())
}

// devName writes a device number as /proc/<pid>/maps does: major:minor
// in hex, at least two digits each (glibc's gnu_dev_major and minor).
func devName(dev uint64) string {
	major := (dev>>8)&0xfff | (dev>>32)&0xfffff000
	minor := dev&0xff | (dev>>12)&0xffffff00
	return fmt.Sprintf("%02x:%02x", major, minor)
}
