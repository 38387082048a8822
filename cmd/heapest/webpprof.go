package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/driver"
	"github.com/google/pprof/profile"

	"github.com/heapest/heapest/render"
	"github.com/heapest/heapest/report"
)

// pprof's web UI is run through its driver package with every plugin
// heapest's own: the profile comes from memory, the flags from here, its
// messages go to standard error, and it opens no file and runs no program.

// unbiasedProfile is the profile --format pprof writes of what b read,
// parsed back for pprof's driver.
func unbiasedProfile(b *report.Builder) (*profile.Profile, error) {
	st, err := b.Stacks()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := render.WritePprof(&buf, st); err != nil {
		return nil, fmt.Errorf("writing the unbiased profile: %w", err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		return nil, fmt.Errorf("reading back the unbiased profile: %w", err)
	}
	return p, nil
}

// maxSourceFile bounds the files pprof's source view may read: far above
// any source file.
const maxSourceFile = 64 << 20

// unreadableSources clears the file names of p's functions that pprof's
// source view must not open: where the file it would open (sourceFile) is
// anything but a regular file of at most maxSourceFile (a profile naming
// /dev/urandom or a FIFO would make the view read without end), and
// returns those names. A file that is not there stays named: the view
// says it found no source.
func unreadableSources(p *profile.Profile) []string {
	wd, err := os.Getwd()
	if err != nil {
		wd = "/"
	}
	verdict := map[string]bool{} // name: to clear
	var cleared []string
	for _, f := range p.Function {
		if f.Filename == "" {
			continue
		}
		clear, seen := verdict[f.Filename]
		if !seen {
			if path := sourceFile(f.Filename, wd); path != "" {
				fi, err := os.Stat(path)
				clear = err == nil && (!fi.Mode().IsRegular() || fi.Size() > maxSourceFile)
			}
			verdict[f.Filename] = clear
			if clear {
				cleared = append(cleared, f.Filename)
			}
		}
		if clear {
			f.Filename = ""
		}
	}
	return cleared
}

// sourceFile is the file pprof's source view opens for a function's file
// name, as pprof finds it with its search path the working directory wd:
// the name trimmed (of /proc/self/cwd/, and up to a directory named as
// wd's last), then as it is if absolute, else under wd or the first of
// its parents where something is there. "" when nothing is.
func sourceFile(name, wd string) string {
	p := pprofTrim(pprofTrim(name, ""), wd) // the report trims, then the source reader
	if filepath.IsAbs(p) {
		if _, err := os.Stat(p); err == nil {
			return p
		}
		return ""
	}
	for dir := wd; ; {
		c := filepath.Join(dir, p)
		if _, err := os.Stat(c); err == nil {
			return c
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// pprofTrim is pprof's trimming of a source file's name with no trim path
// set and search path dir ("" for none).
func pprofTrim(name, dir string) string {
	s := filepath.ToSlash(name)
	if dir != "" {
		want := "/" + filepath.Base(dir) + "/"
		if i := strings.Index(s, want); i >= 0 {
			return name[i+len(want):]
		}
	}
	for _, prefix := range []string{"/proc/self/cwd/./", "/proc/self/cwd/"} {
		if strings.HasPrefix(s, prefix) {
			return name[len(prefix):]
		}
	}
	return name
}

// pprofHandlers runs pprof's driver on p and returns its web UI's
// handlers by path ("/top", "/flamegraph", ...). hostport is only what
// pprof would print: heapest serves the handlers itself.
func pprofHandlers(p *profile.Profile, hostport string, stderr io.Writer) (map[string]http.Handler, error) {
	var handlers map[string]http.Handler
	err := driver.PProf(&driver.Options{
		Fetch: fetcher{p},
		Flagset: &pprofFlags{args: []string{"heapest"}, set: map[string]string{
			"http": hostport, "no_browser": "true", "symbolize": "none"}},
		UI:  quietUI{stderr},
		Obj: noObjects{},
		HTTPServer: func(args *driver.HTTPServerArgs) error {
			handlers = args.Handlers
			return nil
		},
	})
	if err != nil {
		return nil, fmt.Errorf("pprof's web UI: %w", err)
	}
	if handlers == nil {
		return nil, errors.New("pprof's web UI: the driver registered no handlers")
	}
	return handlers, nil
}

// fetcher hands pprof the profile heapest built. It names no source, so
// pprof neither saves a copy of it nor looks for mapped binaries there.
// pprof fetches its one source once, and copies the profile for each
// view it makes: the profile is pprof's, not copied first (a copy of a
// profile of a million samples is a gigabyte more).
type fetcher struct{ p *profile.Profile }

func (f fetcher) Fetch(string, time.Duration, time.Duration) (*profile.Profile, string, error) {
	return f.p, "", nil
}

// pprofFlags is the flag set pprof's driver parses: every flag at its
// default but those set, and args as the command line's sources.
type pprofFlags struct {
	args []string
	set  map[string]string
}

func (f *pprofFlags) Bool(name string, def bool, _ string) *bool {
	v := def
	if s, ok := f.set[name]; ok {
		v, _ = strconv.ParseBool(s)
	}
	return &v
}

func (f *pprofFlags) Int(name string, def int, _ string) *int {
	v := def
	if s, ok := f.set[name]; ok {
		v, _ = strconv.Atoi(s)
	}
	return &v
}

func (f *pprofFlags) Float64(name string, def float64, _ string) *float64 {
	v := def
	if s, ok := f.set[name]; ok {
		v, _ = strconv.ParseFloat(s, 64)
	}
	return &v
}

func (f *pprofFlags) String(name string, def string, _ string) *string {
	v := def
	if s, ok := f.set[name]; ok {
		v = s
	}
	return &v
}

func (f *pprofFlags) StringList(string, string, string) *[]*string { return &[]*string{} }
func (f *pprofFlags) ExtraUsage() string                           { return "" }
func (f *pprofFlags) AddExtraUsage(string)                         {}
func (f *pprofFlags) Parse(func()) []string                        { return f.args }

// quietUI keeps pprof's messages ("Serving web UI on ...": heapest says
// where it serves) and shows its errors on standard error.
type quietUI struct{ stderr io.Writer }

func (quietUI) ReadLine(string) (string, error) { return "", io.EOF }
func (quietUI) Print(...any)                    {}
func (u quietUI) PrintErr(args ...any) {
	fmt.Fprintln(u.stderr, "heapest: pprof:", fmt.Sprint(args...))
}
func (quietUI) IsTerminal() bool                    { return false }
func (quietUI) WantBrowser() bool                   { return false }
func (quietUI) SetAutoComplete(func(string) string) {}

// noObjects opens no binary: pprof's source and disassembly views would
// otherwise read the files the profile's mappings name and run objdump
// on them, and heapest never runs a program an input names.
type noObjects struct{}

var errNoObjects = errors.New("heapest web reads no binaries (the profile is symbolized already)")

func (noObjects) Open(string, uint64, uint64, uint64, string) (driver.ObjFile, error) {
	return nil, errNoObjects
}

func (noObjects) Disasm(string, uint64, uint64, bool) ([]driver.Inst, error) {
	return nil, errNoObjects
}

// Compile-time checks that the plugins are what the driver takes.
var (
	_ driver.FlagSet = (*pprofFlags)(nil)
	_ driver.UI      = quietUI{}
	_ driver.ObjTool = noObjects{}
	_ driver.Fetcher = fetcher{}
)
