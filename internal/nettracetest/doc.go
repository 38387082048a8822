// Package nettracetest writes .NET EventPipe traces (NetTrace V4, V5 and V6)
// for tests and benchmarks, and simulates the runtime's randomized
// allocation sampling so that a generated trace comes with the truth it was
// drawn from. It follows microsoft/perfview's NetTraceFormat.md (V6) and
// NetTraceFormat_v5.md (V4/V5); it is test support, not a product writer.
package nettracetest
