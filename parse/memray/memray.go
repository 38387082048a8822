package memray

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/heapest/heapest/parse"
)

// header is the first line memray's TransformReporter.render_as_csv
// writes; it is what identifies the format.
const header = "allocator,num_allocations,size,tid,thread_name,stack_trace"

// mergedTID is the tid memray writes when threads are merged (always, in
// `memray transform csv`).
const mergedTID = -1

// Detect reports whether head starts with the header line of memray's CSV
// export. Only that exact line counts, so no other text format is taken
// for it.
func Detect(head []byte) bool {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	line, _, ok := bytes.Cut(head, []byte("\n"))
	if !ok && len(head) >= 4096 {
		return false
	}
	return string(bytes.TrimSuffix(line, []byte("\r"))) == header
}

// Parse reads `memray transform csv` output and streams one record per row
// to sink. name is used in errors. Without opt.Rate the capture is exact
// (memray records every allocation); with it, the rows are read as a
// sampled capture with that mean sampling interval in bytes (see the
// package doc). With opt.KeepGoing a bad row is skipped with a warning
// instead of failing.
func Parse(name string, r *bufio.Reader, opt parse.Options, sink parse.Sink) (*parse.Profile, error) {
	d := &decoder{name: name, opt: opt, sink: sink, names: map[string]string{}, stacks: map[string]stackEntry{}}
	if err := d.run(r); err != nil {
		return nil, err
	}
	return d.profile(), nil
}

type decoder struct {
	name  string
	opt   parse.Options
	sink  parse.Sink
	prof  parse.Profile
	rec   parse.Record
	names map[string]string
	// stacks interns stack_trace cells: rows of one stack (different
	// allocators or threads) share its frames and id.
	stacks  map[string]stackEntry
	skipped []string
	samples float64
}

type stackEntry struct {
	frames []parse.Frame
	id     uint64
}

func (d *decoder) errLine(line int, err error, format string, args ...any) error {
	return &parse.Error{File: d.name, Line: line, Offset: -1, Msg: fmt.Sprintf(format, args...), Err: err}
}

func (d *decoder) run(r *bufio.Reader) error {
	tail := &tailReader{r: r}
	cr := csv.NewReader(tail)
	cr.FieldsPerRecord = 6
	cr.ReuseRecord = true
	first := true
	// Each row is read once the next one is, or the end: the last row of
	// a file that does not end its last line was cut.
	var pending []string
	pendingLine := 0
	for {
		row, err := cr.Read()
		if err == io.EOF {
			if first {
				return d.errLine(1, nil, "empty file: expected the header %q", header)
			}
			if pending != nil && tail.last != '\n' {
				return d.bad(pendingLine, errors.New("truncated: last line has no line ending"), "cut row")
			}
			return d.flushRow(pending, pendingLine)
		}
		line := 1
		if err == nil {
			line, _ = cr.FieldPos(0)
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			line = pe.StartLine
			if err := d.bad(line, pe.Err, "malformed CSV row (6 columns expected)"); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return d.errLine(line, err, "reading")
		}
		if first {
			first = false
			row[0] = strings.TrimPrefix(row[0], "\ufeff")
			if strings.Join(row, ",") != header {
				return d.errLine(line, nil, "expected the memray CSV header %q", header)
			}
			continue
		}
		if err := d.flushRow(pending, pendingLine); err != nil {
			return err
		}
		pending, pendingLine = append(pending[:0], row...), line
	}
}

// flushRow reads a row held for the next (none when row is nil).
func (d *decoder) flushRow(row []string, line int) error {
	if row == nil {
		return nil
	}
	if err := d.row(line, row); err != nil {
		return d.bad(line, err, "bad row")
	}
	return nil
}

// tailReader remembers the last byte read: a file whose last line has no
// line ending was cut.
type tailReader struct {
	r    io.Reader
	last byte
}

func (t *tailReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		t.last = p[n-1]
	}
	return n, err
}

// bad fails on a bad row, or with opt.KeepGoing skips it and remembers it
// for the warning.
func (d *decoder) bad(line int, err error, msg string) error {
	if !d.opt.KeepGoing {
		return d.errLine(line, err, "%s", msg)
	}
	d.skipped = append(d.skipped, fmt.Sprintf("line %d: %v", line, err))
	return nil
}

// row turns one CSV row into a record.
func (d *decoder) row(line int, row []string) error {
	n, err := strconv.ParseUint(row[1], 10, 63)
	if err != nil {
		return fmt.Errorf("num_allocations %q: want an integer ≥ 0", row[1])
	}
	size, err := strconv.ParseUint(row[2], 10, 63)
	if err != nil {
		return fmt.Errorf("size %q: want a byte count ≥ 0", row[2])
	}
	tid, err := strconv.ParseInt(row[3], 10, 64)
	if err != nil || tid < mergedTID {
		return fmt.Errorf("tid %q: want a thread id (or -1 for merged threads)", row[3])
	}
	if row[0] == "" {
		return errors.New("empty allocator")
	}
	frames, id, err := d.stack(row[5])
	if err != nil {
		return err
	}
	rec := &d.rec
	rec.Stack, rec.StackID = frames, id
	rec.Type = d.intern(row[0])
	rec.Thread = ""
	if tid != mergedTID {
		rec.Thread = d.intern(row[4])
	}
	c := parse.Counts{Objects: float64(n), Bytes: float64(size)}
	if d.opt.Rate > 0 {
		// An allocation sampled k times was recorded as k·R bytes: the
		// row's k samples are a Poisson count, and its bytes the
		// producer's estimate.
		rec.Scheme, rec.Rate = parse.Bernoulli, d.opt.Rate
		c.Enc, c.Samples = parse.Scaled, float64(size)/d.opt.Rate
	} else {
		rec.Scheme, rec.Rate = parse.Exact, 1
		c.Enc = parse.Raw
	}
	if c.Samples > 0 {
		d.samples += c.Samples
	} else {
		d.samples += c.Objects
	}
	rec.InUse = c
	d.prof.Records++
	d.sink.Record(rec)
	return nil
}

// stack parses a stack_trace cell: frames "function;file;line" joined by
// "|", the most recent call first (memray's order, and heapest's). The
// line is the last ';' field and the file the one before it, so a ';' in
// a function name survives; a '|' in a name cannot be told from the
// separator, as in memray's own format.
func (d *decoder) stack(cell string) ([]parse.Frame, uint64, error) {
	if e, ok := d.stacks[cell]; ok {
		return e.frames, e.id, nil
	}
	var frames []parse.Frame
	if cell != "" {
		parts := strings.Split(cell, "|")
		frames = make([]parse.Frame, len(parts))
		for i, p := range parts {
			rest, lineNo, ok1 := cut(p)
			fn, file, ok2 := cut(rest)
			if !ok1 || !ok2 {
				return nil, 0, fmt.Errorf("stack frame %d %q: want function;file;line", i+1, p)
			}
			line, err := strconv.ParseInt(lineNo, 10, 64)
			if err != nil {
				return nil, 0, fmt.Errorf("stack frame %d %q: line %q is not a number", i+1, p, lineNo)
			}
			name := frameName(fn, file)
			if d.opt.Lines && line > 0 {
				name = parse.LineName(fn, file, line)
			}
			frames[i].Func = d.intern(name)
		}
	}
	e := stackEntry{frames: frames, id: uint64(len(d.stacks) + 1)}
	d.stacks[strings.Clone(cell)] = e
	return e.frames, e.id, nil
}

// cut splits s at its last ';'.
func cut(s string) (before, after string, ok bool) {
	i := strings.LastIndexByte(s, ';')
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

// frameName names a frame "function (file)": Python function names repeat
// across modules (<module>, __init__, run), the file tells them apart; the
// line is left out so that --by func groups a function's lines.
func frameName(fn, file string) string {
	if file == "" {
		return fn
	}
	return fn + " (" + file + ")"
}

func (d *decoder) intern(s string) string {
	if v, ok := d.names[s]; ok {
		return v
	}
	v := strings.Clone(s)
	d.names[v] = v
	return v
}

func (d *decoder) profile() *parse.Profile {
	p := &d.prof
	p.Source.Format = "memray"
	p.Source.Samples = d.samples
	p.HasInUse = true
	if d.opt.Rate > 0 {
		p.Source.Rate = d.opt.Rate
		p.Source.Detail = "sampled capture (--rate)"
		p.Warnings = append(p.Warnings, fmt.Sprintf("memray's CSV does not say whether or how its capture was sampled: --rate %s is taken as the mean sampling interval in bytes "+
			"(a row's size is k samples × rate, Poisson intervals); a capture of every allocation (memray's default) must be read without --rate",
			parse.RateText(d.opt.Rate)))
	} else {
		p.Source.Detail = "every allocation recorded (exact)"
	}
	if len(d.skipped) > 0 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%d bad rows skipped (--keep-going): %s", len(d.skipped), strings.Join(d.skipped, "; ")))
		p.Source.Salvaged = true
	}
	return p
}
