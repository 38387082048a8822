// Package duckdb holds no code of its own: its test checks heapest's
// Parquet rows (docs/parquet.md) against a real engine. It drives the
// heapest binary on real jemalloc dumps, merges the rows with the SQL
// docs/parquet.md gives, in DuckDB, and checks that `heapest report
// --from-parquet` on DuckDB's result prints the intervals `heapest merge`
// prints for the same dumps.
//
// It is a module of its own so that heapest's build stays free of cgo:
// the DuckDB driver links DuckDB's C++ library. The test builds heapest
// from the repository two levels up rather than importing it, so this
// module needs no replace directive.
package duckdb
