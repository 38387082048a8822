// Package parse holds the model every input format is read into: Records,
// one per sampled line, event or sample of the source, carrying what the
// source knows and no more, streamed to a Sink as they are read; and the
// Profile, what an input says about itself besides its records. The formats
// themselves are sub-packages (parse/jemalloc, parse/pprof, parse/nettrace,
// parse/jfr, parse/memray), listed in one place by parse/formats. Parsers
// never unbias or sum; that is unbias's and aggregate's job, in that order.
package parse
