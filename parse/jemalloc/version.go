package jemalloc

import (
	"fmt"
	"strconv"
	"strings"
)

// VersionWarning is what a dump written by the given jemalloc version
// ("5.2.1", as its library's version string says: symbolize's
// JemallocVersion, from file) needs said of its estimates, or "". A dump
// does not say which jemalloc wrote it: from 4.0 to 5.3 they look alike.
//
// jemalloc 5.2.0 and 5.2.1 count an allocation that misses the thread
// cache twice toward the sampling period: malloc's fast path subtracts
// its size from bytes_until_sample (src/jemalloc.c), then, on a miss,
// malloc_default subtracts it again (prof_sample_check). Small objects
// (up to 4 KiB here, whose caches miss often) are sampled up to twice as
// often as heap_v2/R says; no reader can tell which allocations missed,
// so every reader, jeprof too, reads them high. Measured with 5.2.1 built
// from its tag: a site of 4,096-byte objects read 1.77× its truth (2 of
// 36 intervals covered it), a site of 64-byte and 2 KiB objects 1.56×;
// 5.0.1, 5.1.0 and 5.3.1 covered both 35–36 times in 36.
func VersionWarning(version, file string) string {
	major, minor, ok := majorMinor(version)
	if !ok || major != 5 || minor != 2 {
		return ""
	}
	return fmt.Sprintf("%s is jemalloc %s, whose sampler counts each allocation that misses its thread cache twice toward the sampling period: "+
		"objects of 4 KiB and less are sampled up to twice as often as the period says, so their estimates and intervals can read up to 2× high "+
		"(jeprof's too); jemalloc 5.3 samples as the period says (docs/jemalloc.md)", file, version)
}

// majorMinor splits "X.Y.Z".
func majorMinor(version string) (major, minor int, ok bool) {
	parts := strings.Split(version, ".")
	if len(parts) != 3 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	return major, minor, err1 == nil && err2 == nil
}
