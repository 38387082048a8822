package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"

	"github.com/heapest/heapest/report"
)

// jsonReport is the JSON shape of SPEC section 6. The total and the rows
// are written from the layout's machine columns.
type jsonReport struct {
	Confidence float64      `json:"confidence"`
	Value      string       `json:"value"`
	Unit       string       `json:"unit"`
	By         string       `json:"by"`
	Sources    []jsonSource `json:"sources"`
	Total      jsonObject   `json:"total"`
	Rows       []jsonObject `json:"rows"`
	Merged     *jsonMerged  `json:"merged,omitempty"`
	Omitted    int          `json:"omitted,omitempty"`
	Notes      []string     `json:"notes,omitempty"`
	// Filters are the active --focus and --ignore, Unfiltered the total
	// before them.
	Filters    *jsonFilters `json:"filters,omitempty"`
	Unfiltered *float64     `json:"unfiltered_total,omitempty"`
	// Hide is --hide: the frames of functions it matches are gone from
	// every stack.
	Hide string `json:"hide,omitempty"`
	// Warnings are the inputs' warnings, as standard error shows them.
	Warnings []string `json:"warnings,omitempty"`
}

type jsonSource struct {
	Path    string  `json:"path"`
	Format  string  `json:"format"`
	Rate    float64 `json:"rate"`
	Samples float64 `json:"samples"`
	Detail  string  `json:"detail,omitempty"`
	// Salvaged: --keep-going kept only what preceded damage.
	Salvaged bool `json:"salvaged,omitempty"`
}

type jsonFilters struct {
	Focus  string `json:"focus,omitempty"`
	Ignore string `json:"ignore,omitempty"`
}

// jsonMerged is what a merge was made of (report.Report.Merged).
type jsonMerged struct {
	Inputs    int            `json:"inputs"`
	Formats   map[string]int `json:"formats"`
	RateMin   float64        `json:"rate_min"`
	RateMax   float64        `json:"rate_max"`
	Builds    []string       `json:"builds"`
	Processes int            `json:"processes"`
	// Skipped counts the inputs left out, here and in merges underneath;
	// SkippedInputs names those of this run, SkippedBelow gives the
	// errors of those the merges underneath left out.
	Skipped       int        `json:"skipped"`
	SkippedInputs []jsonSkip `json:"skipped_inputs,omitempty"`
	SkippedBelow  []string   `json:"skipped_below,omitempty"`
}

type jsonSkip struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

func newJSONMerged(r *report.Report) *jsonMerged {
	if !r.IsMerge() {
		return nil
	}
	m := r.Merged
	out := &jsonMerged{Inputs: m.Inputs, Formats: m.Formats, RateMin: m.RateMin, RateMax: m.RateMax,
		Builds: m.Builds, Processes: m.Processes, Skipped: m.Skipped}
	if out.Builds == nil {
		out.Builds = []string{}
	}
	for _, s := range r.Skipped {
		out.SkippedInputs = append(out.SkippedInputs, jsonSkip{Path: s.Path, Error: s.Err.Error()})
	}
	out.SkippedBelow = m.SkippedWhy
	return out
}

// writeJSON writes r as JSON with every number unrounded.
func writeJSON(w io.Writer, r *report.Report) error {
	l := newLayout(r)
	out := jsonReport{Confidence: r.Confidence, Value: r.Value.String(), Unit: r.Value.Unit(), By: r.By.String(),
		Total: jsonTotal(l.machine, &r.Total), Rows: []jsonObject{}, Omitted: r.Omitted, Notes: r.Notes, Merged: newJSONMerged(r), Hide: r.Hidden, Warnings: r.Warnings}
	if r.Filters != nil {
		u := r.Unfiltered
		out.Filters, out.Unfiltered = &jsonFilters{Focus: r.Filters.Focus, Ignore: r.Filters.Ignore}, &u
	}
	out.Sources = jsonSources(r)
	var doc bytes.Buffer
	enc := json.NewEncoder(&doc)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	return writeRows(w, doc.Bytes(), l.machine, r.Rows)
}

// jsonSources are r's inputs, as JSON names them.
func jsonSources(r *report.Report) []jsonSource {
	var out []jsonSource
	for _, s := range r.Sources {
		out = append(out, jsonSource{Path: s.Path, Format: s.Format, Rate: s.Rate, Samples: s.Samples, Detail: s.Detail, Salvaged: s.Salvaged})
	}
	return out
}

// writeRows writes doc, a report encoded with an empty list of rows, with
// the rows in that list, encoded and indented one at a time as the whole
// document would have them: encoding them with the rest held every row of
// a report of hundreds of thousands twice in memory.
func writeRows(w io.Writer, doc []byte, cols []column, rows []report.Row) error {
	const empty = "\n  \"rows\": []" // top level: two spaces, and no string holds a newline
	if len(rows) == 0 {
		_, err := w.Write(doc)
		return err
	}
	i := bytes.Index(doc, []byte(empty))
	if i < 0 {
		return errors.New("json: the report's empty list of rows is not where it belongs")
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(doc[:i+len(empty)-1])
	bw.WriteString("\n")
	var b []byte
	for k := range rows {
		// Written indented, the bytes MarshalIndent gives, without its
		// check and compaction of what MarshalJSON wrote and its second
		// pass to indent it: a --by stack --top 0 row is 2 KB of JSON.
		var err error
		if b, err = jsonRow(cols, &rows[k]).appendIndented(b[:0], "    ", "  "); err != nil {
			return err
		}
		bw.WriteString("    ")
		bw.Write(b)
		if k < len(rows)-1 {
			bw.WriteByte(',')
		}
		bw.WriteByte('\n')
	}
	bw.WriteString("  ]")
	bw.Write(doc[i+len(empty):])
	return bw.Flush()
}

// jsonTotal is the total: its flat measure alone, with no key.
func jsonTotal(cols []column, row *report.Row) jsonObject {
	var obj jsonObject
	c := &cell{row: row}
	for _, col := range cols {
		if col.of == flatMeasure {
			obj = obj.add(col, c)
		}
	}
	return obj
}

// jsonRow is a row: its key and flat measure, then each other measure the
// row has as a nested object named by its group ("cum").
func jsonRow(cols []column, row *report.Row) jsonObject {
	var obj jsonObject
	var groups []*measure
	nested := map[*measure]jsonObject{}
	c := &cell{row: row}
	for _, col := range cols {
		if col.of == nil || col.of.group == "" {
			obj = obj.add(col, c)
			continue
		}
		if _, _, ok := col.of.get(row); !ok {
			continue
		}
		if _, seen := nested[col.of]; !seen {
			groups = append(groups, col.of)
		}
		nested[col.of] = nested[col.of].add(col, c)
	}
	for _, m := range groups {
		obj = append(obj, jsonMember{m.group, nested[m]})
	}
	return obj
}

// jsonObject is a JSON object whose keys keep the columns' order.
type jsonObject []jsonMember

type jsonMember struct {
	key   string
	value any
}

// add appends col's value for c, unless the column leaves it out.
func (o jsonObject) add(col column, c *cell) jsonObject {
	if v, ok := col.json(c); ok {
		return append(o, jsonMember{col.name, v})
	}
	return o
}

// MarshalJSON writes the members in order, each value as encoding/json
// writes it.
func (o jsonObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(m.key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(m.value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// appendIndented appends o as json.Indent lays out its MarshalJSON's
// bytes, with prefix before each line but the first: members one a line,
// keys and scalars as encoding/json writes them, nested objects and lists
// of strings laid out alike (TestAppendIndented).
func (o jsonObject) appendIndented(b []byte, prefix, indent string) ([]byte, error) {
	if len(o) == 0 {
		return append(b, "{}"...), nil
	}
	in := prefix + indent
	b = append(b, '{')
	for i, m := range o {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(b, '\n'), in...)
		k, err := json.Marshal(m.key)
		if err != nil {
			return nil, err
		}
		b = append(append(b, k...), ": "...)
		if b, err = appendIndentedValue(b, m.value, in, indent); err != nil {
			return nil, err
		}
	}
	return append(append(append(b, '\n'), prefix...), '}'), nil
}

// appendIndentedValue is appendIndented for one value.
func appendIndentedValue(b []byte, v any, prefix, indent string) ([]byte, error) {
	var enc []byte
	var err error
	switch v := v.(type) {
	case jsonObject:
		return v.appendIndented(b, prefix, indent)
	case []string:
		if len(v) == 0 {
			enc, err = json.Marshal(v) // null or []
			break
		}
		b = append(b, '[')
		for i, s := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(append(append(b, '\n'), prefix...), indent...)
			if enc, err = json.Marshal(s); err != nil {
				return nil, err
			}
			b = append(b, enc...)
		}
		return append(append(append(b, '\n'), prefix...), ']'), nil
	case string, float64, bool, nil:
		enc, err = json.Marshal(v)
	default:
		enc, err = json.MarshalIndent(v, prefix, indent)
	}
	if err != nil {
		return nil, err
	}
	return append(b, enc...), nil
}

// finite keeps JSON valid: an unbounded limit is written as the largest
// float64 of its sign (JSON has no infinity), as every JSON output of
// heapest writes it, so a consumer's comparison with it still holds.
func finite(x float64) float64 {
	switch {
	case math.IsInf(x, 1):
		return math.MaxFloat64
	case math.IsInf(x, -1):
		return -math.MaxFloat64
	}
	return x
}

// nullable is x for JSON: null where x is no number (a test not made),
// and an infinite x (a new row's ratio, an unbounded end) as finite
// writes it.
func nullable(x float64) *float64 {
	if math.IsNaN(x) {
		return nil
	}
	x = finite(x)
	return &x
}
