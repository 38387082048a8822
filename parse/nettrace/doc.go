// Package nettrace reads .NET EventPipe traces (.nettrace): the
// FastSerialization container written by the runtime (NetTrace V4/V5) and
// the block container of NetTrace V6. Format: microsoft/perfview
// src/TraceEvent/EventPipe/NetTraceFormat.md (V6) and NetTraceFormat_v5.md
// (V4/V5); quirks of the runtime's writer are listed in
// shared/reference/dotnet.md (appendix).
//
// What it recovers: AllocationSampled (runtime event 303, .NET 10+) as
// per-byte Bernoulli samples with offsets (Approach 2), GCAllocationTick
// (runtime event 10) as fixed-stride estimates with no interval, and managed
// method names from MethodLoadVerbose and the rundown's MethodDC*Verbose
// events for stack frames. It cannot recover native frames (EventPipe stacks
// are managed only), frames in precompiled code without rundown, or objects
// allocated on threads that never took a sample.
//
// The reader streams. It holds one block at a time, the stacks of the
// current sequence-point region (as frames with addresses only: stack
// blocks precede the events that refer to them), the metadata and thread
// tables, interned type and thread names, the addresses of each distinct
// stack once (to number it for Record.StackID) and the method address
// ranges. Every AllocationSampled event goes to the sink as soon as it is
// read. Frames are named after parsing, through Profile.Names, because the
// rundown's method ranges usually come at the end of the trace.
//
// One kind of record is deferred. A trace with both AllocationSampled and
// GCAllocationTick events describes the same allocations twice, and only
// the samples are kept; a reader cannot know whether a sample will follow
// a tick. So GCAllocationTick events are held back, compactly (times,
// sizes, interned type, thread and stack ids: about 40 bytes each), until
// the first AllocationSampled event discards them, or the end of the trace
// sends them. Memory is then O(ticks) for traces that have only ticks; one
// tick stands for about 100 KB allocated, so that is a small part of the
// trace.
//
// Every declared length is checked against the bytes that remain in its
// block, and a block is read in bounded chunks, so a huge declared size
// costs at most the bytes that really follow it.
package nettrace
