// Package dhat reads DHAT's heap profiles: the JSON that Valgrind's DHAT
// (valgrind --tool=dhat, dhat.out.PID) and Rust's dhat crate
// (dhat-heap.json) write for DHAT's viewer, dh_view.html. DHAT records
// every allocation, so the profile is exact: per program point (a stack),
// the bytes and blocks allocated over the whole run, live at the global
// peak (t-gmax) and live at the end (t-end). heapest reads the peak as in
// use (as it reads memray's high-water mark: a C++ program's globals are
// gone by the end, its t-end empty) and the run's total as allocated;
// what was live at the end is said in the source's detail.
//
// The format is Valgrind's docs/dhat-manual and dh_view.js (read at
// Valgrind 3.19 and dhat-rs 0.3): a JSON object whose first key is
// "dhatFileVersion" (2), "mode" ("heap" or "rust-heap"; "copy" and
// "ad-hoc" profiles count other things), "pps" (program points: "tb" and
// "tbk" the total bytes and blocks, "gb"/"gbk" at t-gmax, "eb"/"ebk" at
// t-end, "fs" the frames, indices into "ftbl", leaf first) and "ftbl", the
// frame table: "[root]" first, then one "0xADDR: function (file:line)" or
// "0xADDR: function (in object)" per frame.
package dhat

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/heapest/heapest/parse"
)

// prefix is how every DHAT file starts, whitespace aside.
const prefix = `{"dhatFileVersion"`

// Detect reports whether head starts like a DHAT file.
func Detect(head []byte) bool {
	return parse.JSONStarts(head, prefix)
}

// file is a DHAT file, as much of it as heapest reads.
type file struct {
	Version *int   `json:"dhatFileVersion"`
	Mode    string `json:"mode"`
	// Lifetimes ("bklt") says blocks' lifetimes were recorded, and with
	// them what was live at the peak and at the end.
	Lifetimes *bool    `json:"bklt"`
	Cmd       string   `json:"cmd"`
	PID       int64    `json:"pid"`
	Pps       []point  `json:"pps"`
	Ftbl      []string `json:"ftbl"`
}

// point is a program point: an allocation stack and its counts.
type point struct {
	TB  *int64  `json:"tb"`
	TBk *int64  `json:"tbk"`
	GB  *int64  `json:"gb"`
	GBk *int64  `json:"gbk"`
	EB  int64   `json:"eb"`
	EBk int64   `json:"ebk"`
	Fs  []int64 `json:"fs"`
}

// Parse reads a DHAT file and sends a record per program point to sink.
// name is used in errors. With opt.Lines, frames are named by line.
func Parse(name string, r *bufio.Reader, opt parse.Options, sink parse.Sink) (*parse.Profile, error) {
	var f file
	dec := json.NewDecoder(r)
	if err := dec.Decode(&f); err != nil {
		var se *json.SyntaxError
		off := int64(-1)
		if errors.As(err, &se) {
			off = se.Offset
		}
		return nil, &parse.Error{File: name, Offset: off, Msg: "not a valid DHAT file (JSON)", Err: err}
	}
	if err := parse.JSONEnd(dec); err != nil {
		return nil, &parse.Error{File: name, Offset: -1, Msg: "DHAT file", Err: err}
	}
	if err := f.check(); err != nil {
		return nil, &parse.Error{File: name, Offset: -1, Msg: "DHAT file", Err: err}
	}
	frames, err := frameTable(f.Ftbl, opt.Lines)
	if err != nil {
		return nil, &parse.Error{File: name, Offset: -1, Msg: "DHAT frame table", Err: err}
	}
	live := f.Lifetimes == nil || *f.Lifetimes
	p := &parse.Profile{HasInUse: live, HasAlloc: true, AllocatorNamed: true}
	var rec parse.Record
	var end, endBlocks, blocks float64
	for i, pt := range f.Pps {
		if err := pt.check(len(frames), live); err != nil {
			return nil, &parse.Error{File: name, Offset: -1, Msg: fmt.Sprintf("DHAT program point %d", i), Err: err}
		}
		rec.Stack = rec.Stack[:0]
		for _, fi := range pt.Fs {
			rec.Stack = append(rec.Stack, frames[fi])
		}
		rec.Scheme, rec.Rate = parse.Exact, 1
		rec.InUse = parse.Counts{}
		if live {
			rec.InUse = parse.Counts{Objects: float64(*pt.GBk), Bytes: float64(*pt.GB), Enc: parse.Raw}
		}
		rec.Alloc = parse.Counts{Objects: float64(*pt.TBk), Bytes: float64(*pt.TB), Enc: parse.Raw}
		p.Records++
		sink.Record(&rec)
		end, endBlocks, blocks = end+float64(pt.EB), endBlocks+float64(pt.EBk), blocks+float64(*pt.TBk)
	}
	p.Source.Format = "dhat"
	p.Source.Samples = blocks
	p.Source.Detail = fmt.Sprintf("every allocation recorded (exact); in use at the peak (t-gmax); at the end (t-end) %s B in %s blocks",
		strconv.FormatFloat(end, 'f', -1, 64), strconv.FormatFloat(endBlocks, 'f', -1, 64))
	if !live {
		p.Source.Detail = "every allocation recorded (exact); no block lifetimes (bklt false): allocations only"
	}
	if f.Cmd != "" {
		p.Source.Detail = fmt.Sprintf("%s, pid %d, %s", f.Cmd, f.PID, p.Source.Detail)
	}
	if opt.Rate > 0 {
		p.Warnings = append(p.Warnings, "--rate: a DHAT profile records every allocation: it has no sampling period, and none was used")
	}
	return p, nil
}

// check checks what the whole file must be: a DHAT heap profile.
func (f *file) check() error {
	switch {
	case f.Version == nil:
		return errors.New("no dhatFileVersion")
	case *f.Version != 2:
		return fmt.Errorf("dhatFileVersion %d: heapest reads version 2, which Valgrind 3.19's DHAT and dhat-rs write", *f.Version)
	case f.Mode != "heap" && f.Mode != "rust-heap":
		return fmt.Errorf("mode %q: not a heap profile (DHAT's copy and ad-hoc profiles count copies and events, not allocations)", f.Mode)
	case len(f.Ftbl) == 0:
		return errors.New("no frame table (ftbl)")
	}
	return nil
}

// check checks a program point's counts and frame indices (nframes
// frames, the root first); live says the file has what was live at the
// peak.
func (pt *point) check(nframes int, live bool) error {
	switch {
	case pt.TB == nil || pt.TBk == nil:
		return errors.New("want tb and tbk")
	case live && (pt.GB == nil || pt.GBk == nil):
		return errors.New("want gb and gbk (block lifetimes are recorded: bklt)")
	}
	for _, v := range []int64{*pt.TB, *pt.TBk, pt.EB, pt.EBk} {
		if v < 0 {
			return fmt.Errorf("count %d: want ≥ 0", v)
		}
	}
	if live && (*pt.GB < 0 || *pt.GBk < 0) {
		return fmt.Errorf("count %d, %d: want ≥ 0", *pt.GB, *pt.GBk)
	}
	if live && (*pt.GB > *pt.TB || *pt.GBk > *pt.TBk) {
		return fmt.Errorf("%d bytes in %d blocks live at the peak, of %d bytes in %d blocks allocated", *pt.GB, *pt.GBk, *pt.TB, *pt.TBk)
	}
	for _, fi := range pt.Fs {
		if fi <= 0 || fi >= int64(nframes) {
			return fmt.Errorf("frame %d: want an index of the frame table, 1 to %d", fi, nframes-1)
		}
	}
	return nil
}

// frameTable turns the frame table into frames (the root, index 0, is
// none).
func frameTable(ftbl []string, lines bool) ([]parse.Frame, error) {
	frames := make([]parse.Frame, len(ftbl))
	for i, s := range ftbl[1:] {
		fr, err := frame(s, lines)
		if err != nil {
			return nil, fmt.Errorf("frame %d %q: %v", i+1, s, err)
		}
		frames[i+1] = fr
	}
	return frames, nil
}

// frame reads "0xADDR: function (file:line[:column])" or "0xADDR: function
// (in object)"; "???" is a function DHAT could not name, "object!0xADDR"
// when its object is known.
func frame(s string, lines bool) (parse.Frame, error) {
	addr, rest, ok := strings.Cut(s, ": ")
	if !ok || !strings.HasPrefix(addr, "0x") {
		return parse.Frame{}, errors.New(`want "0xADDRESS: function (where)"`)
	}
	a, err := strconv.ParseUint(addr[2:], 16, 64)
	if err != nil {
		return parse.Frame{}, fmt.Errorf("address %q", addr)
	}
	fn, where := strings.TrimSpace(rest), ""
	if i := strings.LastIndex(rest, " ("); i >= 0 && strings.HasSuffix(rest, ")") {
		fn, where = rest[:i], rest[i+2:len(rest)-1]
	}
	if obj, ok := strings.CutPrefix(where, "in "); fn == "???" && ok {
		// DHAT could not name it, but knows its file: the frame is that
		// file's, at the address it ran at (no offset in the file is given).
		fn = filepath.Base(obj) + "!" + addr
	} else if fn == "???" {
		fn = ""
	}
	if lines && fn != "" && !strings.HasPrefix(where, "in ") {
		file, line := position(where)
		fn = parse.LineName(fn, file, line)
	}
	return parse.Frame{Addr: a, Func: fn}, nil
}

// position splits "file:line" or "file:line:column" (dhat-rs); line 0
// when there is none.
func position(where string) (file string, line int64) {
	file, last, ok := cutNumber(where)
	if !ok {
		return where, 0
	}
	if f, l, ok := cutNumber(file); ok {
		return f, l // file:line:column
	}
	return file, last
}

// cutNumber cuts ":N" off the end of s.
func cutNumber(s string) (string, int64, bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return s, 0, false
	}
	n, err := strconv.ParseInt(s[i+1:], 10, 64)
	if err != nil || n < 0 {
		return s, 0, false
	}
	return s[:i], n, true
}
