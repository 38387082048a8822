package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/report"
	"github.com/heapest/heapest/symbolize"
)

// inputOptions are the flags every command that reads profiles shares.
type inputOptions struct {
	JemallocUnbias string
	Rate           float64
	KeepGoing      bool
	Binary         string
	SymbolPath     []string
	KeepAllocator  bool
}

func (o *inputOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.JemallocUnbias, "jemalloc-unbias", "auto", "how jemalloc 5.3 dumps were written: `auto` (detect), on (prof_unbias encoding) or off (raw counts)")
	f.Float64Var(&o.Rate, "rate", 0, "sampling period in `bytes`, for inputs that lack it (tcmalloc protos, sampled memray captures)")
	f.BoolVar(&o.KeepGoing, "keep-going", false, "salvage what precedes a truncation or a bad record, with a warning, instead of failing")
	f.StringVar(&o.Binary, "binary", "", "the profiled program's executable `PATH`, for dumps taken on another machine")
	f.StringSliceVar(&o.SymbolPath, "symbol-path", nil, "directories searched for the mapped executables and libraries and their debug files (`DIR`,...)")
	f.BoolVar(&o.KeepAllocator, "keep-allocator-frames", false, "keep malloc/jemalloc/tcmalloc frames at the top of stacks")
}

// load reads each input into b: its records stream from the parser into
// the pipeline, then its frames are named. Warnings go to stderr.
func (o *inputOptions) load(b *report.Builder, paths []string, stderr io.Writer) error {
	in := report.Input{
		Parse:     parse.Options{JemallocUnbias: o.JemallocUnbias, Rate: o.Rate, KeepGoing: o.KeepGoing},
		Symbolize: symbolize.Options{Binary: o.Binary, SymbolPath: o.SymbolPath, DropAllocator: !o.KeepAllocator},
	}
	for _, path := range expandInputs(paths) {
		_, warns, err := b.AddFile(path, in)
		if err != nil {
			return err
		}
		for _, w := range warns {
			fmt.Fprintf(stderr, "heapest: warning: %s: %s\n", path, w)
		}
	}
	return nil
}

// expandInputs replaces directories by the files in them (sorted).
func expandInputs(paths []string) []string {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil || !st.IsDir() {
			out = append(out, p) // errors are reported when the file is read
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			out = append(out, p)
			continue
		}
		for _, e := range entries {
			if e.Type().IsRegular() {
				out = append(out, filepath.Join(p, e.Name()))
			}
		}
	}
	return out
}
