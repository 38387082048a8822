package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/engine"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/render"
	"github.com/heapest/heapest/report"
	"github.com/heapest/heapest/unbias"
)

// writeParquet writes, input by input, every group of every value each
// input has (or of --value) as heapest's Parquet rows: what an engine
// merges with one GROUP BY (docs/parquet.md). Frames no symbol names are
// keyed by module and offset, as a merge keys them, so that the rows of
// different processes meet in one group.
func (opts ReportOptions) writeParquet(cmd *cobra.Command, ropt report.Options, paths []string) error {
	ropt.ModuleKeys, ropt.SingleInput, ropt.Top = true, true, 0
	ropt.AllValues = ropt.DefaultValue
	return writeOutput(opts.Output, cmd.OutOrStdout(), func(out io.Writer) error {
		w := engine.NewWriter(out)
		for _, path := range paths {
			if err := opts.parquetInput(cmd, w, ropt, path); err != nil {
				if !opts.KeepGoing || len(paths) == 1 {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "heapest: warning: skipped %s: %v\n", path, err)
			}
		}
		return w.Close()
	})
}

// parquetInput writes the rows of one input.
func (opts ReportOptions) parquetInput(cmd *cobra.Command, w *engine.Writer, ropt report.Options, path string) error {
	b := report.NewBuilder(ropt)
	if err := opts.load(b, []string{path}, cmd.ErrOrStderr()); err != nil {
		return err
	}
	r, err := b.Report() // the input's source, as the other formats name it
	if err != nil && !ropt.AllValues {
		return err
	}
	src := parse.Source{Path: path}
	if r != nil && len(r.Sources) == 1 {
		src = r.Sources[0]
	}
	return b.EachValue(func(v unbias.Value, by aggregate.By, groups []*aggregate.Group, total ci.Stats) error {
		return w.WriteGroups(src, v, by, groups, total)
	})
}

// fromParquetFlags are report's flags that need the samples themselves,
// which grouped rows no longer have.
var fromParquetFlags = []string{"focus", "ignore", "from", "to", "fleet-size", "jemalloc-unbias", "rate", "binary", "symbol-path", "keep-allocator-frames"}

// readParquet reads rows an engine grouped (or heapest's own, which it
// groups itself) into a report with every interval.
func (opts ReportOptions) readParquet(cmd *cobra.Command, ropt report.Options, args []string) (*report.Report, error) {
	if len(args) > 0 {
		return nil, usageError{fmt.Errorf("--from-parquet reads its rows from %s; give no other input", opts.FromParquet)}
	}
	for _, name := range fromParquetFlags {
		if cmd.Flags().Changed(name) {
			return nil, usageError{fmt.Errorf("--%s works on samples; rows from --from-parquet are already grouped", name)}
		}
	}
	if opts.Format == render.Pprof {
		return nil, usageError{fmt.Errorf("--format pprof needs stacks; rows from --from-parquet are already grouped: use table, csv or json")}
	}
	rows, err := engine.ReadFile(opts.FromParquet)
	if err != nil {
		return nil, err
	}
	value := ""
	if !ropt.DefaultValue {
		value = ropt.Value.String()
	}
	g, err := engine.Group(rows, value)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opts.FromParquet, err)
	}
	if !ropt.DefaultBy && ropt.By != g.By {
		return nil, usageError{fmt.Errorf("--by %s: the rows of %s are grouped by %s (write them again with --by %s)", ropt.By, opts.FromParquet, g.By, ropt.By)}
	}
	ropt.By, ropt.Value = g.By, g.Value
	src := parse.Source{Path: opts.FromParquet, Format: "parquet", Rate: g.Total.Rate,
		Samples: g.Total.Samples, Detail: fmt.Sprintf("%d rows of heapest statistics", g.Rows)}
	return report.FromGroups(ropt, []parse.Source{src}, g.Groups, g.Total)
}
