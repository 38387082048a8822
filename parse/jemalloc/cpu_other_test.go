//go:build !unix

package jemalloc

import "time"

// cpuTime is not measured here: BenchmarkParse then reports wall time only.
func cpuTime() time.Duration { return 0 }
