//go:build !linux

package symbolize

import "github.com/heapest/heapest/parse"

// replacedSince reports whether the file at a mapping's path was replaced
// since the profile was written: /proc/<pid>/maps devices are Linux's,
// and compared there only.
func replacedSince(parse.Mapping, string) bool { return false }
