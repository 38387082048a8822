// Package pprof reads heap profiles of the pprof family into parse
// records: profile.proto files (Go runtime, tcmalloc, heapprofd via
// traceconv, unknown producers, and heapest's own pprof output, whose
// statistics are read back exactly) and the legacy text heap profiles
// (gperftools and jemalloc 3 heap_v2, Go's debug=1 text, gperftools' full
// heap profile).
//
// Legacy text is streamed line by line: each stack line is one record,
// sent as soon as the lines after it are known not to name its frames.
//
// A profile.proto cannot be streamed that way. Its sample types, label
// keys and function names are indices into the string table, which writers
// put after the samples (runtime/pprof and google/pprof both do), and what
// decides how a sample is read (the producer, known from the sample
// types' names, the period, heapest's marker comment) may come last too.
// So Parse reads the input once, to its end, keeping the tables (strings,
// functions, locations, mappings: small next to the samples) and the
// samples packed into a few large byte slices: each sample as the
// difference from the one before it (its location ids shared at either
// end of the stack, repeated values and labels as one flag), integers as
// varints, no pointer and no allocation per sample. Once the input is
// read, the samples are read back from that buffer and sent as records,
// one reused Record and stack for all. Input is read once, decompressed
// once; what is held is the packed samples, a fraction of the decompressed
// input (see packedRatio in the benchmarks), and never the input itself.
//
// A profile that may hold a bad sample (a location not in the table,
// negative values, a label whose string is missing) is checked in full
// before the first record is sent: an error never follows records.
package pprof
