//go:build !unix

// Package cputime gives the CPU time (user + system) the process has used,
// for benchmarks.
package cputime

import "time"

// Used is 0 here: the CPU time is not measured on this system, and
// benchmarks report wall time only.
func Used() time.Duration { return 0 }
