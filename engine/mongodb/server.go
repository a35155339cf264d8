package mongodb

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/metrics"
)

// Server is what a deployment says it is.
type Server struct {
	Version  string // the MongoDB version it reports (a wire-compatible server's API level)
	FerretDB string // FerretDB's version, "" for MongoDB
	Backend  string // FerretDB's storage backend (sqlite, postgresql)
	Sharded  bool   // a mongos router of a sharded cluster (hello answers msg "isdbgrid")
	SetName  string // replica set name, "" for none
}

// Product names the server as results show it: "MongoDB 7.0.5", or
// "FerretDB v1.24.2 (sqlite backend)" for FerretDB, never MongoDB.
func (s Server) Product() string {
	if s.FerretDB != "" {
		p := "FerretDB " + s.FerretDB
		if s.Backend != "" {
			p += " (" + s.Backend + " backend)"
		}
		return p
	}
	return "MongoDB " + s.Version
}

// Topology is "sharded cluster", "replica set NAME" or "standalone".
func (s Server) Topology() string {
	switch {
	case s.Sharded:
		return "sharded cluster"
	case s.SetName != "":
		return "replica set " + s.SetName
	}
	return "standalone"
}

// describe asks the server what it is (hello and buildInfo).
func describe(ctx context.Context, cl *mongo.Client) (Server, error) {
	var hello struct {
		Msg     string `bson:"msg"`
		SetName string `bson:"setName"`
	}
	admin := cl.Database("admin")
	if err := admin.RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Decode(&hello); err != nil {
		return Server{}, fmt.Errorf("hello: %w", err)
	}
	var bi struct {
		Version  string `bson:"version"`
		FerretDB string `bson:"ferretdbVersion"`
		Env      bson.M `bson:"buildEnvironment"`
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&bi); err != nil {
		return Server{}, fmt.Errorf("buildInfo: %w", err)
	}
	s := Server{Version: bi.Version, FerretDB: bi.FerretDB, Sharded: hello.Msg == "isdbgrid", SetName: hello.SetName}
	if b, ok := bi.Env["backend"].(string); ok {
		s.Backend = b
	}
	return s, nil
}

// checkSharding refuses sharding settings against a server that is not a
// sharded cluster.
func (c *Conn) checkSharding() error {
	if c.server.Sharded {
		return nil
	}
	var set []string
	if c.opts.ShardKey != "" {
		set = append(set, KeyShardKey+"="+c.opts.ShardKey)
	}
	if c.opts.ChunkSizeMB > 0 {
		set = append(set, fmt.Sprintf("%s=%d", KeyChunkSize, c.opts.ChunkSizeMB))
	}
	if len(set) == 0 {
		return nil
	}
	what := c.server.Product() + ", a " + c.server.Topology()
	if c.server.FerretDB != "" {
		what += " (FerretDB has no sharding)"
	}
	return fmt.Errorf("%w: %s needs a sharded cluster: a target naming its mongos routers (which answer hello with msg \"isdbgrid\"); the server at %s is %s",
		ErrConfig, strings.Join(set, " and "), c.t.Hosts[0], what)
}

// setChunkSize sets the cluster's chunk size (config.settings).
func (c *Conn) setChunkSize(ctx context.Context) error {
	_, err := c.clients[0].Database("config").Collection("settings").UpdateOne(ctx,
		bson.D{{Key: "_id", Value: "chunksize"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "value", Value: c.opts.ChunkSizeMB}}}},
		options.UpdateOne().SetUpsert(true))
	if err != nil {
		return fmt.Errorf("mongodb: set chunk size: %w", err)
	}
	return nil
}

// shardCollection shards a new collection on the configured key.
func (c *Conn) shardCollection(ctx context.Context, coll string) error {
	if !c.server.Sharded || c.opts.ShardKey == "" {
		return nil
	}
	kind, field, _ := strings.Cut(c.opts.ShardKey, ":")
	var key bson.D
	if kind == "hashed" {
		key = bson.D{{Key: field, Value: "hashed"}}
	} else {
		key = bson.D{{Key: field, Value: 1}}
	}
	admin := c.clients[0].Database("admin")
	if err := admin.RunCommand(ctx, bson.D{{Key: "enableSharding", Value: c.t.Database}}).Err(); err != nil {
		return fmt.Errorf("mongodb: enableSharding %s: %w", c.t.Database, err)
	}
	ns := c.t.Database + "." + coll
	if err := admin.RunCommand(ctx, bson.D{{Key: "shardCollection", Value: ns}, {Key: "key", Value: key}}).Err(); err != nil {
		return fmt.Errorf("mongodb: shardCollection %s on %s: %w", ns, c.opts.ShardKey, err)
	}
	return nil
}

// shardDistribution describes a sharded cluster: its shard count and the
// chunks of the database's collections per shard.
func (c *Conn) shardDistribution(ctx context.Context) (string, error) {
	admin := c.clients[0].Database("admin")
	var ls struct {
		Shards []struct {
			ID string `bson:"_id"`
		} `bson:"shards"`
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "listShards", Value: 1}}).Decode(&ls); err != nil {
		return "", fmt.Errorf("listShards: %w", err)
	}
	cfg := c.clients[0].Database("config")
	cur, err := cfg.Collection("collections").Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: "^" + c.t.Database + `\.`}}}})
	if err != nil {
		return "", fmt.Errorf("config.collections: %w", err)
	}
	var colls []struct {
		UUID any `bson:"uuid"`
	}
	if err := cur.All(ctx, &colls); err != nil {
		return "", fmt.Errorf("config.collections: %w", err)
	}
	uuids := make(bson.A, 0, len(colls))
	for _, cl := range colls {
		uuids = append(uuids, cl.UUID)
	}
	cur, err = cfg.Collection("chunks").Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "uuid", Value: bson.D{{Key: "$in", Value: uuids}}}}}},
		{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$shard"}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}},
	})
	if err != nil {
		return "", fmt.Errorf("config.chunks: %w", err)
	}
	var per []struct {
		Shard string `bson:"_id"`
		N     int64  `bson:"n"`
	}
	if err := cur.All(ctx, &per); err != nil {
		return "", fmt.Errorf("config.chunks: %w", err)
	}
	parts := make([]string, 0, len(per))
	for _, p := range per {
		parts = append(parts, fmt.Sprintf("%s:%d", p.Shard, p.N))
	}
	sort.Strings(parts)
	return fmt.Sprintf("%d shards; chunks %s", len(ls.Shards), strings.Join(parts, " ")), nil
}

// spread counts the commands each server received (a router of a sharded
// cluster, or a replica set member), from the driver's command monitor:
// what the driver really sent where, whichever client chose.
type spread struct {
	counts sync.Map // address -> *atomic.Int64
}

func newSpread() *spread { return &spread{} }

func (s *spread) monitor() *event.CommandMonitor {
	return &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		addr, _, _ := strings.Cut(e.ConnectionID, "[")
		n, ok := s.counts.Load(addr)
		if !ok {
			n, _ = s.counts.LoadOrStore(addr, new(atomic.Int64))
		}
		n.(*atomic.Int64).Add(1)
	}}
}

// Counts returns the commands sent per server address.
func (s *spread) Counts() map[string]int64 {
	out := map[string]int64{}
	s.counts.Range(func(k, v any) bool {
		out[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	return out
}

func (s *spread) String() string {
	counts := s.Counts()
	parts := make([]string, 0, len(counts))
	for k, v := range counts {
		parts = append(parts, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// RequestsPerServer returns the commands sent to each server so far.
func (c *Conn) RequestsPerServer() map[string]int64 { return c.spread.Counts() }

// Classify gives the driver's errors their outcome class: timeouts,
// refused connections, writes rejected for their write concern or for want
// of a primary, and duplicate keys as integrity.
func (c *Conn) Classify(ctx context.Context, err error) error { return Classify(ctx, err) }

// Error codes the classifier knows.
const (
	codeNotWritablePrimary      = 10107
	codeNotPrimaryNoSecondaryOk = 13435
	codeNotPrimaryOrSecondary   = 13436
	codeInterruptedAtShutdown   = 11600
	codePrimarySteppedDown      = 189
	codeWriteConcernFailed      = 64
	codeExceededTimeLimit       = 50
	codeShutdownInProgress      = 91
)

// Classify is the engine's classifier (see Conn.Classify).
func Classify(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ended, e := engine.Ended(ctx, err); ended {
		return e
	}
	var classed metrics.Classed
	if errors.As(err, &classed) {
		return err
	}
	switch {
	case mongo.IsDuplicateKeyError(err):
		return metrics.WithClass(metrics.Integrity, err)
	case mongo.IsTimeout(err):
		return metrics.WithClass(metrics.Timeout, err)
	case mongo.IsNetworkError(err), errors.Is(err, mongo.ErrClientDisconnected):
		return metrics.WithClass(metrics.Refused, err)
	}
	var we mongo.WriteException
	if errors.As(err, &we) && we.WriteConcernError != nil {
		return metrics.WithClass(metrics.Rejected, err)
	}
	var se mongo.ServerError
	if errors.As(err, &se) {
		for _, code := range []int{codeNotWritablePrimary, codeNotPrimaryNoSecondaryOk, codeNotPrimaryOrSecondary,
			codeInterruptedAtShutdown, codePrimarySteppedDown, codeWriteConcernFailed, codeShutdownInProgress} {
			if se.HasErrorCode(code) {
				return metrics.WithClass(metrics.Rejected, err)
			}
		}
		if se.HasErrorCode(codeExceededTimeLimit) {
			return metrics.WithClass(metrics.Timeout, err)
		}
	}
	return err
}
