package search

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/opensearch-project/opensearch-go/v4"
	"github.com/opensearch-project/opensearch-go/v4/opensearchtransport"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/netdial"
	"github.com/scalelab/scalelab/metrics"
)

// Conn is an open connection to a search cluster. Scenario storage files
// type-assert engine.Conn to *Conn and use its document and index methods;
// every method is safe for concurrent use.
type Conn struct {
	engine  string
	nodes   []string
	opts    Options
	client  *opensearch.Client
	httpTr  *http.Transport
	flavor  string // distribution the server reports
	version string
	mu      sync.Mutex
	facts   map[string]string // cluster facts for Info
	pool    *rrPool
	names   map[string]string // node URL -> entry name (<engine>.entry_nodes)
	// usage is each node's REST requests when Info ran (before the data
	// load and the run), for AfterRun's per-node counts.
	usage map[string]map[string]int64
}

// rrPool sends requests to its nodes in strict round robin. It never marks a
// node dead: a failed node's errors reach the results.
type rrPool struct {
	conns []*opensearchtransport.Connection
	next  atomic.Uint64
	sent  []atomic.Int64 // requests sent to each node
}

var _ opensearchtransport.ConnectionPool = (*rrPool)(nil)

func (p *rrPool) Next() (*opensearchtransport.Connection, error) {
	i := (p.next.Add(1) - 1) % uint64(len(p.conns))
	p.sent[i].Add(1)
	return p.conns[i], nil
}
func (p *rrPool) OnSuccess(*opensearchtransport.Connection)       {}
func (p *rrPool) OnFailure(*opensearchtransport.Connection) error { return nil }
func (p *rrPool) URLs() []*url.URL {
	out := make([]*url.URL, len(p.conns))
	for i, c := range p.conns {
		out[i] = c.URL
	}
	return out
}

// dial makes the client; it does not contact the server.
func dial(engineName string, nodes []string, opts Options, password string) (*Conn, error) {
	tr := &http.Transport{
		DialContext:         netdial.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}.DialContext,
		MaxIdleConnsPerHost: 1024,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
	var pool *rrPool
	cfg := opensearch.Config{
		Addresses:             nodes,
		Username:              opts.User,
		Password:              password,
		Transport:             tr,
		DisableRetry:          true,
		DiscoverNodesOnStart:  new(false),
		MaxRetryClusterHealth: -1,
		ConnectionPoolFunc: func(conns []*opensearchtransport.Connection, _ opensearchtransport.Selector) opensearchtransport.ConnectionPool {
			pool = &rrPool{conns: conns, sent: make([]atomic.Int64, len(conns))}
			return pool
		},
	}
	if opts.User != "" && password == "" {
		return nil, fmt.Errorf("user %q given but no password: set $SCALELAB_%s_PASSWORD", opts.User, strings.ToUpper(engineName))
	}
	client, err := opensearch.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return &Conn{engine: engineName, nodes: nodes, opts: opts, client: client, httpTr: tr, facts: map[string]string{}, pool: pool}, nil
}

// Options returns the engine's resolved settings.
func (c *Conn) Options() Options { return c.opts }

// Engine returns the engine name ("opensearch" or "elasticsearch").
func (c *Conn) Engine() string { return c.engine }

// Nodes returns the node URLs requests go to.
func (c *Conn) Nodes() []string { return append([]string(nil), c.nodes...) }

// Distribution returns the distribution the server reported and its version.
func (c *Conn) Distribution() (flavor, version string) { return c.flavor, c.version }

// Close releases the client's idle connections.
func (c *Conn) Close() error {
	err := c.client.Close()
	c.httpTr.CloseIdleConnections()
	return err
}

// HTTPError is an error response of the server. Its class follows the
// status: 429 and 503 rejected (overloaded), 409 rejected (a version
// conflict: an update of a document another write changed meanwhile is
// refused whole), 404 not_found, 408 and 504 timeout.
type HTTPError struct {
	Method, Path string
	Status       int
	Type, Reason string
}

func (e *HTTPError) Error() string {
	s := fmt.Sprintf("%s %s: HTTP %d", e.Method, e.Path, e.Status)
	if e.Type != "" {
		s += " " + e.Type
	}
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// ErrorClass classes the error by its status.
func (e *HTTPError) ErrorClass() metrics.Class { return classOfStatus(e.Status) }

func classOfStatus(status int) metrics.Class {
	switch status {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusConflict:
		return metrics.Rejected
	case http.StatusNotFound:
		return metrics.NotFound
	case http.StatusRequestTimeout, http.StatusGatewayTimeout:
		return metrics.Timeout
	}
	return metrics.Other
}

// errorBody is the error part of an error response.
type errorBody struct {
	Error json.RawMessage `json:"error"`
}

// newHTTPError builds the error of a failed response from its body.
func newHTTPError(method, path string, status int, body []byte) *HTTPError {
	e := &HTTPError{Method: method, Path: path, Status: status}
	var eb errorBody
	if json.Unmarshal(body, &eb) == nil && len(eb.Error) > 0 {
		var det struct {
			Type   string `json:"type"`
			Reason string `json:"reason"`
		}
		if json.Unmarshal(eb.Error, &det) == nil {
			e.Type, e.Reason = det.Type, det.Reason
		} else {
			_ = json.Unmarshal(eb.Error, &e.Reason)
		}
	} else if len(body) > 0 {
		e.Reason = string(body[:min(len(body), 200)])
	}
	return e
}

// Do sends one request to the next node and returns the status and body.
// query is an encoded query string or "". A transport failure is returned
// as an error (classed timeout or refused by metrics.ClassOf); an HTTP error
// status is not an error here.
func (c *Conn) Do(ctx context.Context, method, path, query string, body []byte) (int, []byte, error) {
	return c.do(ctx, method, path, query, "application/json", body)
}

func (c *Conn) do(ctx context.Context, method, path, query, contentType string, body []byte) (int, []byte, error) {
	if c.opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.Timeout)
		defer cancel()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	u := path
	if query != "" {
		u += "?" + query
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.client.Stream(req)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: read response: %w", method, path, err)
	}
	return resp.StatusCode, data, nil
}

// call is Do that turns an error status into an *HTTPError and decodes a
// successful body into out (when out is not nil).
func (c *Conn) call(ctx context.Context, method, path, query string, body []byte, out any) error {
	status, data, err := c.Do(ctx, method, path, query, body)
	if err != nil {
		return err
	}
	if status >= 300 {
		return newHTTPError(method, path, status, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: decode response: %w", method, path, err)
		}
	}
	return nil
}

// identify reads the server's distribution and version and the cluster's
// nodes, and checks that the server is the engine's distribution.
func (c *Conn) identify(ctx context.Context) error {
	var root struct {
		ClusterName string `json:"cluster_name"`
		Version     struct {
			Distribution string `json:"distribution"`
			Number       string `json:"number"`
		} `json:"version"`
	}
	if err := c.call(ctx, http.MethodGet, "/", "", nil, &root); err != nil {
		var he *HTTPError
		if errors.As(err, &he) && (he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden) {
			return engine.AuthError(fmt.Sprintf("open %s at %s", c.engine, strings.Join(c.nodes, ",")), c.opts.User,
				engine.PasswordSources{Env: PasswordEnv(c.engine)}, err)
		}
		if metrics.ClassOf(err) == metrics.Other {
			return fmt.Errorf("open %s at %s: %w", c.engine, strings.Join(c.nodes, ","), err)
		}
		return fmt.Errorf("open %s at %s: %w: %w", c.engine, strings.Join(c.nodes, ","), engine.ErrUnreachable, err)
	}
	c.flavor, c.version = root.Version.Distribution, root.Version.Number
	if c.flavor == "" {
		c.flavor = Elasticsearch
	}
	if c.flavor != c.engine {
		return fmt.Errorf("open %s: the target is %s %s; use --engine %s", c.engine, c.flavor, c.version, c.flavor)
	}
	c.facts["distribution"] = c.flavor
	c.facts["cluster_name"] = root.ClusterName
	return nil
}

// NodeInfo is one node as _cat/nodes reports it.
type NodeInfo struct {
	Name   string `json:"name"`
	Roles  string `json:"node.role"`
	Master string `json:"master"` // "*" on the elected cluster manager
	IP     string `json:"ip"`
	Heap   string `json:"heap.percent"`
}

// CatNodes lists the cluster's nodes.
func (c *Conn) CatNodes(ctx context.Context) ([]NodeInfo, error) {
	var nodes []NodeInfo
	err := c.call(ctx, http.MethodGet, "/_cat/nodes", "format=json&h=name,node.role,master,ip,heap.percent", nil, &nodes)
	return nodes, err
}

// Info describes the server and the index settings for run.json.
func (c *Conn) Info(ctx context.Context) (engine.Info, error) {
	extra := map[string]string{}
	c.mu.Lock()
	for k, v := range c.facts {
		extra[k] = v
	}
	c.mu.Unlock()
	if nodes, err := c.CatNodes(ctx); err == nil {
		extra["nodes"] = fmt.Sprint(len(nodes))
		var roles []string
		for _, n := range nodes {
			roles = append(roles, n.Name+":"+n.Roles)
		}
		extra["node_roles"] = strings.Join(roles, ",")
	}
	extra["client_nodes"] = fmt.Sprint(len(c.nodes))
	if len(c.opts.EntryNodes) > 0 {
		var es []string
		for _, u := range c.nodes {
			es = append(es, nodeLabel(u, c.names)+"="+u)
		}
		extra["entry_nodes"] = strings.Join(es, ",")
	}
	if u, err := c.restUsage(ctx); err == nil {
		c.mu.Lock()
		c.usage = u
		c.mu.Unlock()
	}
	o := c.opts
	extra["index.shards"] = fmt.Sprint(o.Shards)
	extra["index.replicas"] = fmt.Sprint(o.Replicas)
	extra["index.refresh"] = o.Refresh.Policy
	extra["index.refresh_interval"] = o.Refresh.Interval
	extra["index.routing"] = o.Routing
	extra["index.layout"] = o.Layout
	extra["index.force_merge"] = fmt.Sprint(o.ForceMerge)
	extra["bulk_size"] = fmt.Sprint(o.BulkSize)
	return engine.Info{Engine: c.engine, Version: c.flavor + " " + c.version, Target: strings.Join(c.nodes, ","), Extra: extra}, nil
}
