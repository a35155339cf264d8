package mongodb

import (
	"context"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// statsSections are the parts of serverStatus SampleStats reports.
var statsSections = []string{"opcounters", "connections", "mem", "metrics"}

// SampleStats reports what serverStatus says on each client's server:
// "mongo.opcounters.insert", "mongo.connections.current", "mongo.mem.resident"
// and the per-command counters under "mongo.metrics.commands.<cmd>.total"
// (with several routers: "mongo.r1.", "mongo.r2.", ...). A server that
// answers only part of serverStatus (FerretDB) reports what it has.
func (c *Conn) SampleStats(ctx context.Context) (map[string]float64, error) {
	out := map[string]float64{}
	for i, cl := range c.clients {
		prefix := "mongo."
		if len(c.clients) > 1 {
			prefix = fmt.Sprintf("mongo.r%d.", i+1)
		}
		var st bson.M
		if err := cl.Database("admin").RunCommand(ctx, bson.D{{Key: "serverStatus", Value: 1}}).Decode(&st); err != nil {
			return nil, fmt.Errorf("sample mongodb stats: serverStatus: %w", err)
		}
		for _, s := range statsSections {
			if v, ok := st[s]; ok {
				flatten(prefix+s, v, out, 4)
			}
		}
	}
	return out, nil
}

// flatten adds the numbers of v under prefix, descending depth levels.
func flatten(prefix string, v any, out map[string]float64, depth int) {
	switch x := v.(type) {
	case bson.M:
		if depth == 0 {
			return
		}
		for k, e := range x {
			flatten(prefix+"."+strings.ToLower(k), e, out, depth-1)
		}
	case bson.D:
		if depth == 0 {
			return
		}
		for _, e := range x {
			flatten(prefix+"."+strings.ToLower(e.Key), e.Value, out, depth-1)
		}
	case int32:
		out[prefix] = float64(x)
	case int64:
		out[prefix] = float64(x)
	case float64:
		out[prefix] = x
	}
}
