// Package httpload drives a web application as its users' browsers do:
// each virtual user has its own cookie jar and its own keep-alive
// connections, captures tokens from the pages it gets (the CSRF token of a
// form) to send them back with the form's post, and does not follow
// redirects (a post's 303 is its answer). Every response is counted by
// operation and status code, and per second, as the study's charts of
// response-code rates over time; an unexpected status is an error of
// scalelab's classes.
package httpload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/scalelab/scalelab/metrics"
)

// Status names for responses that never came.
const (
	StatusTimeout   = "timeout"
	StatusConnError = "connection_error"
)

// Counter counts responses by operation and status, and per second since
// the load began (SetStart), else since the first response.
type Counter struct {
	mu     sync.Mutex
	start  time.Time
	atLoad bool // start is the load's
	byOp   map[string]map[string]int64
	perSec []map[string]int64
}

// NewCounter returns an empty counter.
func NewCounter() *Counter { return &Counter{byOp: map[string]map[string]int64{}} }

// SetStart makes the per-second counts count from t, when the load began,
// so that they line up with the run's other figures over time; a counter
// that has counted already keeps its start.
func (c *Counter) SetStart(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.start.IsZero() {
		c.start, c.atLoad = t, true
	}
}

// Add counts one response (a status code, StatusTimeout or
// StatusConnError) of op.
func (c *Counter) Add(op, status string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if c.start.IsZero() {
		c.start = now
	}
	m, ok := c.byOp[op]
	if !ok {
		m = map[string]int64{}
		c.byOp[op] = m
	}
	m[status]++
	sec := max(int(now.Sub(c.start)/time.Second), 0)
	for len(c.perSec) <= sec {
		c.perSec = append(c.perSec, map[string]int64{})
	}
	c.perSec[sec][status]++
}

// Second is one second's responses by status.
type Second struct {
	T     int              `json:"t"`
	Codes map[string]int64 `json:"codes"`
}

// Report is the counts for run.json: by operation, and per second.
func (c *Counter) Report() map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	by := map[string]map[string]int64{}
	for op, m := range c.byOp {
		by[op] = maps(m)
	}
	var secs []Second
	for i, m := range c.perSec {
		if len(m) > 0 {
			secs = append(secs, Second{T: i, Codes: maps(m)})
		}
	}
	since := "the first response"
	if c.atLoad {
		since = "the load began"
	}
	return map[string]any{"by_operation": by, "per_second": secs, "since": since,
		"note": "HTTP responses by status code (timeout and connection_error: no response), per operation, and per second since " + since + " (t is the second's start)"}
}

// ByOp returns the counts of one operation.
func (c *Counter) ByOp(op string) map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps(c.byOp[op])
}

func maps(m map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// User is one virtual user's browser.
type User struct {
	base    string
	client  *http.Client
	counter *Counter
	// pages are the GET responses that came with an ETag, by URL: the
	// next GET of the URL sends If-None-Match, and a 304 shows the page
	// kept here (a browser's HTTP cache).
	pages map[string]cachedPage
	// Observe, when set, sees every response's operation and headers
	// (what the server said of its cache, its timings).
	Observe func(op string, h http.Header)
}

// cachedPage is a page kept for a conditional GET.
type cachedPage struct {
	etag, body string
}

// NewUser returns a browser for the application at base (http://host:port)
// with its own cookie jar and connections; timeout bounds each request.
func NewUser(base string, counter *Counter, timeout time.Duration) *User {
	return NewUserOn(base, counter, timeout, NewTransport(4, 0))
}

// NewTransport returns the connections of one browser or of a pool of
// users: it keeps up to idle idle connections and opens at most most at
// once (0: no bound; a request beyond it waits for a connection, and
// that wait is part of its time).
func NewTransport(idle, most int) *http.Transport {
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        idle,
		MaxIdleConnsPerHost: idle,
		MaxConnsPerHost:     most,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
}

// NewUserOn returns a browser with its own cookie jar and page cache
// whose requests go over tr, which other users may share.
func NewUserOn(base string, counter *Counter, timeout time.Duration, tr *http.Transport) *User {
	jar, _ := cookiejar.New(nil)
	return &User{base: strings.TrimSuffix(base, "/"), counter: counter, pages: map[string]cachedPage{}, client: &http.Client{
		Jar: jar, Transport: tr, Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Close drops the user's idle connections.
func (u *User) Close() { u.client.CloseIdleConnections() }

// Page is a response. After a 304 (Not Modified) Body is the page the
// browser kept from the response that carried the ETag.
type Page struct {
	Code   int
	Body   string
	Header http.Header
}

// Shown reports whether the page was shown to the user: a 200, or a 304
// that showed the kept page.
func (p *Page) Shown() bool { return p.Code == http.StatusOK || p.Code == http.StatusNotModified }

var hiddenInput = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

// Token returns the value of the page's hidden input name ("" if none).
func (p *Page) Token(name string) string {
	for _, m := range hiddenInput.FindAllStringSubmatch(p.Body, -1) {
		if m[1] == name {
			return m[2]
		}
	}
	return ""
}

// Get requests path; want lists the expected status codes (none: 200).
func (u *User) Get(ctx context.Context, op, path string, want ...int) (*Page, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.base+path, nil)
	if err != nil {
		return nil, err
	}
	if c, ok := u.pages[req.URL.String()]; ok {
		req.Header.Set("If-None-Match", c.etag)
	}
	return u.do(req, op, want)
}

// Post sends a form to path with extra headers; want as for Get (none:
// 303, the redirect after a successful post).
func (u *User) Post(ctx context.Context, op, path string, form url.Values, header map[string]string, want ...int) (*Page, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if len(want) == 0 {
		want = []int{http.StatusSeeOther}
	}
	return u.do(req, op, want)
}

// Do sends a request with a body of a content type (an API call); want
// as for Get (none: 200).
func (u *User) Do(ctx context.Context, op, method, path string, body io.Reader, contentType string, want ...int) (*Page, error) {
	req, err := http.NewRequestWithContext(ctx, method, u.base+path, body)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return u.do(req, op, want)
}

func (u *User) do(req *http.Request, op string, want []int) (*Page, error) {
	if len(want) == 0 {
		want = []int{http.StatusOK}
	}
	resp, err := u.client.Do(req)
	if err != nil {
		status := StatusConnError
		class := metrics.ClassOf(err)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded) {
			status, class = StatusTimeout, metrics.Timeout
		}
		if req.Context().Err() == nil {
			u.counter.Add(op, status)
		}
		return nil, metrics.WithClass(class, fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		u.counter.Add(op, StatusConnError)
		return nil, metrics.WithClass(metrics.Other, fmt.Errorf("%s %s: read the response: %w", req.Method, req.URL.Path, err))
	}
	u.counter.Add(op, strconv.Itoa(resp.StatusCode))
	if u.Observe != nil {
		u.Observe(op, resp.Header)
	}
	p := &Page{Code: resp.StatusCode, Body: string(body), Header: resp.Header}
	if req.Method == http.MethodGet {
		path := req.URL.String()
		c, kept := u.pages[path]
		switch {
		case resp.StatusCode == http.StatusNotModified && kept:
			p.Body = c.body
		case resp.StatusCode == http.StatusOK && resp.Header.Get("ETag") != "":
			u.pages[path] = cachedPage{etag: resp.Header.Get("ETag"), body: p.Body}
		default:
			delete(u.pages, path)
		}
	}
	for _, w := range want {
		if w == resp.StatusCode || (w == http.StatusOK && resp.StatusCode == http.StatusNotModified && p.Body != "") {
			return p, nil
		}
	}
	return p, &StatusError{Method: req.Method, Path: req.URL.Path, Code: resp.StatusCode, Want: want, Body: firstLine(p.Body)}
}

// StatusError is a response with a status the user did not expect.
type StatusError struct {
	Method, Path string
	Code         int
	Want         []int
	Body         string
}

func (e *StatusError) Error() string {
	w := make([]string, len(e.Want))
	for i, c := range e.Want {
		w[i] = strconv.Itoa(c)
	}
	return fmt.Sprintf("%s %s: status %d, want %s: %s", e.Method, e.Path, e.Code, strings.Join(w, " or "), e.Body)
}

// ErrorClass maps the status to scalelab's classes: 503 and 429 rejected
// (the server sheds load), 504 a timeout, 404 not found, other 4xx
// rejected, other 5xx other.
func (e *StatusError) ErrorClass() metrics.Class {
	switch {
	case e.Code == http.StatusServiceUnavailable || e.Code == http.StatusTooManyRequests:
		return metrics.Rejected
	case e.Code == http.StatusGatewayTimeout:
		return metrics.Timeout
	case e.Code == http.StatusNotFound:
		return metrics.NotFound
	case e.Code >= 400 && e.Code < 500:
		return metrics.Rejected
	default:
		return metrics.Other
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return s
}

// Base checks an application URL (http or https with a host).
func Base(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err == nil && u.User != nil {
		return "", fmt.Errorf("%s: an application URL holds no user or password (the sessions sign in as the scenario's users); give http://host:port", u.Redacted())
	}
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q: an application URL such as http://127.0.0.1:8080 expected", raw)
	}
	return strings.TrimSuffix(u.String(), "/"), nil
}
