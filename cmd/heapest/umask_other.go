//go:build !unix

package main

import "io/fs"

// umask is 0 where there is no file mode creation mask (Windows, which
// keeps only the read-only bit of a mode, and Plan 9).
func umask() fs.FileMode { return 0 }
