package search

import (
	"context"
	"fmt"
	"regexp"
	"strings"
)

// statsPools are the thread pools SampleStats reports.
var statsPools = []string{"write", "search", "get"}

// nodeStats is what SampleStats reads of _nodes/stats.
type nodeStats struct {
	Nodes map[string]struct {
		Name    string `json:"name"`
		Process struct {
			CPU struct {
				Percent float64 `json:"percent"`
			} `json:"cpu"`
		} `json:"process"`
		JVM struct {
			Mem struct {
				HeapUsed    float64 `json:"heap_used_in_bytes"`
				HeapPercent float64 `json:"heap_used_percent"`
			} `json:"mem"`
			GC struct {
				Collectors map[string]struct {
					Count  float64 `json:"collection_count"`
					TimeMs float64 `json:"collection_time_in_millis"`
				} `json:"collectors"`
			} `json:"gc"`
		} `json:"jvm"`
		ThreadPool map[string]struct {
			Active   float64 `json:"active"`
			Queue    float64 `json:"queue"`
			Rejected float64 `json:"rejected"`
		} `json:"thread_pool"`
		Indices struct {
			Indexing struct {
				Total float64 `json:"index_total"`
			} `json:"indexing"`
			Search struct {
				QueryTotal float64 `json:"query_total"`
			} `json:"search"`
		} `json:"indices"`
	} `json:"nodes"`
}

var unsafeName = regexp.MustCompile(`[^a-z0-9_-]+`)

// SampleStats reports, per node of the cluster, what _nodes/stats says:
// "os.<node>.cpu_percent" (Elasticsearch: "es."), heap used (bytes and
// percent), GC count and time summed over collectors, the write, search
// and get thread pools' active, queue and rejected, and the indexing and
// query totals.
func (c *Conn) SampleStats(ctx context.Context) (map[string]float64, error) {
	var ns nodeStats
	if err := c.call(ctx, "GET", "/_nodes/stats/process,jvm,thread_pool,indices", "", nil, &ns); err != nil {
		return nil, fmt.Errorf("sample %s stats: %w", c.engine, err)
	}
	prefix := "os."
	if c.flavor == Elasticsearch {
		prefix = "es."
	}
	out := map[string]float64{}
	for id, n := range ns.Nodes {
		name := unsafeName.ReplaceAllString(strings.ToLower(n.Name), "_")
		if name == "" {
			name = unsafeName.ReplaceAllString(strings.ToLower(id), "_")
		}
		p := prefix + name + "."
		out[p+"cpu_percent"] = n.Process.CPU.Percent
		out[p+"heap_used_bytes"] = n.JVM.Mem.HeapUsed
		out[p+"heap_used_percent"] = n.JVM.Mem.HeapPercent
		var gcCount, gcMs float64
		for _, g := range n.JVM.GC.Collectors {
			gcCount += g.Count
			gcMs += g.TimeMs
		}
		out[p+"gc_count"], out[p+"gc_ms"] = gcCount, gcMs
		for _, pool := range statsPools {
			if tp, ok := n.ThreadPool[pool]; ok {
				out[p+"pool."+pool+".active"] = tp.Active
				out[p+"pool."+pool+".queue"] = tp.Queue
				out[p+"pool."+pool+".rejected"] = tp.Rejected
			}
		}
		out[p+"indexing_total"] = n.Indices.Indexing.Total
		out[p+"search_query_total"] = n.Indices.Search.QueryTotal
	}
	return out, nil
}
