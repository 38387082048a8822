// Package symbolize turns the return addresses of parsed stacks into
// function names, files and lines, and the calls inlined at them,
// in-process: it reads the ELF symbol tables and DWARF of the files a
// profile's mappings name (or the files given with --binary and
// --symbol-path) with debug/elf and debug/dwarf, and never runs a program.
// Names come from the symbol tables; DWARF, much costlier to read, is read
// for positions (Options.Lines), for the calls inlined at an address
// (unless Options.NoInlines, and not for Go binaries or files whose DWARF
// is only in the system's debug directory), and for addresses no symbol
// covers; only the compilation units holding sampled addresses are
// decoded, and of those only the entries that can hold code.
package symbolize
