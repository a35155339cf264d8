package mongodb

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/metrics"
)

func TestParseTarget(t *testing.T) {
	tg, err := ParseTarget("mongodb://bob@r1:27017,r2/app?authMechanism=PLAIN")
	if err != nil {
		t.Fatal(err)
	}
	if tg.User != "bob" || strings.Join(tg.Hosts, ",") != "r1:27017,r2:27017" || tg.Database != "app" || tg.Query.Get("authMechanism") != "PLAIN" {
		t.Fatalf("%+v", tg)
	}
	if got := tg.URI(tg.Hosts[1:]); got != "mongodb://bob@r2:27017/app?authMechanism=PLAIN" {
		t.Fatalf("URI %s", got)
	}
	if tg, err := ParseTarget("mongodb://h"); err != nil || tg.Database != "scalelab" {
		t.Fatalf("default database: %+v %v", tg, err)
	}
	parse := func(target string) error {
		_, err := ParseTarget(target)
		return err
	}
	enginetest.RefusesTargets(t, parse, "pw1", "mongodb://u:pw1@h/db", "mongodb://h/db?password=pw1", "postgres://h/db", "mongodb:///db", "mongodb://h/a.b")
}

func TestProductNamesFerretDB(t *testing.T) {
	f := Server{Version: "7.0.42", FerretDB: "v1.24.2", Backend: "sqlite"}
	if p := f.Product(); p != "FerretDB v1.24.2 (sqlite backend)" || strings.Contains(p, "MongoDB") {
		t.Fatalf("%q", p)
	}
	if p := (Server{Version: "7.0.5"}).Product(); p != "MongoDB 7.0.5" {
		t.Fatalf("%q", p)
	}
	if (Server{Sharded: true}).Topology() != "sharded cluster" || (Server{SetName: "rs0"}).Topology() != "replica set rs0" {
		t.Fatal("topology")
	}
}

// TestShardingNeedsShardedCluster: a sharding setting against a server
// that is not a mongos is a configuration error naming the server.
func TestShardingNeedsShardedCluster(t *testing.T) {
	c := &Conn{t: Target{Hosts: []string{"127.0.0.1:1"}}, server: Server{Version: "7.0.42", FerretDB: "v1.24.2", Backend: "sqlite"}}
	if err := c.checkSharding(); err != nil {
		t.Fatalf("no sharding setting: %v", err)
	}
	c.opts = Options{ShardKey: "range:name", ChunkSizeMB: 5}
	err := c.checkSharding()
	if !errors.Is(err, engine.ErrConfig) || !strings.Contains(err.Error(), "mongodb.shard_key=range:name and mongodb.chunk_size_mb=5") ||
		!strings.Contains(err.Error(), "FerretDB v1.24.2 (sqlite backend), a standalone (FerretDB has no sharding)") {
		t.Fatalf("%v", err)
	}
	c.server = Server{Version: "7.0.5", Sharded: true}
	if err := c.checkSharding(); err != nil {
		t.Fatalf("sharded: %v", err)
	}
}

func TestClassify(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		err  error
		want metrics.Class
	}{
		{mongo.WriteException{WriteErrors: []mongo.WriteError{{Code: 11000, Message: "E11000 duplicate key"}}}, metrics.Integrity},
		{mongo.WriteException{WriteConcernError: &mongo.WriteConcernError{Code: 64, Message: "waiting for replication timed out"}}, metrics.Rejected},
		{mongo.CommandError{Code: 10107, Message: "not primary"}, metrics.Rejected},
		{mongo.CommandError{Code: 50, Message: "operation exceeded time limit"}, metrics.Timeout},
		{context.DeadlineExceeded, metrics.Timeout},
		{mongo.ErrClientDisconnected, metrics.Refused},
		{engine.ErrNotFound, metrics.NotFound},
		{errors.New("other"), metrics.Other},
	} {
		if got := metrics.ClassOf(Classify(ctx, c.err)); got != c.want {
			t.Errorf("%v: class %v, want %v", c.err, got, c.want)
		}
	}
}

func TestSpreadCounts(t *testing.T) {
	s := newSpread()
	m := s.monitor()
	for _, id := range []string{"r1:27017[-3]", "r2:27017[-1]", "r1:27017[-4]"} {
		m.Started(context.Background(), eventStarted(id))
	}
	if got := s.String(); got != "r1:27017=2 r2:27017=1" {
		t.Fatalf("%s", got)
	}
}

func eventStarted(conn string) *event.CommandStartedEvent {
	return &event.CommandStartedEvent{ConnectionID: conn, CommandName: "find"}
}
