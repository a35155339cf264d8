package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scalelab/scalelab/cluster/jvm/jvmtest"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/setting"
	"github.com/scalelab/scalelab/wait"
)

func TestRegistered(t *testing.T) {
	t.Parallel()
	for _, name := range []string{OpenSearch, Elasticsearch} {
		e, err := engine.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, sp := range e.Settings() {
			if !strings.HasPrefix(sp.Key, name+".") || sp.Description == "" {
				t.Errorf("%s: bad spec %+v", name, sp)
			}
			if _, err := sp.Parse(sp.Default); err != nil {
				t.Errorf("%s: default of %s does not parse: %v", name, sp.Key, err)
			}
		}
	}
}

func TestParseRefresh(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in              string
		interval, param string
		bad             bool
	}{
		{in: "interval:1s", interval: "1s"},
		{in: "interval:30s", interval: "30s"},
		{in: "interval:500ms", interval: "500ms"},
		{in: "none", interval: "-1"},
		{in: "wait_for", interval: "1s", param: "wait_for"},
		{in: "true", interval: "1s", param: "true"},
		{in: "interval:", bad: true},
		{in: "interval:1x", bad: true},
		{in: "1s", bad: true},
		{in: "false", bad: true},
		{in: "", bad: true},
	} {
		r, err := ParseRefresh(c.in)
		if (err != nil) != c.bad {
			t.Errorf("%q: error %v, want bad=%t", c.in, err, c.bad)
			continue
		}
		if !c.bad && (r.Interval != c.interval || r.Param != c.param || r.Policy != c.in) {
			t.Errorf("%q: got %+v", c.in, r)
		}
	}
}

func TestSettingErrors(t *testing.T) {
	t.Parallel()
	e := &Engine{name: OpenSearch}
	set := setting.NewSet(e.Settings()...)
	enginetest.RefusesSettings(t, set, "opensearch.refresh=sometimes", "opensearch.shards=0", "opensearch.routing=hash",
		"opensearch.index_prefix=Upper", "opensearch.index_prefix=-x", "opensearch.client_nodes=-1")
	enginetest.AcceptsSettings(t, set, "opensearch.refresh=interval:30s", "opensearch.shards=6", "opensearch.replicas=0",
		"opensearch.routing=user", "opensearch.index_layout=per_user", "opensearch.index_prefix=run1-", "opensearch.force_merge=true")
	o, err := e.OptionsFrom(set)
	if err != nil {
		t.Fatal(err)
	}
	want := Options{Shards: 6, Replicas: 0, Refresh: Refresh{Policy: "interval:30s", Interval: "30s"}, Routing: RoutingUser,
		Layout: LayoutPerUser, ForceMerge: true, BulkSize: 1000, Timeout: 30 * time.Second, IndexPrefix: "run1-", IndexWait: 2 * time.Minute}
	if !reflect.DeepEqual(o, want) {
		t.Errorf("options %+v, want %+v", o, want)
	}
}

func TestParseTarget(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want string
		bad  bool
	}{
		{in: "http://127.0.0.1:9200", want: "http://127.0.0.1:9200"},
		{in: "http://127.0.0.1:9200,127.0.0.1:9201", want: "http://127.0.0.1:9200 http://127.0.0.1:9201"},
		{in: "127.0.0.1:9200, 127.0.0.1:9201", want: "http://127.0.0.1:9200 http://127.0.0.1:9201"},
		{in: "https://a:9200,b:9201", want: "https://a:9200 https://b:9201"},
		{in: "http://u:p@a:9200", bad: true},
		{in: "http://a", bad: true},
		{in: "ftp://a:1", bad: true},
		{in: "http://a:1/path", bad: true},
		{in: "", bad: true},
		{in: " , ", bad: true},
	} {
		got, err := ParseTarget(c.in)
		if (err != nil) != c.bad {
			t.Errorf("%q: %v, want bad=%t", c.in, err, c.bad)
			continue
		}
		if !c.bad && strings.Join(got, " ") != c.want {
			t.Errorf("%q: %v, want %s", c.in, got, c.want)
		}
	}
}

func TestAppendJSONString(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain", `q"uote`, `back\slash`, "tab\tnl\ncr\r", "\x00\x01\x1f", "héllo €", "bad\xffutf8", "<&>", strings.Repeat("x", 300)} {
		got := AppendJSONString([]byte("pre"), s)
		if !strings.HasPrefix(string(got), "pre") {
			t.Fatalf("%q: prefix lost", s)
		}
		var back string
		if err := json.Unmarshal(got[3:], &back); err != nil {
			t.Errorf("%q: %s does not decode: %v", s, got[3:], err)
			continue
		}
		want := strings.ToValidUTF8(s, "\uFFFD")
		if back != want {
			t.Errorf("%q: decoded %q", s, back)
		}
	}
}

func TestBulkBuilder(t *testing.T) {
	t.Parallel()
	var b BulkBuilder
	b.Index("logs", "1", "", []byte(`{"a":1}`))
	b.Create("logs", "x\"y", "u1", []byte(`{"b":2}`))
	want := `{"index":{"_index":"logs","_id":"1"}}` + "\n" + `{"a":1}` + "\n" +
		`{"create":{"_index":"logs","_id":"x\"y","routing":"u1"}}` + "\n" + `{"b":2}` + "\n"
	if string(b.Bytes()) != want || b.Len() != 2 {
		t.Errorf("body %q (%d actions)", b.Bytes(), b.Len())
	}
	b.Reset()
	if b.Len() != 0 || len(b.Bytes()) != 0 {
		t.Error("reset kept actions")
	}
}

func TestParseRoles(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		nodes int
		roles string
		want  string
		bad   bool
	}{
		{nodes: 0, want: "cm+data+ingest"},
		{nodes: 3, want: "cm+data+ingest,cm+data+ingest,cm+data+ingest"},
		{nodes: 3, roles: "cm,data,data", want: "cm,data+ingest,data+ingest"},
		{nodes: 0, roles: "cm+data,coord", want: "cm+data+ingest,coord"},
		{nodes: 2, roles: "all,ingest+data", want: "cm+data+ingest,data+ingest"},
		{nodes: 2, roles: "cm,data,data", bad: true},
		{nodes: 2, roles: "data,data", bad: true},
		{nodes: 1, roles: "cm", bad: true},
		{nodes: 1, roles: "boss", bad: true},
	} {
		var roles []string
		if c.roles != "" {
			roles = strings.Split(c.roles, ",")
		}
		got, err := parseRoles(c.nodes, roles)
		if (err != nil) != c.bad {
			t.Errorf("%d %q: %v, want bad=%t", c.nodes, c.roles, err, c.bad)
			continue
		}
		var names []string
		for _, r := range got {
			names = append(names, r.String())
		}
		if !c.bad && strings.Join(names, ",") != c.want {
			t.Errorf("%d %q: %v, want %s", c.nodes, c.roles, names, c.want)
		}
	}
	r := nodeRoles{cm: true, data: true}
	if got := r.server(distributions[OpenSearch]); got != "[cluster_manager,data]" {
		t.Errorf("opensearch roles %s", got)
	}
	if got := r.server(distributions[Elasticsearch]); got != "[master,data]" {
		t.Errorf("elasticsearch roles %s", got)
	}
	if got := (nodeRoles{}).server(distributions[OpenSearch]); got != "[]" {
		t.Errorf("coordinating roles %s", got)
	}
}

// fakeServer answers like a search node and counts requests per path.
type fakeServer struct {
	*httptest.Server
	mu    sync.Mutex
	paths map[string]int
}

func newFake(t *testing.T, distribution string, handle func(w http.ResponseWriter, r *http.Request) bool) *fakeServer {
	f := &fakeServer{paths: map[string]int{}}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.paths[r.Method+" "+r.URL.Path]++
		f.mu.Unlock()
		if handle != nil && handle(w, r) {
			return
		}
		switch r.URL.Path {
		case "/":
			v := map[string]any{"number": "3.8.0"}
			if distribution != "" {
				v["distribution"] = distribution
			} else {
				v["number"] = "7.10.2"
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"cluster_name": "fake", "version": v})
		case "/_cat/nodes":
			fmt.Fprint(w, `[{"name":"n1","node.role":"dimr","master":"*"}]`)
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":{"type":"x","reason":"no such path"},"status":404}`)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) count(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.paths[key]
}

func open(t *testing.T, name, target string, assignments ...string) (*Conn, error) {
	t.Helper()
	e, _ := engine.Lookup(name)
	set := setting.NewSet(e.Settings()...)
	for _, a := range assignments {
		if err := set.Apply(a); err != nil {
			t.Fatal(err)
		}
	}
	c, err := e.Open(context.Background(), engine.Config{Target: target, Settings: set})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { c.Close() })
	return c.(*Conn), nil
}

// mustOpen is open failing t on an error.
func mustOpen(t *testing.T, name, target string, assignments ...string) *Conn {
	t.Helper()
	c, err := open(t, name, target, assignments...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestOpenChecksDistribution(t *testing.T) {
	t.Parallel()
	os := newFake(t, "opensearch", nil)
	es := newFake(t, "", nil)
	if _, err := open(t, OpenSearch, os.URL); err != nil {
		t.Errorf("opensearch on opensearch: %v", err)
	}
	if _, err := open(t, Elasticsearch, es.URL); err != nil {
		t.Errorf("elasticsearch on elasticsearch: %v", err)
	}
	if _, err := open(t, OpenSearch, es.URL); err == nil || !strings.Contains(err.Error(), "--engine elasticsearch") {
		t.Errorf("opensearch on elasticsearch: %v", err)
	}
	_, err := open(t, OpenSearch, "http://127.0.0.1:1")
	if !errors.Is(err, engine.ErrUnreachable) {
		t.Errorf("nothing listening: %v", err)
	}
	c := mustOpen(t, OpenSearch, os.URL, "opensearch.shards=3", "opensearch.refresh=wait_for")
	info, err := c.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"distribution": "opensearch", "nodes": "1", "index.shards": "3", "index.refresh": "wait_for", "index.replicas": "1"} {
		if info.Extra[k] != v {
			t.Errorf("info %s = %q, want %q (%v)", k, info.Extra[k], v, info.Extra)
		}
	}
	if info.Version != "opensearch 3.8.0" {
		t.Errorf("version %q", info.Version)
	}
}

// TestRoundRobin checks that requests alternate over the target's nodes,
// that client_nodes=1 sends all to the first, and that the client adds no
// background requests of its own.
func TestRoundRobin(t *testing.T) {
	t.Parallel()
	a, b := newFake(t, "opensearch", nil), newFake(t, "opensearch", nil)
	target := a.URL + "," + strings.TrimPrefix(b.URL, "http://")
	ctx := context.Background()
	c := mustOpen(t, OpenSearch, target)
	for range 10 {
		if _, _, err := c.Do(ctx, http.MethodGet, "/_ping", "", nil); err != nil {
			t.Fatal(err)
		}
	}
	if a.count("GET /_ping") != 5 || b.count("GET /_ping") != 5 {
		t.Errorf("10 requests split %d/%d", a.count("GET /_ping"), b.count("GET /_ping"))
	}
	one := mustOpen(t, OpenSearch, target, "opensearch.client_nodes=1")
	first := a
	if one.Nodes()[0] == b.URL {
		first = b
	}
	before := first.count("GET /_one")
	for range 6 {
		if _, _, err := one.Do(ctx, http.MethodGet, "/_one", "", nil); err != nil {
			t.Fatal(err)
		}
	}
	if first.count("GET /_one")-before != 6 || one.Nodes()[0] != a.URL {
		t.Errorf("client_nodes=1: %d of 6 requests to %s", first.count("GET /_one")-before, one.Nodes())
	}
	if _, err := open(t, OpenSearch, target, "opensearch.client_nodes=3"); !errors.Is(err, setting.ErrBadValue) {
		t.Errorf("client_nodes beyond the target: %v", err)
	}
	time.Sleep(200 * time.Millisecond)
	for _, f := range []*fakeServer{a, b} {
		f.mu.Lock()
		for p, n := range f.paths {
			if p != "GET /" && p != "GET /_ping" && p != "GET /_one" {
				t.Errorf("unexpected request %s (%d)", p, n)
			}
		}
		f.mu.Unlock()
	}
}

// TestErrorClasses checks the class of each kind of failure.
func TestErrorClasses(t *testing.T) {
	t.Parallel()
	f := newFake(t, "opensearch", func(w http.ResponseWriter, r *http.Request) bool {
		switch r.URL.Path {
		case "/logs/_doc/1":
			w.WriteHeader(404)
			fmt.Fprint(w, `{"_index":"logs","_id":"1","found":false}`)
		case "/missing/_doc/1":
			w.WriteHeader(404)
			fmt.Fprint(w, `{"error":{"type":"index_not_found_exception","reason":"no such index [missing]"},"status":404}`)
		case "/logs/_doc/2":
			w.WriteHeader(429)
			fmt.Fprint(w, `{"error":{"type":"es_rejected_execution_exception","reason":"queue full"},"status":429}`)
		case "/logs/_doc/3":
			w.WriteHeader(503)
			fmt.Fprint(w, `{"error":{"type":"unavailable_shards_exception","reason":"primary shard is not active"},"status":503}`)
		case "/logs/_doc/4":
			time.Sleep(2 * time.Second) // well past the timeout, even on a starved machine
		case "/logs/_doc/5":
			w.WriteHeader(400)
			fmt.Fprint(w, `{"error":{"type":"mapper_parsing_exception","reason":"failed to parse"},"status":400}`)
		case "/_bulk":
			if r.URL.Query().Get("refresh") != "" {
				w.WriteHeader(400)
				return true
			}
			fmt.Fprint(w, `{"took":3,"errors":true,"items":[{"index":{"status":201}},{"index":{"status":429,"error":{"type":"es_rejected_execution_exception","reason":"full"}}},{"index":{"status":400,"error":{"type":"mapper_parsing_exception","reason":"bad"}}}]}`)
		default:
			return false
		}
		return true
	})
	// The timeout also bounds the first request (GET /): generous enough
	// for a loaded machine, well below the slow request's 2 s.
	c := mustOpen(t, OpenSearch, f.URL, "opensearch.timeout=500ms")
	ctx := context.Background()
	get := func(index, id string) error {
		_, err := c.GetDoc(ctx, index, id, "", "")
		return err
	}
	for _, cse := range []struct {
		err   error
		class metrics.Class
	}{
		{get("logs", "1"), metrics.NotFound},
		{get("missing", "1"), metrics.NotFound},
		{get("logs", "2"), metrics.Rejected},
		{get("logs", "3"), metrics.Rejected},
		{get("logs", "4"), metrics.Timeout},
		{get("logs", "5"), metrics.Other},
	} {
		if got := metrics.ClassOf(cse.err); got != cse.class {
			t.Errorf("%v: class %v, want %v", cse.err, got, cse.class)
		}
	}
	if err := get("logs", "1"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("missing document: %v", err)
	}
	var b BulkBuilder
	for i := range 3 {
		b.Index("logs", fmt.Sprint(i), "", []byte(`{}`))
	}
	err := c.Bulk(ctx, &b, false)
	var be *BulkError
	if !errors.As(err, &be) || be.Failed != 2 || be.Total != 3 || metrics.ClassOf(err) != metrics.Rejected {
		t.Errorf("bulk with failed items: %v (class %v)", err, metrics.ClassOf(err))
	}
	down := mustOpen(t, OpenSearch, f.URL)
	f.Close()
	if _, err := down.GetDoc(ctx, "logs", "1", "", ""); metrics.ClassOf(err) != metrics.Refused {
		t.Errorf("server gone: %v (class %v)", err, metrics.ClassOf(err))
	}
}

// TestWriteParameters checks the query parameters writes carry: the
// refresh policy and routing, and none on loads.
func TestWriteParameters(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var queries []string
	f := newFake(t, "opensearch", func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/" || r.URL.Path == "/_cat/nodes" {
			return false
		}
		mu.Lock()
		queries = append(queries, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
		mu.Unlock()
		fmt.Fprint(w, `{"took":1,"errors":false,"items":[]}`)
		return true
	})
	c := mustOpen(t, OpenSearch, f.URL, "opensearch.refresh=wait_for", "opensearch.routing=user", "opensearch.index_layout=per_user", "opensearch.index_prefix=p-")
	ctx := context.Background()
	idx := c.IndexName("activity", "User7")
	_ = c.IndexDoc(ctx, idx, "a/b", c.RoutingFor("User7"), []byte(`{}`))
	_ = c.UpdateDoc(ctx, idx, "1", c.RoutingFor("User7"), []byte(`{}`))
	var b BulkBuilder
	b.Index(idx, "1", "", []byte(`{}`))
	_ = c.Bulk(ctx, &b, false)
	_ = c.Bulk(ctx, &b, true)
	want := []string{
		"PUT /p-activity-user7/_doc/a/b?routing=User7&refresh=wait_for",
		"POST /p-activity-user7/_update/1?routing=User7&refresh=wait_for&retry_on_conflict=5",
		"POST /_bulk?refresh=wait_for",
		"POST /_bulk?",
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(queries, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(queries, "\n"), strings.Join(want, "\n"))
	}
}

// TestJDKErrors checks that a missing or too old JDK is an error naming
// what to install, and that a suitable one is found by its release file.
func TestJDKErrors(t *testing.T) {
	fake := func(version string) string { return jvmtest.FakeJDK(t, t.TempDir(), "jdk", version) }
	t.Setenv("PATH", "")
	t.Setenv("JAVA_HOME", fake("17.0.15"))
	osd := *distributions[OpenSearch]
	osd.jdk.Roots = []string{} // only the environment, not the machine's JDKs
	t.Setenv(osd.jdk.Env, "")
	if _, _, err := osd.JDK(); !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "needs JDK 21+") || !strings.Contains(err.Error(), "Java 17") {
		t.Errorf("opensearch with only Java 17: %v", err)
	}
	t.Setenv(osd.jdk.Env, fake("25.0.3"))
	if bin, v, err := osd.JDK(); err != nil || v != 25 || !strings.HasSuffix(bin, "/bin/java") {
		t.Errorf("opensearch with Java 25: %s %d %v", bin, v, err)
	}
	es := *distributions[Elasticsearch]
	es.jdk.Roots = []string{}
	t.Setenv(es.jdk.Env, fake("25.0.3"))
	t.Setenv("JAVA_HOME", "")
	if _, _, err := es.JDK(); !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "JDK 11 to 17") {
		t.Errorf("elasticsearch with only Java 25: %v", err)
	}
	t.Setenv("SCALELAB_JAVA_DIR", t.TempDir())
	if _, err := es.Classpath(); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("launcher outside a java/ directory: %v", err)
	}
}

// TestIndexWaitBounded creates an index whose shards never become active:
// the wait announces the shards' state and fails at opensearch.index_wait.
func TestIndexWaitBounded(t *testing.T) {
	t.Parallel()
	f := newFake(t, "opensearch", func(w http.ResponseWriter, r *http.Request) bool {
		switch {
		case r.URL.Path == "/stuck" && r.Method == http.MethodPut:
			fmt.Fprint(w, `{"acknowledged":true}`)
		case r.URL.Path == "/_cluster/health/stuck":
			w.WriteHeader(http.StatusRequestTimeout)
			fmt.Fprint(w, `{"status":"red","timed_out":true,"initializing_shards":1,"unassigned_shards":1}`)
		default:
			return false
		}
		return true
	})
	c := mustOpen(t, OpenSearch, f.URL, "opensearch.index_wait=6s")
	var out strings.Builder
	var mu sync.Mutex
	ctx := wait.WithOutput(context.Background(), writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return out.Write(p)
	}))
	start := time.Now()
	err := c.CreateIndex(ctx, "stuck", nil, nil)
	var te *wait.TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("CreateIndex = %v, want a bounded wait's error", err)
	}
	if took := time.Since(start); took < 6*time.Second || took > 30*time.Second {
		t.Errorf("took %s with a bound of 6s", took)
	}
	for _, want := range []string{"index stuck to be yellow: not ready after", "red, 1 initializing, 0 relocating, 1 unassigned shards", "opensearch.index_wait (6s)", "allocation/explain"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if o := out.String(); !strings.HasPrefix(o, "waiting for index stuck to be yellow: red, 1 initializing, 0 relocating, 1 unassigned shards, ") ||
		!strings.Contains(o, " s (up to 6s, opensearch.index_wait)\n") {
		t.Errorf("no announcement: %q", out.String())
	}
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
