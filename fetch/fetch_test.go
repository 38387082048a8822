package fetch

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/heapest/heapest/internal/testfile"
)

func TestIsURL(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		want bool
	}{
		{"http://127.0.0.1:6060/debug/pprof/heap", true},
		{"https://example.com/heap?seconds=30", true},
		{"ftp://example.com/heap", true},
		{"HTTP://EXAMPLE.COM/", true},
		{"dumps/jeprof.1.0.m0.heap", false},
		{"dumps/*.heap", false},
		{"-", false},
		{"C:\\dumps\\x.heap", false},
		{"http:/one-slash", false},
		{"./http://x", false},
	} {
		if got := IsURL(tc.arg); got != tc.want {
			t.Errorf("IsURL(%q) = %v, want %v", tc.arg, got, tc.want)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		raw, want string // want: "" for no error, else a part of it
	}{
		{"http://127.0.0.1:6060/debug/pprof/heap?seconds=30", ""},
		{"https://example.com/heap", ""},
		{"ftp://example.com/heap", `ftp://example.com/heap: unsupported scheme "ftp": heapest fetches http and https URLs`},
		{"file:///etc/passwd", `unsupported scheme "file"`},
		{"http://[::1/heap", "http://[::1/heap: not a valid URL: missing ']' in host"},
		{"http:///heap", "http:///heap: not a valid URL: no host"},
		{"http://host:port/x", "not a valid URL: invalid port"},
	} {
		_, err := Check(tc.raw)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("Check(%q): %v", tc.raw, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("Check(%q) = %v, want an error containing %q", tc.raw, err, tc.want)
		}
	}
}

func TestTimeoutDefault(t *testing.T) {
	for _, tc := range []struct {
		raw   string
		given time.Duration
		want  time.Duration
	}{
		{"http://h/debug/pprof/heap", 0, 60 * time.Second},
		{"http://h/debug/pprof/heap?seconds=30", 0, 90 * time.Second},
		{"http://h/debug/pprof/heap?seconds=junk", 0, 60 * time.Second},
		{"http://h/debug/pprof/heap?seconds=30", 5 * time.Second, 5 * time.Second},
	} {
		u, err := url.Parse(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := (Options{Timeout: tc.given}).timeout(u); got != tc.want {
			t.Errorf("timeout of %s with --timeout %v = %v, want %v", tc.raw, tc.given, got, tc.want)
		}
	}
}

// serve starts a test server running h and returns its URL.
func serve(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestGet(t *testing.T) {
	profile := []byte("heap_v2/524288\n  t*: 1: 64 [0: 0]\n")
	zipped := testfile.Gzip(profile)
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		path    string
		opt     Options
		want    string // the body, when wantErr is ""
		wantCT  string
		wantErr string
	}{
		{name: "ok, query passes through", path: "/debug/pprof/heap?seconds=0&gc=1",
			handler: func(w http.ResponseWriter, r *http.Request) {
				if r.URL.RawQuery != "seconds=0&gc=1" {
					http.Error(w, "query was "+r.URL.RawQuery, http.StatusBadRequest)
					return
				}
				w.Header().Set("Content-Type", "application/octet-stream")
				w.Write(profile)
			},
			want: string(profile), wantCT: "application/octet-stream"},
		{name: "status with pprof's explanation", path: "/debug/pprof/profile?seconds=1",
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "Could not enable CPU profiling: cpu profiling already in use", http.StatusInternalServerError)
			},
			wantErr: `/debug/pprof/profile?seconds=1: HTTP 500 Internal Server Error: "Could not enable CPU profiling: cpu profiling already in use"`},
		{name: "404 with a long body is cut", path: "/nope",
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, strings.Repeat("no such page\n", 40), http.StatusNotFound)
			},
			wantErr: `HTTP 404 Not Found: "no such page no such page`},
		{name: "slow server past the timeout", path: "/heap", opt: Options{Timeout: 100 * time.Millisecond},
			handler: func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-time.After(5 * time.Second):
				case <-r.Context().Done():
				}
			},
			wantErr: "/heap: no complete answer within 100ms (--timeout raises it)"},
		{name: "slow body past the timeout", path: "/heap", opt: Options{Timeout: 200 * time.Millisecond},
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Write(profile[:5])
				w.(http.Flusher).Flush()
				select {
				case <-time.After(5 * time.Second):
				case <-r.Context().Done():
				}
			},
			wantErr: "no complete answer within 200ms"},
		{name: "oversized body", path: "/heap", opt: Options{MaxBytes: 1 << 10},
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Write(bytes.Repeat([]byte("x"), 5000))
			},
			wantErr: "/heap: the body is larger than the bound: body too large: more than 1 KiB (--max-decompressed raises the bound)"},
		{name: "body exactly at the bound", path: "/heap", opt: Options{MaxBytes: int64(len(profile))},
			handler: func(w http.ResponseWriter, r *http.Request) { w.Write(profile) },
			want:    string(profile), wantCT: "text/plain; charset=utf-8"},
		{name: "redirect to file:// refused", path: "/heap",
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
			},
			wantErr: "redirected to file:///etc/passwd, refused: heapest follows only http and https redirects"},
		{name: "endless redirects", path: "/loop",
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "/loop", http.StatusFound)
			},
			wantErr: "more than 10 redirects"},
		{name: "http redirect followed", path: "/old",
			handler: func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/old" {
					http.Redirect(w, r, "/debug/pprof/heap", http.StatusMovedPermanently)
					return
				}
				w.Write(profile)
			},
			want: string(profile), wantCT: "text/plain; charset=utf-8"},
		{name: "gzip content encoding undone", path: "/heap",
			handler: func(w http.ResponseWriter, r *http.Request) {
				if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
					w.Write([]byte("client did not accept gzip"))
					return
				}
				w.Header().Set("Content-Encoding", "gzip")
				w.Header().Set("Content-Type", "application/octet-stream")
				w.Write(zipped)
			},
			want: string(profile), wantCT: "application/octet-stream"},
		{name: "html page", path: "/",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.Write([]byte("<!DOCTYPE html><html><body>/debug/pprof/</body></html>"))
			},
			want: "<!DOCTYPE html><html><body>/debug/pprof/</body></html>", wantCT: "text/html; charset=utf-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := serve(t, tc.handler) + tc.path
			b, err := Get(context.Background(), raw, tc.opt)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Get = %v, want an error containing %q", err, tc.wantErr)
				}
				if !strings.HasPrefix(err.Error(), raw+": ") {
					t.Errorf("error %q does not start with the URL", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(b.Data) != tc.want || b.ContentType != tc.wantCT || b.URL != raw {
				t.Errorf("Get = %q (%q, %s), want %q (%q, %s)", b.Data, b.ContentType, b.URL, tc.want, tc.wantCT, raw)
			}
		})
	}
}

func TestGetConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	raw := "http://" + addr + "/debug/pprof/heap"
	_, err = Get(context.Background(), raw, Options{Timeout: 5 * time.Second})
	want := raw + ": connection refused: nothing listens at that address and port"
	if err == nil || err.Error() != want {
		t.Fatalf("Get = %v, want %q", err, want)
	}
}

func TestGetRefusesSchemeBeforeConnecting(t *testing.T) {
	_, err := Get(context.Background(), "ftp://127.0.0.1/heap", Options{})
	var fe *Error
	if !errors.As(err, &fe) || !strings.Contains(fe.Msg, `unsupported scheme "ftp"`) {
		t.Fatalf("Get(ftp) = %v, want the scheme refused", err)
	}
}

func TestNotProfile(t *testing.T) {
	base := errors.New("x: a text file no format recognises")
	for _, tc := range []struct {
		ct, want string
	}{
		{"text/html; charset=utf-8", "x: a text file no format recognises (the server sent Content-Type text/html; charset=utf-8: a web page, not a profile (a Go program serves its heap profile at /debug/pprof/heap))"},
		{"text/plain", "x: a text file no format recognises (the server sent Content-Type text/plain)"},
		{"", "x: a text file no format recognises (the server sent Content-Type none)"},
	} {
		err := (&Body{ContentType: tc.ct}).NotProfile(base)
		if !errors.Is(err, base) || err.Error() != tc.want {
			t.Errorf("NotProfile(%q) = %v, want it to wrap the error as %q", tc.ct, err, tc.want)
		}
	}
}

func TestExcerpt(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"  \n ", ""},
		{"Unknown profile\n", `"Unknown profile"`},
		{"a\tb\x01c", `"a b?c"`},
		{strings.Repeat("y", 250), `"` + strings.Repeat("y", 200) + `..."`},
	} {
		if got := excerpt([]byte(tc.in)); got != tc.want {
			t.Errorf("excerpt(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
