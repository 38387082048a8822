package report

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/fetch"
	"github.com/heapest/heapest/fleet"
	"github.com/heapest/heapest/parse"
	"github.com/heapest/heapest/parse/formats"
	"github.com/heapest/heapest/symbolize"
)

// Input says how inputs are read and named.
type Input struct {
	Parse     parse.Options
	Symbolize symbolize.Options
	// Fetch bounds the fetching of inputs that are URLs.
	Fetch fetch.Options
	// Watch, when not nil, reads each file input (and standard input)
	// through a reader of the caller's (formats.Watch): how the CLI shows
	// the progress of a slow input. URL inputs are fetched whole first,
	// and not watched.
	Watch formats.Watch
}

// AddFile reads the profile at path ("-": standard input; an http or
// https URL is fetched, see package fetch) and adds it. It returns the
// profile and its warnings: the parser's, then the symbolizer's.
func (b *Builder) AddFile(path string, in Input) (*parse.Profile, []string, error) {
	var hint int64
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		hint = st.Size()
	}
	return b.add(fileReader(path, in), in, hint)
}

// AddReader is AddFile for a profile read from r; name is used in errors.
func (b *Builder) AddReader(name string, r io.Reader, in Input) (*parse.Profile, []string, error) {
	read := func(sink parse.Sink, threads bool) (*parse.Profile, error) {
		opt := in.Parse
		opt.Threads = threads
		return formats.Read(name, r, opt, sink)
	}
	return b.add(read, in, 0)
}

// fileReader is the Reader of the profile at path, or at a URL.
func fileReader(path string, in Input) Reader {
	if fetch.IsURL(path) {
		return urlReader(path, in)
	}
	return func(sink parse.Sink, threads bool) (*parse.Profile, error) {
		opt := in.Parse
		opt.Threads = threads
		return formats.ReadFileWatched(path, opt, sink, in.Watch)
	}
}

func (b *Builder) add(read Reader, in Input, hint int64) (*parse.Profile, []string, error) {
	p, t, warns, err := b.loadInput(read, in, hint)
	if err != nil {
		return nil, nil, err
	}
	b.join(p, t)
	b.inputs[len(b.inputs)-1].warnings = warns
	return p, warns, nil
}

// loadInput reads one input into a table of its own, naming its frames
// with the symbolizer where it needs one, and returns its warnings.
func (b *Builder) loadInput(read Reader, in Input, hint int64) (*parse.Profile, *aggregate.Table, []string, error) {
	var sess *symbolize.Session
	namer := func(p *parse.Profile) (aggregate.Namer, error) {
		switch {
		case p.Names != nil && p.NamesByID:
			return aggregate.IDNamer(p.Names), nil
		case p.Names != nil:
			return aggregate.FuncNamer(p.Names), nil
		case p.AllocatorNamed:
			return symbolize.ByName{Drop: in.Symbolize.DropAllocator}, nil
		case len(p.Mappings) > 0 || len(p.MapsText) > 0 || len(p.Symbols) > 0 || in.Symbolize.Binary != "":
			var err error
			if sess, err = symbolize.Open(p, in.Symbolize); err != nil {
				return nil, err // located by symbolize: file, line, what was expected
			}
			return sess, nil
		}
		return nil, nil // protos without mappings name their own frames
	}
	p, t, err := b.load(read, namer, hint)
	if err != nil {
		return nil, nil, nil, err
	}
	warns := p.Warnings
	if sess != nil {
		warns = append(warns, sess.Warnings()...)
		p.Source.Build = sess.Build()
		if w := formats.VersionWarning(p.Source.Format, sess.JemallocVersion); w != "" {
			warns = append(warns, w)
		}
	}
	p.Source.Process = fleet.NamedProcess(process(p), p.Source.Path)
	return p, t, warns, nil
}

// process is the identity of the process an input profiled, as its
// contents say (package fleet). A merge of several inputs profiled no
// one process: its mappings are those of its inputs (all alike for
// workers forked from one parent, whose merges in halves would look like
// one process twice), and it is told apart by what it merged instead
// (parse.Source.Recording).
func process(p *parse.Profile) string {
	if m := p.Merged; m != nil && m.Inputs > 1 {
		return fleet.RecordingProcess(p.Source.Format, p.Source.Recording)
	}
	proc := fleet.MapsProcess(p.MapsText)
	switch {
	case proc == "" && p.Source.Recording != "":
		proc = fleet.RecordingProcess(p.Source.Format, p.Source.Recording)
	case proc == "" && len(p.MapsText) == 0:
		proc = fleet.MappingsProcess(p.Mappings)
	}
	return proc
}

// urlReader is the Reader of the profile at a URL: fetched whole (within
// in.Fetch's bounds), then read like a file named by the URL. A body no
// format recognises is said to be no profile, with the type the server
// gave it.
func urlReader(raw string, in Input) Reader {
	return func(sink parse.Sink, threads bool) (*parse.Profile, error) {
		body, err := fetch.Get(context.Background(), raw, in.Fetch)
		if err != nil {
			return nil, err
		}
		opt := in.Parse
		opt.Threads = threads
		opt.SizeHint = int64(len(body.Data))
		p, err := formats.Read(raw, bytes.NewReader(body.Data), opt, sink)
		var pe *parse.Error
		if errors.As(err, &pe) && pe.Offset == -1 && pe.Line == 0 && !errors.Is(err, parse.ErrTooLarge) {
			// Offset -1 without a line: the input as a whole was refused
			// (empty, or no format recognised), not damaged somewhere.
			return nil, body.NotProfile(err)
		}
		return p, err
	}
}
