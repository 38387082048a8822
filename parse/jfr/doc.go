// Package jfr reads JDK Flight Recorder recordings (.jfr, JFR file format
// 2.x: OpenJDK 11 and later, 8u262 and later) with
// github.com/grafana/jfr-parser, pinned at v0.19.0 in go.mod (the newest
// tag the module proxy here serves), plus a small reader of its own for
// what that library skips.
//
// What it recovers, per allocation event, as records:
//   - jdk.ObjectAllocationSample (JDK 16+): the weight (bytes the thread
//     allocated since its previous emitted sample) as a Weighted record of
//     alloc bytes. A row's estimate is the sum of its weights, the number
//     jfr and JMC print; its interval is model-based (unbias, docs/jfr.md).
//   - jdk.ObjectAllocationInNewTLAB (every TLAB refill): the new TLAB's
//     size as the weight of the object that opened it; and
//     jdk.ObjectAllocationOutsideTLAB (every allocation outside a TLAB):
//     the allocation itself, exactly. They are used only in chunks without
//     ObjectAllocationSample events, which describe the same allocations.
//   - jdk.OldObjectSample (read here, not by the library): live objects
//     the JVM's leak profiler kept, as inuse records counted as they are
//     (one object; its size where the JDK writes objectSize), with no
//     interval.
//
// Object counts of allocations cannot be estimated (an event weighs bytes,
// not objects). Frames are named class.method from the constant pools
// (no addresses); Record.Type is the allocated class as Java writes it
// (byte[], java.lang.String); Record.Thread is "name (tid N)". Event times
// are nanoseconds from the start of the first chunk. The JDK version comes
// from the java.vm.version system property the recording carries.
//
// Memory: the library needs a chunk as one byte slice, so the reader holds
// one chunk at a time (a JDK rotates chunks at 12 MB by default), read in
// growing steps so that a lying size costs at most the bytes that really
// follow it; the next chunk reuses the buffer, and every name handed out
// is copied and interned once per recording. Constant pool references are
// valid within a chunk, so stacks get ids (Record.StackID) per chunk. The
// library can panic on malformed input: such panics become input errors
// naming the file and the chunk's offset.
package jfr
