// Package symbolize turns the return addresses of parsed stacks into
// function names, files and lines, in-process: it reads the ELF symbol
// tables and DWARF line tables of the files a profile's mappings name (or
// the files given with --binary and --symbol-path) with debug/elf and
// debug/dwarf, and never runs a program. Names come from the symbol
// tables; DWARF, much costlier to read (Go's linker compresses it), is read
// only for positions (Options.Lines) and for addresses no symbol covers,
// and only the compilation units holding sampled addresses are decoded.
package symbolize
