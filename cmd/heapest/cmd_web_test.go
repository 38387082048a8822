package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
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
