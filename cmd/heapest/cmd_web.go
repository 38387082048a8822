package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/heapest/heapest/aggregate"
	"github.com/heapest/heapest/internal/units"
	"github.com/heapest/heapest/render"
	"github.com/heapest/heapest/report"
)

// WebOptions are the flags of heapest web: report's selection flags, where
// to serve, and whether to open a browser.
type WebOptions struct {
	ReportOptions
	// HTTP is the address to listen on; loopback unless given otherwise.
	HTTP string
	// Open opens the page in a browser once it is served.
	Open bool
}

func newWebCommand() *cobra.Command {
	opts := WebOptions{ReportOptions: ReportOptions{Format: render.HTML}, HTTP: "127.0.0.1:0"}
	cmd := &cobra.Command{
		Use:   "web [flags] FILE...",
		Short: "A local web UI: heapest's table, interval chart and flame graph, and pprof's views",
		Long: `Web reads the profiles once, as report does (several are merged), and serves
a local web UI until interrupted (Ctrl-C):

  /             heapest's page, the same as --format html: the rows as a
                sortable, filterable table with each interval as a bar, the
                interval chart, and a flame graph whose frames are shaded by
                how wide their intervals are; a switcher regroups the rows
                (?by=stack)
  /report.json  the rows as report --format json writes them (?by= too)
  /ui/          pprof's own views (flame graph, top, graph, peek) of the
                unbiased profile, the one --format pprof writes

It listens on the loopback interface by default, on a free port, and says
where on standard error; --open also opens a browser. Every asset is
embedded: the pages make no request to any other host. An address that is
not loopback is served, with a warning: anyone who can connect sees the
profile. On loopback, a request for another host name is refused, and so
is, on any address, a request another site's page makes (403). See
docs/web.md.
` + exitStatusNoGate,
		Example: `  # Browse a jemalloc dump
  heapest web --open jeprof.1234.0.m0.heap

  # A fleet's dumps, merged, by whole stack, on a fixed port
  heapest web --by stack --http 127.0.0.1:8080 dumps/`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runWeb(cmd.Context(), cmd, opts, args)
		},
	}
	opts.inputOptions.addFlags(cmd)
	opts.addSelectFlags(cmd)
	f := cmd.Flags()
	f.BoolVar(&opts.LogScale, "log-scale", false, "draw the interval chart's value axis on a log scale")
	f.StringVar(&opts.HTTP, "http", opts.HTTP, "serve on `HOST:PORT` (port 0: a free one); a host that is not loopback is served with a warning")
	f.BoolVar(&opts.Open, "open", false, "open the page in a browser")
	// Where it serves is web's outcome, and an address beyond loopback
	// exposes the profile: neither is chatter to silence.
	f.Lookup("quiet").Usage = quietHelp + "; web still says where it serves, when it stops, and when --http is not loopback"
	return cmd
}

func runWeb(ctx context.Context, cmd *cobra.Command, opts WebOptions, args []string) error {
	if len(args) == 0 {
		return usageError{fmt.Errorf("no input: give the profiles to serve")}
	}
	ropt, err := opts.reportOptions(cmd)
	if err != nil {
		return usageError{err}
	}
	paths, err := opts.inputs(cmd, args, false)
	if err != nil {
		return err
	}
	// Every value, for pprof's views, and the sources' totals for the
	// --by switcher.
	ropt.AllValues, ropt.SourceTotals = true, true
	first, by, keyed := opts.webReadings(ropt, paths)
	// Listening first says at once that the address is bad or taken;
	// connections wait for the inputs to be read.
	ln, err := listen(opts.HTTP, cmd.ErrOrStderr())
	if err != nil {
		return usageError{err}
	}
	b, err := opts.read(first, paths, cmd.ErrOrStderr())
	if err != nil {
		ln.Close()
		return err
	}
	srv, err := newWebServer(b, keyed, by, opts, ln.Addr().String(), cmd.ErrOrStderr())
	if err != nil {
		ln.Close()
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Once stopping, a second interrupt ends the process at once.
	context.AfterFunc(ctx, stop)
	return serve(ctx, srv, ln, opts.Open, cmd.ErrOrStderr(), opts.chatter(cmd.ErrOrStderr()))
}

// webReadings plans the readings of the inputs: the first one's options,
// the page's default grouping (nil: the first reading's), and how the
// inputs are read again (nil: never). The rows by thread or size are of
// cells kept apart by thread (a jemalloc dump's per-thread lines, not its
// t* lines) or size: the inputs are read again for them when asked,
// --by thread's too, so that every other grouping's numbers are report's.
// Standard input and URLs are not read again (one is gone, the other may
// have changed): their first reading keeps every key.
func (opts WebOptions) webReadings(ropt report.Options, paths []string) (first report.Options, by *aggregate.By, keyed func(aggregate.Keys, io.Writer) (*report.Builder, error)) {
	first = ropt
	if k := aggregate.KeysFor(ropt.By); !ropt.DefaultBy && (k.Thread || k.Size) {
		first.By, by = aggregate.ByFunc, &ropt.By // which keeps neither key
	}
	if onceOnly(paths) {
		first.ExtraKeys = aggregate.Keys{Thread: true, Size: true}
		return first, by, nil
	}
	keyed = func(keys aggregate.Keys, stderr io.Writer) (*report.Builder, error) {
		o := first
		o.ExtraKeys = keys
		return opts.read(o, paths, stderr)
	}
	return first, by, keyed
}

// listen opens addr, loopback when its host is empty; a host that is not
// loopback is allowed (it was asked for) with a warning.
func listen(addr string, stderr io.Writer) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--http %s: want HOST:PORT, such as 127.0.0.1:8080: %v", addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if !isLoopback(host) {
		fmt.Fprintf(stderr, "heapest: warning: --http %s is not a loopback address: anyone who can connect to it sees this profile (there is no authentication)\n", addr)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("--http %s: %w", addr, err)
	}
	return ln, nil
}

// isLoopback reports whether host names only loopback addresses.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serve runs srv on ln until ctx ends, then shuts it down, letting
// requests under way finish for a few seconds. Where it serves goes to
// stderr, always (it is the command's outcome); warnings go to notes
// (nowhere with --quiet).
func serve(ctx context.Context, srv *http.Server, ln net.Listener, open bool, stderr, notes io.Writer) error {
	url := "http://" + browsable(ln.Addr()) + "/"
	fmt.Fprintf(stderr, "heapest: serving web UI on %s (pprof's views: %sui/); Ctrl-C stops\n", url, url)
	if open {
		// The opener's verdict comes while the server runs: it is waited
		// for (no zombie), and a failure (xdg-open on a machine with no
		// desktop) is said, not dropped.
		failed := openBrowser(url)
		go func() {
			if err := <-failed; err != nil {
				fmt.Fprintf(notes, "heapest: warning: could not open a browser (%v): open %s yourself\n", err, url)
			}
		}()
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serving %s: %w", url, err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	cut := ""
	if err := srv.Shutdown(shutdown); errors.Is(err, context.DeadlineExceeded) {
		// Asked to stop, it stops: what is still under way is cut off.
		srv.Close()
		cut = fmt.Sprintf(" (requests still under way after %v were cut off)", shutdownGrace)
	} else if err != nil {
		return fmt.Errorf("stopping the server: %w", err)
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	fmt.Fprintf(stderr, "heapest: stopped%s\n", cut)
	return nil
}

// shutdownGrace is how long an interrupted server lets requests under way
// finish.
const shutdownGrace = 5 * time.Second

// browsable is the HOST:PORT a browser on this machine reaches a
// listener at: for one on every address (0.0.0.0, [::]), localhost.
func browsable(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok && t.IP.IsUnspecified() {
		return net.JoinHostPort("localhost", strconv.Itoa(t.Port))
	}
	return a.String()
}

// openBrowser asks the desktop to open url, and says on the channel
// returned whether that failed: its exit status, once it has exited (nil
// for success). Its output goes nowhere, as the browser's it starts does:
// a pipe of heapest's would outlive heapest, and end the browser with
// SIGPIPE on its next write.
func openBrowser(url string) <-chan error {
	name, args := "xdg-open", []string{url}
	switch runtime.GOOS {
	case "darwin":
		name = "open"
	case "windows":
		name, args = "rundll32", []string{"url.dll,FileProtocolHandler", url}
	}
	done := make(chan error, 1)
	cmd := exec.Command(name, args...)
	if err := cmd.Start(); err != nil {
		done <- err
		return done
	}
	go func() {
		err := cmd.Wait()
		if err != nil {
			err = fmt.Errorf("%s: %w", name, err)
		}
		done <- err
	}()
	return done
}

// webServer serves heapest's page and JSON for any grouping of the inputs
// read once, and pprof's views under /ui/.
type webServer struct {
	b    *report.Builder
	opts WebOptions
	by   aggregate.By // the grouping asked for on the command line
	// keyed reads the inputs again into a builder that keeps keys the
	// first reading did not (nil: it kept them all); byKey holds those
	// read, by grouping.
	keyed func(aggregate.Keys, io.Writer) (*report.Builder, error)
	byKey map[aggregate.By]*report.Builder
	// mu serializes the builders' use; pages caches each grouping's
	// page and JSON.
	mu     sync.Mutex
	pages  map[string][]byte
	stderr io.Writer
}

// newWebServer serves what b read, by default grouped by by (nil: as b's
// report is); keyed reads the inputs again for groupings by thread or size
// (nil: b keeps their keys).
func newWebServer(b *report.Builder, keyed func(aggregate.Keys, io.Writer) (*report.Builder, error), by *aggregate.By, opts WebOptions, hostport string, stderr io.Writer) (*http.Server, error) {
	r, err := b.Report()
	if err != nil {
		return nil, err
	}
	opts.warnNotices(stderr, r)
	if by == nil {
		by = &r.By
	}
	s := &webServer{b: b, opts: opts, by: *by, keyed: keyed, byKey: map[aggregate.By]*report.Builder{},
		pages: map[string][]byte{}, stderr: stderr}
	p, err := unbiasedProfile(b)
	if err != nil {
		return nil, err
	}
	if bad := unreadableSources(p); len(bad) > 0 {
		fmt.Fprintf(opts.chatter(stderr), "heapest: warning: pprof's source view will not read %s the profile names, not regular files of at most %s: %s\n",
			render.Plural(len(bad), "file"), units.Format(maxSourceFile, true), strings.Join(bad[:min(len(bad), 3)], ", "))
	}
	handlers, err := pprofHandlers(p, hostport, stderr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("GET /report.json", s.json)
	mountPprof(mux, handlers)
	return &http.Server{Handler: guard(mux, loopbackOnly(hostport)), ReadHeaderTimeout: 10 * time.Second}, nil
}

// guard refuses what a page of another site can make a browser ask of a
// server on this machine: requests for another host name, which reach a
// loopback server through DNS rebinding (the page could then read the
// profile), and requests a page of another site made (an image or a form
// aimed at the port: browsers say so in Sec-Fetch-Site). Pages are not
// to be framed by another site either.
func guard(h http.Handler, loopback bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if loopback && !localHost(r.Host) {
			http.Error(w, fmt.Sprintf("heapest web serves only requests for localhost or a loopback address, not for %q", r.Host), http.StatusForbidden)
			return
		}
		if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
			http.Error(w, "heapest web serves no request another site's page makes: open its address yourself", http.StatusForbidden)
			return
		}
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Content-Security-Policy", "frame-ancestors 'none'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}

// loopbackOnly reports whether a listening address (HOST:PORT) is a
// loopback one: its requests then name localhost or a loopback address.
func loopbackOnly(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	return err == nil && isLoopback(host)
}

// localHost reports whether a request's Host names this machine's
// loopback: localhost (or a name under .localhost) or a loopback address,
// with or without a port.
func localHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	return host == "localhost" || strings.HasSuffix(host, ".localhost") || isLoopback(host)
}

// mountPprof serves pprof's handlers under /ui/. pprof's own "/" redirects
// relative to the path it sees, which would leave /ui/: /ui/ redirects to
// its flame graph here instead.
func mountPprof(mux *http.ServeMux, handlers map[string]http.Handler) {
	for path, h := range handlers {
		switch path {
		case "/":
		case "/saveconfig", "/deleteconfig":
			// pprof writes and deletes the user's saved configurations
			// (~/.config/pprof/settings.json) on a GET; heapest's UI
			// changes nothing on this machine.
			mux.Handle("/ui"+path, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "heapest web saves no pprof configuration: the URL holds the view's settings", http.StatusForbidden)
			}))
		default:
			mux.Handle("/ui"+path, http.StripPrefix("/ui", h))
		}
	}
	mux.Handle("GET /ui/{$}", http.RedirectHandler("/ui/flamegraph", http.StatusFound))
	mux.Handle("GET /ui", http.RedirectHandler("/ui/", http.StatusMovedPermanently))
}

// page serves heapest's page for ?by= (the command line's grouping when
// not given).
func (s *webServer) page(w http.ResponseWriter, req *http.Request) {
	s.serveCached(w, req, "html", "text/html; charset=utf-8")
}

// json serves the rows as report --format json writes them.
func (s *webServer) json(w http.ResponseWriter, req *http.Request) {
	s.serveCached(w, req, "json", "application/json")
}

func (s *webServer) serveCached(w http.ResponseWriter, req *http.Request, kind, contentType string) {
	by := s.by
	if q := req.URL.Query().Get("by"); q != "" {
		var err error
		if by, err = aggregate.ParseBy(q); err != nil {
			http.Error(w, fmt.Sprintf("by=%s: want %s", q, orList(byNames())), http.StatusBadRequest)
			return
		}
	}
	data, err := s.render(by, kind)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.Write(data)
}

// render returns the page or the JSON of grouping by, made once.
func (s *webServer) render(by aggregate.By, kind string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := kind + " " + by.String()
	if data, ok := s.pages[key]; ok {
		return data, nil
	}
	b, err := s.builder(by)
	if err != nil {
		return nil, err
	}
	r, err := b.ReportBy(by)
	if err != nil {
		return nil, err
	}
	var buf strings.Builder
	if kind == "json" {
		err = render.Write(&buf, r, render.JSON)
	} else {
		err = s.writePage(&buf, b, r)
	}
	if err != nil {
		return nil, err
	}
	s.pages[key] = []byte(buf.String())
	return s.pages[key], nil
}

// builder returns the builder that groups by: the first reading, or for
// a grouping by thread or size that it did not key, the inputs read again
// keeping that key (once, on first need). s.mu is held.
func (s *webServer) builder(by aggregate.By) (*report.Builder, error) {
	keys := aggregate.KeysFor(by)
	if s.keyed == nil || !keys.Thread && !keys.Size {
		return s.b, nil
	}
	if b := s.byKey[by]; b != nil {
		return b, nil
	}
	fmt.Fprintf(s.opts.chatter(s.stderr), "heapest: reading the inputs again for the rows by %s\n", by)
	b, err := s.keyed(keys, io.Discard) // their warnings were said
	if err != nil {
		return nil, err
	}
	s.byKey[by] = b
	return b, nil
}

// writePage writes the html of r, made by b, with the switcher and links
// to the other views.
func (s *webServer) writePage(w io.Writer, b *report.Builder, r *report.Report) error {
	flame, err := b.Flame(flameMinShare)
	if err != nil {
		return err
	}
	return render.WriteHTML(w, r, flame, render.HTMLOptions{
		Chart: render.ChartOptions{Log: s.opts.LogScale},
		By:    byNames(),
		Links: []render.Link{
			{Text: "pprof's views of the unbiased profile", Href: "ui/"},
			{Text: "these rows as JSON", Href: "report.json?by=" + r.By.String()},
		},
	})
}

// byNames are --by's choices.
func byNames() []string {
	out := make([]string, len(byChoices))
	for i, b := range byChoices {
		out[i] = b.String()
	}
	return out
}
