// Package heapprofile reads V8's sampling heap profiles as JSON: what
// `node --heap-prof` writes at exit (Heap.*.heapprofile), what Chrome
// DevTools' "Allocation sampling" saves, and the inspector protocol's
// HeapProfiler.stopSampling result (SamplingHeapProfile):
//
//	{"head": {"callFrame": {"functionName", "url", "lineNumber", "columnNumber", ...},
//	          "selfSize", "id", "children": [...]},
//	 "samples": [{"size", "nodeId", "ordinal"}, ...]}
//
// V8 samples the JavaScript heap as a per-byte Poisson process of mean
// interval R (src/profiler/sampling-heap-profiler.cc), and keeps the
// samples of objects still alive: each entry of "samples" is one sampled
// object of its size, at the stack of its node. So every sample is read
// raw, one object sampled with probability 1−exp(−size/R): in-use
// records, with exact intervals per size.
//
// R is not in the file. Each node's selfSize is V8's own estimate, the sum
// over its sizes b of b·round(n·s), s = 1/(1−exp(−b/R)), for n samples of
// size b: the samples and the sizes pin R down (rate.go). --rate gives it
// instead, and is checked against the same sums.
//
// Frames are named as pprof-nodejs names them (the function, or
// "(anonymous:L#line:C#column)" for one without a name), so that a
// program's rows are the same read from this JSON or from its pprof form.
// The root node is no frame.
//
// The tree (head) is decoded whole: it is the profile's table of stacks,
// small beside its samples, which are streamed one by one. A profile
// whose samples come before its head (no writer does so) has them held
// until the head is read.
package heapprofile
