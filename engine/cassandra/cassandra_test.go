package cassandra

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/setting"
)

func TestParseTarget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want string
		err  string
	}{
		{in: "127.0.0.1", want: "127.0.0.1:9042"},
		{in: "127.0.0.1:9043, 127.0.0.2:9043", want: "127.0.0.1:9043,127.0.0.2:9043"},
		{in: "db.example:19042", want: "db.example:19042"},
		{in: "[::1]:9042", want: "[::1]:9042"},
		{in: "", err: "empty target"},
		{in: "user:pw@127.0.0.1", err: "no credentials"},
		{in: "http://127.0.0.1:9042", err: "without a scheme"},
		{in: "127.0.0.1:x", err: "not a number"},
		{in: "127.0.0.1:70000", err: "not a number"},
	} {
		got, err := ParseTarget(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseTarget(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			if err != nil && strings.Contains(err.Error(), "pw") {
				t.Errorf("ParseTarget(%q): error quotes the password: %v", tc.in, err)
			}
			continue
		}
		if err != nil || strings.Join(got, ",") != tc.want {
			t.Errorf("ParseTarget(%q) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

func TestSettings(t *testing.T) {
	t.Parallel()
	set := setting.NewSet((&Engine{}).Settings()...)
	for _, sp := range (&Engine{}).Settings() {
		if !strings.HasPrefix(sp.Key, Name+".") || sp.Description == "" {
			t.Errorf("setting %s: key must start with %s. and have a description", sp.Key, Name)
		}
	}
	enginetest.RefusesSettings(t, set,
		"cassandra.read_consistency=EACH_QUORUM", "cassandra.read_consistency=ANY", "cassandra.write_consistency=QUARUM",
		"cassandra.compaction=DTCS", "cassandra.keyspace=Bad-Name", "cassandra.keyspace=1abc", "cassandra.batch_size=0",
		"cassandra.replication=-1", "cassandra.timeout=0s")
	enginetest.AcceptsSettings(t, set, "cassandra.read_consistency=LOCAL_ONE", "cassandra.write_consistency=EACH_QUORUM",
		"cassandra.compaction=UCS", "cassandra.keyspace=logs_1", "cassandra.batch_size=500", "cassandra.replication=3")
	o, err := OptionsFrom(set)
	if err != nil {
		t.Fatal(err)
	}
	if o.ReadConsistency != gocql.LocalOne || o.WriteConsistency != gocql.EachQuorum || o.Compaction != "UCS" ||
		o.Keyspace != "logs_1" || o.BatchSize != 500 || o.Replication != 3 {
		t.Errorf("options %+v", o)
	}
	if d, err := OptionsFrom(nil); err != nil || d.ReadConsistency != gocql.Quorum || d.Replication != 0 || d.Compaction != "STCS" {
		t.Errorf("defaults %+v, %v", d, err)
	}
}

func TestStrong(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rf     int
		r, w   gocql.Consistency
		strong bool
	}{
		{3, gocql.Quorum, gocql.Quorum, true},
		{3, gocql.One, gocql.All, true},
		{3, gocql.All, gocql.One, true},
		{3, gocql.One, gocql.One, false},
		{3, gocql.One, gocql.Quorum, false},
		{3, gocql.LocalQuorum, gocql.LocalQuorum, true},
		{1, gocql.One, gocql.One, true},
		{2, gocql.One, gocql.Any, false},
		{5, gocql.Three, gocql.Three, true},
		{5, gocql.Two, gocql.Three, false},
	} {
		c := &Conn{opts: Options{Replication: tc.rf, ReadConsistency: tc.r, WriteConsistency: tc.w}}
		if got := c.Strong(); got != tc.strong {
			t.Errorf("RF %d, read %s, write %s: strong %t, want %t", tc.rf, tc.r, tc.w, got, tc.strong)
		}
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		err  error
		want metrics.Class
	}{
		{&gocql.RequestErrWriteTimeout{}, metrics.Timeout},
		{fmt.Errorf("insert: %w", &gocql.RequestErrReadTimeout{}), metrics.Timeout},
		{gocql.ErrTimeoutNoResponse, metrics.Timeout},
		{&gocql.RequestErrUnavailable{}, metrics.Rejected},
		{&gocql.RequestErrOverloaded{}, metrics.Rejected},
		{&gocql.RequestErrWriteFailure{}, metrics.Rejected},
		{gocql.ErrNoConnections, metrics.Refused},
		{gocql.ErrSessionClosed, metrics.Refused},
		{errors.New("syntax"), metrics.Other},
		{nil, metrics.OK},
	} {
		if got := metrics.ClassOf(Classify(ctx, tc.err)); got != tc.want {
			t.Errorf("Classify(%v) class %v, want %v", tc.err, got, tc.want)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := Classify(cctx, errors.New("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

// TestOpenErrors: bad targets and a role without a password are bad
// values (exit 2); nothing listening is unreachable.
func TestOpenErrors(t *testing.T) {
	e := &Engine{}
	set := setting.NewSet(e.Settings()...)
	if _, err := e.Open(context.Background(), engine.Config{Target: "http://x:1", Settings: set}); !errors.Is(err, setting.ErrBadValue) {
		t.Errorf("bad target: %v", err)
	}
	t.Setenv(PasswordEnv, "")
	if err := set.Apply(KeyUser + "=bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Open(context.Background(), engine.Config{Target: "127.0.0.1:1", Settings: set}); !errors.Is(err, setting.ErrBadValue) || !strings.Contains(err.Error(), PasswordEnv) {
		t.Errorf("user without password: %v", err)
	}
	set = setting.NewSet(e.Settings()...)
	if _, err := e.Open(context.Background(), engine.Config{Target: "127.0.0.1:1", Settings: set}); !errors.Is(err, engine.ErrUnreachable) {
		t.Errorf("nothing listening: %v", err)
	}
}

func TestNodeYAML(t *testing.T) {
	t.Parallel()
	y := nodeYAML("c3", "/d/node2", "127.0.0.2", "127.0.0.1", 7001, 9043, 8)
	for _, want := range []string{"listen_address: 127.0.0.2", "rpc_address: 127.0.0.2", `seeds: "127.0.0.1:7001"`,
		"storage_port: 7001", "native_transport_port: 9043", "authenticator: PasswordAuthenticator", "num_tokens: 8",
		"  - /d/node2/data", "commitlog_directory: /d/node2/commitlog", "cluster_name: 'c3'"} {
		if !strings.Contains(y, want) {
			t.Errorf("yaml lacks %q:\n%s", want, y)
		}
	}
}

func TestProbeValue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		typ      string
		v        any
		contains bool
		ok       bool
	}{
		{"bigint", int64(0), false, true},
		{"int", int32(0), false, true},
		{"text", "", false, true},
		{"set<text>", "", true, true},
		{"list<int>", int32(0), true, true},
		{"boolean", false, false, true},
		{"map<text, int>", nil, false, false},
		{"blob", nil, false, false},
	} {
		v, contains, ok := probeValue(tc.typ)
		if v != tc.v || contains != tc.contains || ok != tc.ok {
			t.Errorf("probeValue(%q) = %v, %t, %t; want %v, %t, %t", tc.typ, v, contains, ok, tc.v, tc.contains, tc.ok)
		}
	}
}
