// Package fetch reads profiles from http and https URLs, as pprof does
// from a Go program's /debug/pprof/heap: one GET, bounded in time and
// size, redirects followed only to http(s), every error naming the URL.
// It is the one place heapest talks to the network.
package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/heapest/heapest/internal/units"
)

// DefaultTimeout is how long a fetch may take when --timeout is not
// given, on top of the profiling duration a seconds= parameter asks the
// server for (the server answers only after it).
const DefaultTimeout = 60 * time.Second

// DefaultMaxBytes bounds a body when no bound is given: the same bound a
// gzipped file may decompress to (parse.DefaultMaxDecompressed).
const DefaultMaxBytes = 512 << 20

// maxRedirects is how many redirects one fetch follows, as browsers and
// Go's own client do.
const maxRedirects = 10

// excerptBytes is how much of an error page is quoted.
const excerptBytes = 200

// Options steer Get. The zero value uses the defaults.
type Options struct {
	// Timeout bounds the whole fetch, connecting to the last byte of the
	// body (0: DefaultTimeout plus the URL's seconds=).
	Timeout time.Duration
	// MaxBytes bounds the body (0: DefaultMaxBytes).
	MaxBytes int64
}

// Body is what a URL sent.
type Body struct {
	URL         string
	Data        []byte
	ContentType string
}

// Error is a fetch that failed; it names the URL.
type Error struct {
	URL string
	Msg string
	Err error
}

// Error is the URL, what went wrong, and the cause.
func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.URL, e.Msg, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.URL, e.Msg)
}

// Unwrap is the cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// schemeRE is an RFC 3986 scheme followed by "://": what makes an
// argument a URL rather than a path or a glob.
var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)

// IsURL reports whether s names a URL (scheme://...) rather than a file.
// Any scheme counts, so that ftp://... is refused as a URL instead of
// being looked for as a file.
func IsURL(s string) bool { return schemeRE.MatchString(s) }

// Check parses raw and reports why heapest cannot fetch it: a scheme
// other than http or https, no host, or a malformed URL.
func Check(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text repeats the URL
		}
		return nil, &Error{URL: raw, Msg: "not a valid URL", Err: err}
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, &Error{URL: raw, Msg: fmt.Sprintf("unsupported scheme %q: heapest fetches http and https URLs", u.Scheme)}
	case u.Host == "":
		return nil, &Error{URL: raw, Msg: "not a valid URL: no host"}
	}
	return u, nil
}

// timeout is the bound on fetching u: the given one, or the default
// plus the profiling duration u asks for.
func (o Options) timeout(u *url.URL) time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	d := DefaultTimeout
	if s, err := strconv.Atoi(u.Query().Get("seconds")); err == nil && s > 0 {
		d += time.Duration(s) * time.Second
	}
	return d
}

func (o Options) maxBytes() int64 {
	if o.MaxBytes > 0 {
		return o.MaxBytes
	}
	return DefaultMaxBytes
}

// client uses the default transport (proxy settings from the
// environment, the system's root certificates) and refuses redirects
// to other schemes.
var client = &http.Client{CheckRedirect: checkRedirect}

// checkRedirect follows at most maxRedirects redirects, and only to http
// and https: a profile server must not send heapest to file:// or
// anywhere else.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if s := req.URL.Scheme; s != "http" && s != "https" {
		return fmt.Errorf("redirected to %s, refused: heapest follows only http and https redirects", req.URL.Redacted())
	}
	if len(via) >= maxRedirects {
		return fmt.Errorf("more than %d redirects", maxRedirects)
	}
	return nil
}

// Get fetches raw with one GET. The query passes through untouched (a Go
// program's ?seconds=30 included). A status other than 2xx, a body
// larger than the bound, a server slower than the timeout and a refused
// connection are errors naming the URL.
func Get(ctx context.Context, raw string, opt Options) (*Body, error) {
	u, err := Check(raw)
	if err != nil {
		return nil, err
	}
	limit := opt.timeout(u)
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return nil, &Error{URL: raw, Msg: "not a valid URL", Err: err}
	}
	req.Header.Set("User-Agent", "heapest")
	resp, err := client.Do(req)
	if err != nil {
		return nil, describe(raw, err, limit)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, statusError(raw, resp)
	}
	data, err := readCapped(resp.Body, opt.maxBytes())
	if err != nil {
		return nil, describe(raw, err, limit)
	}
	return &Body{URL: raw, Data: data, ContentType: resp.Header.Get("Content-Type")}, nil
}

// errTooLarge is a body over the bound.
var errTooLarge = errors.New("body too large")

// readCapped reads r to its end, failing once more than max bytes came:
// a server that sends without end costs at most max bytes of memory.
func readCapped(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%w: more than %s (--max-decompressed raises the bound)", errTooLarge, units.Exact(max))
	}
	return data, nil
}

// describe turns a transport error into what the user can act on.
func describe(raw string, err error, limit time.Duration) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // its text repeats the method and URL
	}
	var ne net.Error
	switch {
	case errors.Is(err, errTooLarge):
		return &Error{URL: raw, Msg: "the body is larger than the bound", Err: err}
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return &Error{URL: raw, Msg: fmt.Sprintf("no complete answer within %v (--timeout raises it)", limit)}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &Error{URL: raw, Msg: "connection refused: nothing listens at that address and port"}
	}
	return &Error{URL: raw, Msg: "fetching failed", Err: err}
}

// statusError says which status the server answered, with the start of
// its body: net/http/pprof explains itself there ("Could not enable CPU
// profiling: ...", "Unknown profile").
func statusError(raw string, resp *http.Response) error {
	head, _ := io.ReadAll(io.LimitReader(resp.Body, excerptBytes+1))
	msg := "HTTP " + resp.Status
	if text := excerpt(head); text != "" {
		msg += ": " + text
	}
	return &Error{URL: raw, Msg: msg}
}

// excerpt is the start of a body as one line of printable text.
func excerpt(b []byte) string {
	cut := len(b) > excerptBytes
	if cut {
		b = b[:excerptBytes]
	}
	s := strings.Join(strings.Fields(strings.ToValidUTF8(string(b), "?")), " ")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
	switch {
	case s == "":
		return ""
	case cut:
		s += "..."
	}
	return strconv.Quote(s)
}

// NotProfile adds, to the error of a body that was refused as a whole
// (empty, or no format recognised), what the server said it sent: an HTML
// page from a wrong path is the usual case.
func (b *Body) NotProfile(err error) error {
	ct := b.ContentType
	if ct == "" {
		ct = "none"
	}
	what := ""
	if mt, _, perr := mime.ParseMediaType(ct); perr == nil && (mt == "text/html" || mt == "application/xhtml+xml") {
		what = ": a web page, not a profile (a Go program serves its heap profile at /debug/pprof/heap)"
	}
	return fmt.Errorf("%w (the server sent Content-Type %s%s)", err, ct, what)
}
