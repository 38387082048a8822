package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// column is one field of Row as Read fills it.
type column struct {
	name     string
	offset   uintptr // of the field in Row
	kind     reflect.Kind
	required bool
	list     bool
}

// columns are Row's fields by column name, from its struct tags: the one
// list of names the writer and the reader share.
var columns = rowColumns()

func rowColumns() map[string]column {
	out := map[string]column{}
	var walk func(t reflect.Type, at uintptr)
	walk = func(t reflect.Type, at uintptr) {
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Anonymous {
				walk(f.Type, at+f.Offset)
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("parquet"), ",")
			c := column{name: name, offset: at + f.Offset, kind: f.Type.Kind(), required: !strings.Contains(opts, "optional")}
			switch {
			case f.Type == reflect.TypeOf([]string(nil)):
				c.list, c.kind, c.required = true, reflect.String, false
			case f.Type != reflect.TypeOf(string("")) && f.Type != reflect.TypeOf(false) &&
				f.Type != reflect.TypeOf(int64(0)) && f.Type != reflect.TypeOf(float64(0)):
				// The setters write the fields through their offsets.
				panic("engine: Row field " + f.Name + " is a " + f.Type.String() + ", which Read cannot fill")
			}
			out[name] = c
		}
	}
	walk(reflect.TypeOf(Row{}), 0)
	return out
}

// ReadFile reads the rows of the Parquet file at path ("-": standard
// input, read whole: Parquet's footer is at its end).
func ReadFile(path string) ([]Row, error) {
	in, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	return Read(in, in.Size, in.Name)
}

// Input is an opened Parquet file: its bytes, their number, and its name
// for errors ("standard input" for "-").
type Input struct {
	io.ReaderAt
	Size  int64
	Name  string
	close func() error
}

// Close closes the file.
func (in *Input) Close() error { return in.close() }

// Open opens the Parquet file at path ("-": standard input, read whole:
// Parquet's footer is at its end).
func Open(path string) (*Input, error) {
	if path == "-" {
		b, err := io.ReadAll(os.Stdin)
		if err != nil {
			return nil, fmt.Errorf("standard input: %w", err)
		}
		return &Input{bytes.NewReader(b), int64(len(b)), "standard input", func() error { return nil }}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Input{f, st.Size(), path, f.Close}, nil
}

// Read reads the rows of a Parquet file of heapest's schema, written by
// heapest or by an engine that grouped heapest's rows: its columns are
// found by name, in any order, with any integer or floating-point type
// for numbers; columns Row has not are ignored. name is used in errors.
func Read(r io.ReaderAt, size int64, name string) (rows []Row, err error) {
	// not sized by the footer: a damaged one may claim any number of rows
	err = recovered(name, func() error {
		return scan(r, size, name, keepRows, func(row *Row) error {
			rows = append(rows, *row)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// recovered runs read, a damaged file's panic in parquet-go turned into
// an error: parquet-go trusts a file's footer and page headers, and a
// damaged file can make it index out of range. That is a bad input, not
// a crash.
func recovered(name string, read func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: damaged Parquet file (%v)", name, p)
		}
	}()
	return read()
}

// Scan reads the rows of a Parquet file as Read does, and calls fn with
// each, in order, without keeping them: a row's Key and Stack are valid
// only during the call (its other strings stay valid). A file of sample
// rows holds a distinct key of kilobytes per stack, which Read keeps. An
// error of fn stops the scan and is returned as it is.
func Scan(r io.ReaderAt, size int64, name string, fn func(row *Row) error) error {
	return recovered(name, func() error { return scan(r, size, name, transient, fn) })
}

// survey is Scan for a pass that reads no row's stack: every value is
// still decoded (a damaged page fails here as in Scan), but a stack's
// frames are not made strings, most of the work of reading sample rows.
func survey(r io.ReaderAt, size int64, name string, fn func(row *Row) error) error {
	return recovered(name, func() error { return scan(r, size, name, noStacks, fn) })
}

// scanMode is what scan gives each row.
type scanMode int

const (
	keepRows  scanMode = iota // Read's: the key interned, the stack its own (or the row before's)
	transient                 // Scan's: the key and the stack valid during fn only
	noStacks                  // survey's: as transient, every stack empty
)

// scan is Read, Scan and survey, as mode says.
func scan(r io.ReaderAt, size int64, name string, mode scanMode, fn func(row *Row) error) error {
	keep := mode == keepRows
	if err := checkFooter(r, size); err != nil {
		return fmt.Errorf("%s: not a Parquet file: %w", name, err)
	}
	f, err := parquet.OpenFile(r, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return fmt.Errorf("%s: not a Parquet file: %w", name, err)
	}
	if err := checkPages(f, r, size); err != nil {
		return fmt.Errorf("%s: damaged Parquet file: %w", name, err)
	}
	in := &strs{m: map[string]string{}}
	setters, err := bind(f.Schema(), in, keep)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if mode == noStacks {
		for i, path := range f.Schema().Columns() {
			if c, ok := columns[path[0]]; ok && c.list {
				setters[i] = nil
			}
		}
	}
	buf := make([]parquet.Row, 256)
	var st stacks
	var prev []string // the stack of the row read last
	n := 0            // rows read
	for _, rg := range f.RowGroups() {
		rows := rg.Rows()
		for {
			got, err := rows.ReadRows(buf)
			for _, pr := range buf[:got] {
				row := Row{Stack: st.room()}
				in.last = prev
				for _, v := range pr {
					if s := setters[v.Column()]; s != nil {
						if err := s(&row, v); err != nil {
							rows.Close()
							return fmt.Errorf("%s: row %d: %w", name, n+1, err)
						}
					}
				}
				if keep {
					row.Stack = st.keep(row.Stack)
				} else {
					st.buf = row.Stack[:0]
				}
				prev = row.Stack
				n++
				if err := fn(&row); err != nil {
					rows.Close()
					return err
				}
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				rows.Close()
				return fmt.Errorf("%s: row %d: %w", name, n+1, err)
			}
		}
		rows.Close()
	}
	return nil
}

// stacks gives the rows their stacks: read into one buffer, then shared
// with the row before when it has the same one (sample rows come a row
// per value of each stack), else copied at their length. A slice grown
// frame by frame for every row was the rows' largest part.
type stacks struct {
	buf, last []string
}

// room is where a row's stack is read.
func (s *stacks) room() []string { return s.buf[:0] }

// keep returns the stack read into room, to be kept with its row.
func (s *stacks) keep(read []string) []string {
	s.buf = read[:0]
	switch {
	case len(read) == 0:
		return nil
	case slices.Equal(read, s.last):
		return s.last
	}
	s.last = slices.Clone(read)
	return s.last
}

// setter stores one value of a column into a row.
type setter func(r *Row, v parquet.Value) error

// bind maps the file's leaf columns to Row's fields, checking that every
// required column is there once, with a type it can be read as.
func bind(s *parquet.Schema, in *strs, keep bool) ([]setter, error) {
	paths := s.Columns()
	setters := make([]setter, len(paths))
	seen := map[string]bool{}
	for i, path := range paths {
		c, ok := columns[path[0]]
		if !ok || (len(path) > 1) != c.list {
			continue // an engine's extra column, or a group of another shape
		}
		if seen[c.name] {
			return nil, fmt.Errorf("column %s appears twice", c.name)
		}
		seen[c.name] = true
		leaf, _ := s.Lookup(path...)
		set, err := newSetter(c, leaf.Node.Type().Kind(), decimalScale(leaf.Node.Type()), in, keep || c.name != "key")
		if err != nil {
			return nil, err
		}
		setters[i] = set
	}
	var missing []string
	for name, c := range columns {
		if c.required && !seen[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("not heapest's Parquet schema (%s): missing column%s %s", Schema, plural(len(missing)), strings.Join(missing, ", "))
	}
	return setters, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// decimalScale is the scale of a DECIMAL column (its values are the
// integers stored times 10^−scale), 0 for any other.
func decimalScale(t parquet.Type) int32 {
	lt := t.LogicalType()
	if lt == nil {
		return 0
	}
	if d, ok := lt.Value.(*format.DecimalType); ok {
		return d.Scale
	}
	return 0
}

// kindName says what a Parquet kind holds, in the words an SQL user
// knows.
func kindName(k parquet.Kind) string {
	switch k {
	case parquet.ByteArray:
		return "text (BYTE_ARRAY)"
	case parquet.FixedLenByteArray:
		return "a wide DECIMAL or other fixed-length bytes (FIXED_LEN_BYTE_ARRAY)"
	case parquet.Boolean:
		return "a boolean"
	}
	return "a number (" + k.String() + ")"
}

// strs interns the text a file's rows hold: sample rows repeat their
// frames' names in every stack and their key in every value's row, and a
// string each was most of the memory of reading them (2 GB for the 42 MB
// of a 30 MB dump's rows).
type strs struct {
	m map[string]string
	// last is the stack of the row read before: a sample row's stack is
	// the row before's (a row per value of each stack), or shares frames
	// with it, and comparing a frame's bytes with the one in its place
	// there costs a fraction of looking it up.
	last []string
}

// maxStrs is how many distinct strings strs keeps: past them, a file of
// text that never repeats is read as it was.
const maxStrs = 1 << 20

// of returns b as a string, the one kept when it was read before.
func (in *strs) of(b []byte) string {
	if s, ok := in.m[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(in.m) < maxStrs {
		in.m[s] = s
	}
	return s
}

// frame returns b, frame i of a stack, as a string: the last row's frame
// i when it has the same bytes, else the one kept.
func (in *strs) frame(i int, b []byte) string {
	if i < len(in.last) && in.last[i] == string(b) {
		return in.last[i]
	}
	return in.of(b)
}

// newSetter returns the setter of column c stored as Parquet kind k, a
// DECIMAL of the given scale when scale > 0; text goes through in when
// kept, else it is a view of the value's bytes, valid while they are.
func newSetter(c column, k parquet.Kind, scale int32, in *strs, kept bool) (setter, error) {
	numeric := k == parquet.Int32 || k == parquet.Int64 || k == parquet.Float || k == parquet.Double
	bad := func(want string) error {
		return fmt.Errorf("column %s is %s, want %s", c.name, kindName(k), want)
	}
	switch {
	case c.kind == reflect.String && k != parquet.ByteArray:
		return nil, bad("text")
	case c.kind == reflect.Bool && k != parquet.Boolean:
		return nil, bad("a boolean")
	case (c.kind == reflect.Int64 || c.kind == reflect.Float64) && !numeric:
		return nil, bad("a number (CAST it AS DOUBLE, or AS BIGINT for n_sum)")
	}
	unit := math.Pow10(-int(scale)) // a DECIMAL stores its unscaled integer
	return func(r *Row, v parquet.Value) error {
		if v.IsNull() {
			if c.required {
				return fmt.Errorf("column %s is null", c.name)
			}
			return nil
		}
		// The field's type is the kind's (rowColumns checks it).
		f := unsafe.Add(unsafe.Pointer(r), c.offset)
		switch {
		case c.list:
			stack := (*[]string)(f)
			*stack = append(*stack, in.frame(len(*stack), v.ByteArray()))
		case c.kind == reflect.String && !kept:
			b := v.ByteArray()
			*(*string)(f) = unsafe.String(unsafe.SliceData(b), len(b))
		case c.kind == reflect.String:
			*(*string)(f) = in.of(v.ByteArray())
		case c.kind == reflect.Bool:
			*(*bool)(f) = v.Boolean()
		case c.kind == reflect.Int64 && scale == 0 && v.Kind() == parquet.Int64:
			*(*int64)(f) = v.Int64() // exactly: a time in ns is beyond a float64's integers
		case c.kind == reflect.Int64:
			x := number(v) * unit
			if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
				return fmt.Errorf("column %s is %v, want a whole number", c.name, x)
			}
			*(*int64)(f) = int64(x)
		default:
			*(*float64)(f) = number(v) * unit
		}
		return nil
	}, nil
}

// number is a numeric value as a float64.
func number(v parquet.Value) float64 {
	switch v.Kind() {
	case parquet.Int32:
		return float64(v.Int32())
	case parquet.Int64:
		return float64(v.Int64())
	case parquet.Float:
		return float64(v.Float())
	}
	return v.Double()
}
