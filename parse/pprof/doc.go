// Package pprof reads heap profiles of the pprof family into parse
// records: profile.proto files (Go runtime, tcmalloc, heapprofd via
// traceconv, Node.js's V8, unknown producers, and heapest's own pprof
// output, whose statistics are read back exactly with
// ci.Stats.UnmarshalText) and the legacy text heap profiles (gperftools and jemalloc 3 heap_v2, Go's
// debug=1 text, gperftools' full heap profile).
//
// Legacy text is streamed line by line: each stack line is one record,
// sent as soon as the lines after it are known not to name its frames (Go
// prints them on "#" lines below the stack).
//
// A profile.proto cannot be streamed that way. Its sample types, label
// keys and function names are indices into the string table, which writers
// put after the samples (runtime/pprof and google/pprof both do), and what
// decides how a sample is read (the producer, known from the sample types'
// names; the period; heapest's marker comment) may come last too. Parse
// therefore reads the input once, to its end, field by field from the
// reader (the input is never held whole), keeping
//
//   - the tables: strings, functions, locations, mappings, sample types,
//     small next to the samples;
//   - the samples, packed (buffer.go) into a few large byte slices, each
//     as its difference from the one before it: the bytes of location ids
//     it shares with it at either end of the stack as two counts, the ids
//     in between as the varints the file had, repeated values and labels
//     as one flag. No pointer and no allocation per sample.
//
// When the input ends, the tables are resolved and the samples read back
// from the buffer and sent as records, with one reused Record and stack
// (the frames of the locations a stack shares with the one sent before it
// are not even copied again). A sample's location ids are decoded only
// when it is sent: read for an in-use value, most of a Go heap profile's
// samples have nothing in use and are counted without them.
//
// Why one pass with packed samples rather than holding the decompressed
// input or reading it twice: Parse gets a stream (decompressed by
// parse/formats), which it cannot rewind; holding it costs its whole size
// (Go's gzip level makes a heap profile 3 to 16 times larger once
// decompressed); a second pass would need the file reopened and
// decompressed again, the largest single cost of a parse. Packed, the
// samples of real-sized Go heap profiles (bench/gengoheap's shape, 1 to 15
// million samples) take 14–15% of the decompressed input, about twice the
// gzip file, and a whole parse runs at about 200 MB/s of decompressed
// input with a peak RSS of 2 to 3.5 times the gzip file (134 MB for a
// 60 MB file of 15 million samples); stacks that share nothing with their
// neighbours (random ones) pack to about the size of their encoding.
//
// A profile that may hold a bad sample (a location not in the table, a
// negative value, a label whose string is missing, a wrong number of
// values) is checked in full before the first record is sent, so that an
// error never follows records.
package pprof
