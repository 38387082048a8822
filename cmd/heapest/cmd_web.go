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
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/heapest/heapest/aggregate"
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
profile. See docs/web.md.
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
	// Every value, for pprof's views; every key, for the --by switcher.
	ropt.AllValues, ropt.SourceTotals = true, true
	ropt.ExtraKeys = aggregate.Keys{Thread: true, Size: true}
	ropt.SingleInput = len(paths) == 1
	// Listening first says at once that the address is bad or taken;
	// connections wait for the inputs to be read.
	ln, err := listen(opts.HTTP, cmd.ErrOrStderr())
	if err != nil {
		return usageError{err}
	}
	b := report.NewBuilder(ropt)
	if err := opts.load(b, paths, cmd.ErrOrStderr()); err != nil {
		ln.Close()
		return err
	}
	srv, err := newWebServer(b, opts, ln.Addr().String(), cmd.ErrOrStderr())
	if err != nil {
		ln.Close()
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, srv, ln, opts.Open, cmd.ErrOrStderr(), opts.chatter(cmd.ErrOrStderr()))
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
	url := "http://" + ln.Addr().String() + "/"
	fmt.Fprintf(stderr, "heapest: serving web UI on %s (pprof's views: %sui/); Ctrl-C stops\n", url, url)
	if open {
		if err := openBrowser(url); err != nil {
			fmt.Fprintf(notes, "heapest: warning: could not open a browser: %v\n", err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serving %s: %w", url, err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return fmt.Errorf("stopping the server: %w", err)
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	fmt.Fprintln(stderr, "heapest: stopped")
	return nil
}

// openBrowser asks the desktop to open url.
func openBrowser(url string) error {
	name, args := "xdg-open", []string{url}
	switch runtime.GOOS {
	case "darwin":
		name = "open"
	case "windows":
		name, args = "rundll32", []string{"url.dll,FileProtocolHandler", url}
	}
	return exec.Command(name, args...).Start()
}

// webServer serves heapest's page and JSON for any grouping of the inputs
// read once, and pprof's views under /ui/.
type webServer struct {
	b    *report.Builder
	opts WebOptions
	by   aggregate.By // the grouping asked for on the command line
	// mu serializes the Builder's use; pages caches each grouping's
	// page and JSON.
	mu    sync.Mutex
	pages map[string][]byte
}

func newWebServer(b *report.Builder, opts WebOptions, hostport string, stderr io.Writer) (*http.Server, error) {
	r, err := b.Report()
	if err != nil {
		return nil, err
	}
	opts.warnNotices(stderr, r)
	s := &webServer{b: b, opts: opts, by: r.By, pages: map[string][]byte{}}
	p, err := unbiasedProfile(b)
	if err != nil {
		return nil, err
	}
	handlers, err := pprofHandlers(p, hostport, stderr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("GET /report.json", s.json)
	mountPprof(mux, handlers)
	return &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, nil
}

// mountPprof serves pprof's handlers under /ui/. pprof's own "/" redirects
// relative to the path it sees, which would leave /ui/: /ui/ redirects to
// its flame graph here instead.
func mountPprof(mux *http.ServeMux, handlers map[string]http.Handler) {
	for path, h := range handlers {
		if path != "/" {
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
	r, err := s.b.ReportBy(by)
	if err != nil {
		return nil, err
	}
	var buf strings.Builder
	if kind == "json" {
		err = render.Write(&buf, r, render.JSON)
	} else {
		err = s.writePage(&buf, r)
	}
	if err != nil {
		return nil, err
	}
	s.pages[key] = []byte(buf.String())
	return s.pages[key], nil
}

// writePage writes the html of r with the switcher and links to the
// other views.
func (s *webServer) writePage(w io.Writer, r *report.Report) error {
	flame, err := s.b.Flame(flameMinShare)
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
