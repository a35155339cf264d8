// Package search is the engine family of the search servers that speak the
// Elasticsearch 7 REST API: "opensearch" (OpenSearch 3.x) and
// "elasticsearch" (Elasticsearch 7.10.2, the last Apache-licensed release).
// Both engines share this package: one REST client (opensearch-go v4, which
// talks to both distributions), the index settings scenarios apply when they
// create their indices (shards, replicas, refresh, routing, layout, force
// merge, bulk size), and a provisioner of local multi-node clusters, one JVM
// per node (cluster.go).
//
// Requests go to the target's nodes in strict round robin (or to the first
// N nodes with <engine>.client_nodes=N), without retries and without
// skipping failed nodes, so that a node's failure shows in the results as
// errors instead of being hidden by the client.
package search

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/setting"
)

// Engine names and distributions.
const (
	OpenSearch    = "opensearch"
	Elasticsearch = "elasticsearch"
)

// Setting names, after the engine's prefix ("opensearch.shards").
const (
	SetShards      = "shards"
	SetReplicas    = "replicas"
	SetRefresh     = "refresh"
	SetRouting     = "routing"
	SetIndexLayout = "index_layout"
	SetForceMerge  = "force_merge"
	SetBulkSize    = "bulk_size"
	SetClientNodes = "client_nodes"
	SetTimeout     = "timeout"
	SetUser        = "user"
	SetIndexPrefix = "index_prefix"
	// DefaultIndexPrefix is the default of <engine>.index_prefix: the
	// namespace of the indices scalelab creates.
	DefaultIndexPrefix = "scalelab-"
	SetIndexWait       = "index_wait"
)

// Routing and layout values.
const (
	RoutingNone   = "none"
	RoutingUser   = "user"
	LayoutShared  = "shared"
	LayoutPerUser = "per_user"
)

func init() {
	engine.Register(&Engine{name: OpenSearch})
	engine.Register(&Engine{name: Elasticsearch})
}

// Engine is one of the two search engines; its name is its distribution.
type Engine struct {
	name string
}

// Name returns "opensearch" or "elasticsearch".
func (e *Engine) Name() string { return e.name }

// PasswordEnv is the environment variable holding the password of the
// engine's user: SCALELAB_OPENSEARCH_PASSWORD, SCALELAB_ELASTICSEARCH_PASSWORD.
func PasswordEnv(engineName string) string {
	return "SCALELAB_" + strings.ToUpper(engineName) + "_PASSWORD"
}

// TargetForm is how a target names the nodes; SCALELAB_<ENGINE>_URL may
// name them instead.
func (e *Engine) TargetForm() (form, env string) {
	return "http://host:port[,host:port...]", "SCALELAB_" + strings.ToUpper(e.name) + "_URL"
}

// Description is one line for `scalelab list`.
func (e *Engine) Description() string {
	if e.name == Elasticsearch {
		return "Elasticsearch 7.10.2 over REST (Apache-licensed, the search-cluster study's version); target: http://host:port[,host:port...] or --cluster"
	}
	return "OpenSearch 3.x over REST; target: http://host:port[,host:port...] or --cluster"
}

// Key returns the full key of a setting of this engine ("opensearch.shards").
func (e *Engine) Key(name string) string { return e.name + "." + name }

// Settings declares the index settings scenarios apply when they create
// their indices, and the client's settings.
func (e *Engine) Settings() []setting.Spec {
	k := e.Key
	return []setting.Spec{
		{Key: k(SetShards), Kind: setting.Int, Default: "1", Min: 1, Max: 1024,
			Description: "primary shards of each index a scenario creates (index.number_of_shards)"},
		{Key: k(SetReplicas), Kind: setting.Int, Default: "1", Min: 0, Max: 32,
			Description: "replicas of each shard (index.number_of_replicas; the server default, 1, stays unassigned on one node)"},
		{Key: k(SetRefresh), Kind: setting.String, Default: "interval:1s", Check: checkRefresh,
			Description: "when writes become searchable: interval:1s (server default) or interval:DURATION (index.refresh_interval), none (no periodic refresh), wait_for (each write waits for the next refresh), true (refresh after every write)"},
		{Key: k(SetRouting), Kind: setting.Enum, Default: RoutingNone, Allowed: []string{RoutingNone, RoutingUser},
			Description: "shard routing: none (by document id) or user (by the user id, for scenarios with users; reads and searches of one user go to one shard)"},
		{Key: k(SetIndexLayout), Kind: setting.Enum, Default: LayoutShared, Allowed: []string{LayoutShared, LayoutPerUser},
			Description: "one index shared by all users, or one index per user (scenarios with users)"},
		{Key: k(SetForceMerge), Kind: setting.Bool, Default: "false",
			Description: "force-merge the indices to one segment after loading, before the run (for read-only data)"},
		{Key: k(SetBulkSize), Kind: setting.Int, Default: "1000", Min: 1, Max: 100000,
			Description: "documents per _bulk request when loading and in bulk writes"},
		{Key: k(SetClientNodes), Kind: setting.Int, Default: "0", Min: 0, Max: 64,
			Description: "nodes requests go to: 0 every node of the target in round robin, N the first N (1: one coordinating node for all requests)"},
		{Key: k(SetEntryNodes), Kind: setting.String, Default: "", Check: checkEntryNodes,
			Description: "the nodes every request enters the cluster through, comma-separated: node names (node1: of the --cluster, dedicated cluster managers included, or as the server names them) or host:port; empty: the target's nodes in round robin"},
		{Key: k(SetTimeout), Kind: setting.Duration, Default: "30s", Min: 0.001, Max: 3600,
			Description: "timeout of each request (class timeout)"},
		{Key: k(SetIndexPrefix), Kind: setting.String, Default: DefaultIndexPrefix, Check: checkPrefix,
			Description: "prefix of every index a scenario creates (lower case; empty: the bare names), so that several runs can share a cluster; an index of the scenario's name that scalelab did not create is refused"},
		{Key: k(SetUser), Kind: setting.String, Default: "",
			Description: "HTTP basic-auth user; the password comes from $SCALELAB_" + strings.ToUpper(e.name) + "_PASSWORD or the cluster's 0600 secret file, never from a flag"},
		{Key: k(SetIndexWait), Kind: setting.Duration, Default: "2m", Min: 1, Max: 86400,
			Description: "how long to wait, before failing, for the writes to an index still running on the cluster to end before it is recreated, and for a new index to have all its shard copies (health green, or yellow when replicas cannot be placed)"},
		engine.ReplaceExistingSpec(e.name),
	}
}

// Refresh is a resolved refresh policy.
type Refresh struct {
	Policy   string // as given: interval:1s, none, wait_for, true
	Interval string // index.refresh_interval ("-1" for none)
	Param    string // the refresh parameter of every write: "", "wait_for" or "true"
}

var intervalRE = regexp.MustCompile(`^[0-9]+(ms|s|m|h)$`)

// ParseRefresh resolves a refresh setting value.
func ParseRefresh(v string) (Refresh, error) {
	switch {
	case v == "none":
		return Refresh{Policy: v, Interval: "-1"}, nil
	case v == "wait_for" || v == "true":
		return Refresh{Policy: v, Interval: "1s", Param: v}, nil
	case strings.HasPrefix(v, "interval:"):
		iv := strings.TrimPrefix(v, "interval:")
		if !intervalRE.MatchString(iv) {
			return Refresh{}, fmt.Errorf("interval %q is not a time value such as 500ms, 1s, 30s or 1m", iv)
		}
		return Refresh{Policy: v, Interval: iv}, nil
	}
	return Refresh{}, fmt.Errorf("%q: allowed: interval:DURATION (e.g. interval:1s, interval:30s), none, wait_for, true", v)
}

func checkRefresh(v setting.Value) error {
	_, err := ParseRefresh(v.String())
	return err
}

var prefixRE = regexp.MustCompile(`^([a-z0-9][a-z0-9_.-]*)?$`)

func checkPrefix(v setting.Value) error {
	if !prefixRE.MatchString(v.String()) || len(v.String()) > 100 {
		return errors.New("lower-case letters, digits, '-', '_' and '.', starting with a letter or digit")
	}
	return nil
}

// Options are an engine's resolved settings.
type Options struct {
	Shards      int
	Replicas    int
	Refresh     Refresh
	Routing     string // none|user
	Layout      string // shared|per_user
	ForceMerge  bool
	BulkSize    int
	ClientNodes int
	EntryNodes  []string // node names or host:port; nil: the target's nodes
	Timeout     time.Duration
	User        string
	IndexPrefix string
	IndexWait   time.Duration // bound of the wait for a new index's shards
	// ReplaceExisting (<engine>.replace_existing): Claim and DeleteIndex
	// delete an index scalelab did not create instead of refusing it.
	ReplaceExisting bool
	// Mark is the _meta.created_by of the indices the connection creates
	// (engine.Mark of the run; "": a mark naming no scenario).
	Mark string
}

// OptionsFrom reads an engine's settings from set; missing keys take their
// defaults.
func (e *Engine) OptionsFrom(set *setting.Set) (Options, error) {
	byKey := setting.Getter(set, e.Settings())
	get := func(name string) setting.Value { return byKey(e.Key(name)) }
	r, err := ParseRefresh(get(SetRefresh).String())
	if err != nil {
		return Options{}, fmt.Errorf("%w: %s: %v", setting.ErrBadValue, e.Key(SetRefresh), err)
	}
	entries, err := ParseEntryNodes(get(SetEntryNodes).String())
	if err != nil {
		return Options{}, fmt.Errorf("%w: %s: %v", setting.ErrBadValue, e.Key(SetEntryNodes), err)
	}
	return Options{
		EntryNodes:  entries,
		Shards:      int(get(SetShards).Int()),
		Replicas:    int(get(SetReplicas).Int()),
		Refresh:     r,
		Routing:     get(SetRouting).String(),
		Layout:      get(SetIndexLayout).String(),
		ForceMerge:  get(SetForceMerge).Bool(),
		BulkSize:    int(get(SetBulkSize).Int()),
		ClientNodes: int(get(SetClientNodes).Int()),
		Timeout:     get(SetTimeout).Duration(),
		User:        get(SetUser).String(),
		IndexPrefix: get(SetIndexPrefix).String(),
		IndexWait:   get(SetIndexWait).Duration(),

		ReplaceExisting: get(engine.ReplaceExistingKey).Bool(),
	}, nil
}

// DefaultURL is the target when none is given and no environment variable
// names one.
const DefaultURL = "http://127.0.0.1:9200"

// defaultTarget returns the target Open uses when neither a target nor a
// cluster is given: $SCALELAB_OPENSEARCH_URL or $SCALELAB_ELASTICSEARCH_URL,
// else DefaultURL.
func defaultTarget(engineName string) (string, error) {
	if v := os.Getenv("SCALELAB_" + strings.ToUpper(engineName) + "_URL"); v != "" {
		return v, nil
	}
	return DefaultURL, nil
}

var _ engine.TargetChecker = (*Engine)(nil)

// CheckTarget checks a target's form (http[s]://host:port nodes, no
// credentials) without connecting.
func (e *Engine) CheckTarget(target string) error {
	if target == "" {
		return nil // the default node, as Open finds it
	}
	if _, err := ParseTarget(target); err != nil {
		return fmt.Errorf("%w: %s target: %w", engine.ErrConfig, e.name, err)
	}
	return nil
}

// ParseTarget splits a target "http://host:port[,host:port...]" into node
// URLs. A node without a scheme takes the first node's scheme (http by
// default). Credentials in a URL are refused: passwords come from the
// environment or a secret file.
func ParseTarget(target string) ([]string, error) {
	var out []string
	scheme := "http"
	for i, part := range strings.Split(target, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !strings.Contains(part, "://") {
			part = scheme + "://" + part
		}
		u, err := url.Parse(part)
		if err != nil {
			return nil, fmt.Errorf("target node %q: %w", part, err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return nil, fmt.Errorf("target node %q: scheme must be http or https", part)
		}
		if u.User != nil {
			return nil, fmt.Errorf("target node %s: put no credentials in the target; set %s.user and the password in the environment", u.Host, "<engine>")
		}
		if u.Port() == "" {
			return nil, fmt.Errorf("target node %q: give host:port (e.g. 127.0.0.1:9200)", part)
		}
		if u.Path != "" && u.Path != "/" {
			return nil, fmt.Errorf("target node %q: no path expected", part)
		}
		if i == 0 {
			scheme = u.Scheme
		}
		out = append(out, u.Scheme+"://"+u.Host)
	}
	if len(out) == 0 {
		return nil, errors.New("empty target: give http://host:port[,host:port...]")
	}
	return out, nil
}

// Open connects to the target's nodes (or the cluster's), checks that the
// server is the engine's distribution and returns the connection. Failures
// to reach it wrap engine.ErrUnreachable.
func (e *Engine) Open(ctx context.Context, cfg engine.Config) (engine.Conn, error) {
	opts, err := e.OptionsFrom(cfg.Settings)
	if err != nil {
		return nil, err
	}
	opts.Mark = engine.Mark(cfg.Scenario, cfg.Run)
	target := cfg.Target
	if cfg.Cluster != nil {
		target = cfg.Cluster.Target
	}
	if target == "" {
		if target, err = defaultTarget(e.name); err != nil {
			return nil, fmt.Errorf("open %s: %w: %w", e.name, engine.ErrUnreachable, err)
		}
	}
	nodes, err := ParseTarget(target)
	if err != nil {
		return nil, fmt.Errorf("%w: --target: %v", setting.ErrBadValue, err)
	}
	if opts.ClientNodes > 0 && len(opts.EntryNodes) > 0 {
		return nil, fmt.Errorf("%w: %s and %s: %w", setting.ErrBadValue, e.Key(SetEntryNodes), e.Key(SetClientNodes), errEntryAndClientNodes)
	}
	if opts.ClientNodes > 0 {
		if opts.ClientNodes > len(nodes) {
			return nil, fmt.Errorf("%w: %s=%d but the target has %d nodes", setting.ErrBadValue, e.Key(SetClientNodes), opts.ClientNodes, len(nodes))
		}
		nodes = nodes[:opts.ClientNodes]
	}
	password := os.Getenv(PasswordEnv(e.name))
	if cfg.Cluster != nil && password == "" {
		if password, err = cfg.Cluster.Password(); err != nil {
			return nil, fmt.Errorf("open %s: %w", e.name, err)
		}
		if opts.User == "" {
			opts.User = cfg.Cluster.User
		}
	}
	var names map[string]string // node URL -> entry name
	if len(opts.EntryNodes) > 0 {
		probe, err := dial(e.name, nodes, opts, password)
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", e.name, err)
		}
		entries, err := e.resolveEntryNodes(ctx, opts.EntryNodes, cfg.Cluster, probe)
		probe.Close()
		if err != nil {
			return nil, err
		}
		nodes, names = nil, map[string]string{}
		for _, en := range entries {
			nodes = append(nodes, en.URL)
			names[en.URL] = en.Name
		}
	}
	if names == nil && cfg.Cluster != nil {
		names = map[string]string{} // label the client's per-node counts by node name
		for _, n := range cfg.Cluster.Nodes {
			names[nodeScheme(nodes)+"://"+n.ClientAddress()] = n.Name
		}
	}
	c, err := dial(e.name, nodes, opts, password)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", e.name, err)
	}
	c.names = names
	if err := c.identify(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}
