package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/ci"
	"github.com/heapest/heapest/engine"
	"github.com/heapest/heapest/fleet"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/render"
	"github.com/heapest/heapest/report"
	"github.com/heapest/heapest/unbias"
)

// parquetRows is --parquet-rows's value.
type parquetRows string

func (p parquetRows) String() string { return string(p) }

var parquetRowsChoices = []parquetRows{"groups", "samples"}

func hasFormat(formats []render.Format, f render.Format) bool {
	for _, x := range formats {
		if x == f {
			return true
		}
	}
	return false
}

// writeParquet writes, input by input, every group of every value each
// input has (or of --value) as heapest's Parquet rows: what an engine
// merges with one GROUP BY (docs/parquet.md). Frames no symbol names are
// keyed by module and offset, as a merge keys them, so that the rows of
// different processes meet in one group. Inputs that are dumps of one
// process or recording by their contents are refused as a merge refuses
// them (an engine would sum their rows); with --latest-per-process the
// rows are written again without the older ones.
func (opts ReportOptions) writeParquet(cmd *cobra.Command, ropt report.Options, paths []string) error {
	ropt.SingleInput, ropt.Top = true, 0
	ropt.AllValues = ropt.DefaultValue || opts.ParquetRows == "samples"
	stderr := opts.chatter(cmd.ErrOrStderr())
	// With --latest-per-process, what the inputs say waits until it is
	// known that they are not read again.
	var held bytes.Buffer
	said := stderr
	if opts.LatestPerProcess {
		said = &held
	}
	var refusal *fleet.DuplicateError
	var written []string // the inputs whose rows were written, in order
	err := writeOutput(opts.Output, cmd.OutOrStdout(), func(out io.Writer) error {
		w := engine.NewWriter(out)
		var ids []parquetIdentity
		for _, path := range paths {
			id, err := opts.parquetInput(w, ropt, path, said)
			if err != nil {
				if !opts.KeepGoing || len(paths) == 1 {
					return err
				}
				// Told now: a skipped input is not read again.
				fmt.Fprintf(stderr, "heapest: warning: skipped %s: %v\n", path, err)
				continue
			}
			written, ids = append(written, path), append(ids, id)
		}
		refusal = fleet.ContentsDuplicates(written, func(i int) []string { return ids[i].keys }, func(i int) int64 { return ids[i].time })
		if refusal != nil && !opts.AllowDuplicates {
			return errRefused
		}
		return w.Close()
	})
	older, ok := refusal.Older()
	if !errors.Is(err, errRefused) || !opts.LatestPerProcess || !ok {
		stderr.Write(held.Bytes())
		if errors.Is(err, errRefused) {
			return refusal
		}
		return err
	}
	if opts.Output == "-" || opts.Output == "" {
		return fmt.Errorf("--latest-per-process: some inputs are dumps of one process or recording by their contents, which tell the newest only once all are read; the rows are then written again, which standard output cannot be: give -o FILE")
	}
	if err := readAgain(stderr, paths, len(older)); err != nil {
		return err
	}
	keep := slices.Clone(written)
	for _, i := range slices.Backward(older) {
		keep = slices.Delete(keep, i, i+1)
	}
	return opts.writeParquet(cmd, ropt, keep)
}

// errRefused stops a Parquet file being written: its inputs are dumps of
// one process or recording.
var errRefused = errors.New("inputs refused as dumps of one process")

// parquetIdentity is what the same-process guard compares of an input
// written (report.Builder.Identity).
type parquetIdentity struct {
	keys []string
	time int64
}

// parquetInput writes the rows of one input, and returns its identity;
// what the input says goes to stderr.
func (opts ReportOptions) parquetInput(w *engine.Writer, ropt report.Options, path string, stderr io.Writer) (parquetIdentity, error) {
	b := report.NewBuilder(ropt)
	if err := opts.load(b, []string{path}, stderr); err != nil {
		return parquetIdentity{}, err
	}
	var id parquetIdentity
	id.keys, id.time = b.Identity()
	src := b.Sources()[0] // one input: its source names every row
	if opts.ParquetRows == "samples" {
		return id, writeSamples(w, b, src)
	}
	return id, b.EachValue(func(v unbias.Value, by aggregate.By, groups []*aggregate.Group, total ci.Stats) error {
		return w.WriteGroups(src, v, by, groups, total)
	})
}

// writeSamples writes a row per distinct stack and type of the input in
// b, and value.
func writeSamples(w *engine.Writer, b *report.Builder, src parse.Source) error {
	st, err := b.Stacks()
	if err != nil {
		return err
	}
	var names []string
	return st.Each(func(stack []uint32, typ string, stats []ci.Stats) error {
		names = names[:0]
		for _, id := range stack {
			names = append(names, st.FuncName(id))
		}
		return w.WriteSample(src, names, typ, st.Values, stats)
	})
}

// fromParquetFlags are report's flags on how profiles are read, which
// rows of statistics are past.
var fromParquetFlags = []string{"from", "to", "jemalloc-unbias", "rate", "binary", "symbol-path", "keep-allocator-frames", "lines", "no-inlines", "allow-duplicates", "latest-per-process"}

// groupedFlags are the flags that need the samples themselves, which
// grouped rows no longer have (sample rows do).
var groupedFlags = []string{"focus", "ignore", "hide", "fleet-size"}

// readParquet reads heapest's Parquet rows. Sample rows become the records
// of one profile in b, which every report flag then groups; grouped rows
// (an engine's GROUP BY, or heapest's own, which it sums itself) become
// the report r, with every interval.
func (opts ReportOptions) readParquet(cmd *cobra.Command, ropt report.Options, args []string) (b *report.Builder, r *report.Report, err error) {
	if len(args) > 0 {
		return nil, nil, usageError{fmt.Errorf("--from-parquet reads its rows from %s; give no other input", opts.FromParquet)}
	}
	if err := refuseFlags(cmd, fromParquetFlags, "rows from --from-parquet are statistics, read no profile"); err != nil {
		return nil, nil, err
	}
	if err := outputsApart(cmd, nil); err != nil {
		return nil, nil, err
	}
	in, err := engine.Open(opts.FromParquet)
	if err != nil {
		return nil, nil, err
	}
	defer in.Close()
	// Sample rows of one source (a profile's, an engine's selection of
	// them) are read twice instead of kept: once to check them, then as
	// records. Kept, a 55 MB file of a Go heap profile's 920,000 stacks
	// took 3.7 GB and 22 s to read back.
	sv, err := engine.SurveyRows(in, opts.FromParquet)
	if err != nil {
		return nil, nil, err
	}
	if sv.Samples && sv.OneSource {
		if err := sampleRowsBy(ropt); err != nil {
			return nil, nil, err
		}
		ropt.SingleInput = true
		b = report.NewBuilder(ropt)
		if _, err := b.Add(engine.SampleRecords(in, sv), nil, 0); err != nil {
			return nil, nil, err
		}
		return b, nil, nil
	}
	if sv.Samples {
		// Rows of several sources are kept, to be split by source.
		rows, err := engine.Read(in, in.Size, in.Name)
		if err != nil {
			return nil, nil, err
		}
		if err := sampleRowsBy(ropt); err != nil {
			return nil, nil, err
		}
		names, split := engine.Sources(rows, opts.FromParquet)
		ropt.SingleInput = len(names) == 1
		b = report.NewBuilder(ropt)
		for i, name := range names {
			if _, err := b.Add(engine.Records(split[i], name), nil, 0); err != nil {
				return nil, nil, err
			}
		}
		return b, nil, nil
	}
	value := ""
	if !ropt.DefaultValue {
		value = ropt.Value.String()
	}
	g, err := engine.GroupFile(in, opts.FromParquet, value, func() error {
		if err := refuseFlags(cmd, groupedFlags, "it needs the samples, and these rows are grouped (write them with --parquet-rows samples)"); err != nil {
			return err
		}
		if opts.Format == render.Pprof {
			return usageError{fmt.Errorf("--format pprof needs stacks, and these rows are grouped: use table, csv or json (or write them with --parquet-rows samples)")}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if !ropt.DefaultBy && ropt.By != g.By {
		return nil, nil, usageError{fmt.Errorf("--by %s: the rows of %s are grouped by %s (write them with --by %s, or with --parquet-rows samples)", ropt.By, opts.FromParquet, g.By, ropt.By)}
	}
	ropt.By, ropt.Value = g.By, g.Value
	src := parse.Source{Path: opts.FromParquet, Format: "parquet", Rate: g.Total.Rate,
		Samples: g.Total.Samples, Detail: fmt.Sprintf("%d rows of heapest statistics", g.Rows)}
	r, err = report.FromGroups(ropt, []parse.Source{src}, g.Groups, g.Total, g.Correlated)
	return nil, r, err
}

// sampleRowsBy refuses a --by that sample rows, per stack and type, do
// not have the keys of.
func sampleRowsBy(ropt report.Options) error {
	if !ropt.DefaultBy && (ropt.By == aggregate.ByThread || ropt.By == aggregate.BySize) {
		return usageError{fmt.Errorf("--by %s: sample rows are per stack and type; write the rows grouped --by %s", ropt.By, ropt.By)}
	}
	return nil
}

// refuseFlags is a usage error naming the first of flags given, and why
// it does not apply.
func refuseFlags(cmd *cobra.Command, flags []string, why string) error {
	for _, name := range flags {
		if cmd.Flags().Changed(name) {
			return usageError{fmt.Errorf("--%s with --from-parquet: %s", name, why)}
		}
	}
	return nil
}
