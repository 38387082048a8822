package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// lockedBuffer is a bytes.Buffer that the command and the test may use at
// once.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestWeb runs heapest web in-process on a loopback port: its page and
// JSON are report's for any grouping, pprof's views answer under /ui/, a
// bad grouping is a 400, and cancelling the context stops it cleanly.
func TestWeb(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr lockedBuffer
	exit := make(chan int, 1)
	go func() {
		exit <- run(ctx, []string{"web", "--http", "127.0.0.1:0", example}, strings.NewReader(""), &stdout, &stderr)
	}()
	base := waitForURL(t, &stderr, exit)

	wantJSON, _, _ := runCLI(t, "report", "--format", "json", "--by", "stack", example)
	if got := get(t, base+"report.json?by=stack", 200); got != wantJSON {
		t.Errorf("report.json?by=stack differs from report --format json --by stack:\n%s\nwant:\n%s", got, wantJSON)
	}
	page := get(t, base, 200)
	for _, want := range []string{`<table id="rows">`, `<tr><td class="key">alloc_b</td>`, `<svg class="flame"`, `<svg class="interval-chart"`, `<option selected>func</option>`, `href="ui/"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page has no %q", want)
		}
	}
	if page := get(t, base+"?by=thread", 200); !strings.Contains(page, `<option selected>thread</option>`) || !strings.Contains(page, `>THREAD</th>`) {
		t.Error("?by=thread does not regroup the page")
	}
	for _, view := range []string{"ui/top", "ui/flamegraph"} {
		if body := get(t, base+view, 200); !strings.Contains(body, "alloc_b") || !strings.Contains(body, "inuse_space") {
			t.Errorf("%s is not pprof's view of the profile", view)
		}
	}
	get(t, base+"?by=bogus", 400)
	if stdout.String() != "" {
		t.Errorf("standard output is the report's: %q", stdout.String())
	}
	cancel()
	select {
	case code := <-exit:
		if code != 0 || !strings.Contains(stderr.String(), "heapest: stopped") {
			t.Errorf("exit %d after cancel: %s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("heapest web did not stop when its context ended")
	}
}

// webRun is heapest web run in-process on a loopback port.
type webRun struct {
	base           string // its URL
	stdout, stderr *lockedBuffer
	cancel         context.CancelFunc
	exit           chan int
}

// startWeb runs heapest web on inputs until stop (or the test's end).
func startWeb(t *testing.T, inputs ...string) *webRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &webRun{stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, cancel: cancel, exit: make(chan int, 1)}
	t.Cleanup(cancel)
	args := append([]string{"web", "--http", "127.0.0.1:0"}, inputs...)
	go func() { w.exit <- run(ctx, args, strings.NewReader(""), w.stdout, w.stderr) }()
	w.base = waitForURL(t, w.stderr, w.exit)
	return w
}

// stop interrupts the server and returns its exit code.
func (w *webRun) stop() int {
	w.cancel()
	return <-w.exit
}

// waitForURL waits for the line heapest web prints where it serves.
func waitForURL(t *testing.T, stderr *lockedBuffer, exit chan int) string {
	t.Helper()
	re := regexp.MustCompile(`serving web UI on (http://127\.0\.0\.1:[0-9]+/)`)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			return m[1]
		}
		select {
		case code := <-exit:
			t.Fatalf("heapest web exited %d: %s", code, stderr.String())
		default:
		}
	}
	t.Fatalf("heapest web printed no URL: %s", stderr.String())
	return ""
}

func get(t *testing.T, url string, status int) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != status {
		t.Errorf("GET %s: %s, want %d: %s", url, resp.Status, status, body)
	}
	return string(body)
}

func TestIsLoopback(t *testing.T) {
	for host, want := range map[string]bool{"127.0.0.1": true, "::1": true, "localhost": true, "127.1.2.3": true,
		"0.0.0.0": false, "": false, "192.168.1.5": false, "example.org": false} {
		if isLoopback(host) != want {
			t.Errorf("isLoopback(%q) = %v", host, !want)
		}
	}
}

// A host that is not loopback is served only with a warning; an empty
// host is loopback.
func TestListenWarns(t *testing.T) {
	var stderr bytes.Buffer
	ln, err := listen(":0", &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ln.Addr().String(), "127.0.0.1:") || stderr.Len() != 0 {
		t.Errorf("listen(:0) on %s, warning %q", ln.Addr(), stderr.String())
	}
	ln.Close()
	if ln, err = listen("0.0.0.0:0", &stderr); err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if !strings.Contains(stderr.String(), "warning: --http 0.0.0.0:0 is not a loopback address") {
		t.Errorf("no warning for 0.0.0.0: %q", stderr.String())
	}
}

// TestWebRefuses checks what heapest web refuses of requests a page of
// another site can make a browser send: another host name (DNS
// rebinding), a request marked cross-site, pprof's saving or deleting of
// configurations; and that its pages may not be framed.
func TestWebRefuses(t *testing.T) {
	w := startWeb(t, example)
	base := w.base
	for _, tc := range []struct {
		path, header, value string
		status              int
	}{
		{"", "Host", "evil.example", 403},
		{"report.json", "Host", "evil.example:80", 403},
		{"ui/top", "Host", "127.0.0.1.evil.example", 403},
		{"", "Host", "localhost", 200},
		{"", "Host", "app.localhost:8080", 200},
		{"", "Host", "[::1]:8080", 200},
		{"ui/top", "Sec-Fetch-Site", "cross-site", 403},
		{"ui/top", "Sec-Fetch-Site", "same-site", 403},
		{"ui/top", "Sec-Fetch-Site", "same-origin", 200},
		{"ui/top", "Sec-Fetch-Site", "none", 200},
		{"ui/saveconfig?config=x", "", "", 403},
		{"ui/deleteconfig?config=x", "", "", 403},
	} {
		req, err := http.NewRequest("GET", base+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tc.header == "Host" {
			req.Host = tc.value
		} else if tc.header != "" {
			req.Header.Set(tc.header, tc.value)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("GET /%s with %s %q: %s, want %d", tc.path, tc.header, tc.value, resp.Status, tc.status)
		}
		if resp.StatusCode == 200 && resp.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("GET /%s: X-Frame-Options %q, want DENY", tc.path, resp.Header.Get("X-Frame-Options"))
		}
	}
	w.stop()
}

// TestWebThreadsAreReports checks that on a dump with per-thread lines
// every grouping's JSON is report's, byte for byte: the rows by func are
// of the t* lines, as report's are, and those by thread of the per-thread
// lines, read again when asked for.
func TestWebThreadsAreReports(t *testing.T) {
	const dump = "testdata/je530_threads_foreign.heap"
	// --by thread on the command line is the page's grouping, read as
	// the others are: the rows by func are still report's.
	for _, first := range [][]string{{dump}, {"--by", "thread", dump}} {
		w := startWeb(t, first...)
		for _, by := range []string{"func", "thread", "stack", "size"} {
			want, _, _ := runCLI(t, "report", "--format", "json", "--by", by, dump)
			if got := get(t, w.base+"report.json?by="+by, 200); got != want {
				t.Errorf("%q: report.json?by=%s differs from report --format json --by %s:\n%s\nwant:\n%s", first, by, by, got, want)
			}
		}
		if page := get(t, w.base, 200); first[0] == "--by" && !strings.Contains(page, "<option selected>thread</option>") {
			t.Errorf("%q: the page is not by thread", first)
		}
		w.stop()
		if !strings.Contains(w.stderr.String(), "reading the inputs again for the rows by thread") {
			t.Errorf("%q: stderr does not say the inputs were read again: %s", first, w.stderr.String())
		}
	}
}

// TestUnreadableSources checks that pprof's source view is kept from
// files that are not regular or too large, and left the others.
func TestUnreadableSources(t *testing.T) {
	dir := t.TempDir()
	regular := dir + "/main.c"
	if err := os.WriteFile(regular, []byte("int main;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// pprof finds a relative name under the working directory or its
	// parents ("dev/null" is /dev/null from anywhere), and trims
	// /proc/self/cwd/ first.
	p := &profile.Profile{Function: []*profile.Function{
		{ID: 1, Filename: regular}, {ID: 2, Filename: "/dev/null"}, {ID: 3, Filename: dir},
		{ID: 4, Filename: dir + "/missing.c"}, {ID: 5, Filename: "/dev/null"}, {ID: 6},
		{ID: 7, Filename: "dev/null"}, {ID: 8, Filename: "/proc/self/cwd/dev/zero"}, {ID: 9, Filename: "no/such/file.c"},
	}}
	cleared := unreadableSources(p)
	if want := []string{"/dev/null", dir, "dev/null", "/proc/self/cwd/dev/zero"}; !slices.Equal(cleared, want) {
		t.Errorf("cleared %q, want %q", cleared, want)
	}
	for i, want := range []string{regular, "", "", dir + "/missing.c", "", "", "", "", "no/such/file.c"} {
		if got := p.Function[i].Filename; got != want {
			t.Errorf("function %d: file %q, want %q", i+1, got, want)
		}
	}
}

func TestBrowsable(t *testing.T) {
	for _, tc := range []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}, "127.0.0.1:8080"},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 8080}, "localhost:8080"},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 9}, "localhost:9"},
		{&net.TCPAddr{IP: net.ParseIP("192.168.1.5"), Port: 80}, "192.168.1.5:80"},
	} {
		if got := browsable(tc.addr); got != tc.want {
			t.Errorf("browsable(%v) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}

// web --open waits for the opener and says that it failed (xdg-open on a
// machine with no desktop exits 3); one that succeeds says nothing.
func TestOpenBrowser(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("xdg-open is the opener on Linux only")
	}
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	script := "#!/bin/sh\necho \"xdg-open: no method available for opening '$1'\" >&2\nexit 3\n"
	os.WriteFile(filepath.Join(dir, "xdg-open"), []byte(script), 0o755)
	err := <-openBrowser("http://127.0.0.1:1/")
	if want := "xdg-open: exit status 3"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	os.WriteFile(filepath.Join(dir, "xdg-open"), []byte("#!/bin/sh\nexit 0\n"), 0o755)
	if err := <-openBrowser("http://127.0.0.1:1/"); err != nil {
		t.Errorf("a successful opener: %v", err)
	}
}
