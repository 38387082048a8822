// Package render draws a report.Report as a text table, CSV or JSON (and,
// in pprof.go, as a profile.proto). Rendering never computes statistics.
package render
