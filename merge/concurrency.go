package merge

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/report"
	"github.com/scalelab/scalelab/results"
)

// writeConcurrency rebuilds concurrency.csv on the merged timeline when
// the segments have one (the threads model): per interval, the segments'
// mean operations in flight and users summed (means add exactly: each is
// a time integral over the same interval), and their maxima summed, an
// upper bound of the whole's. It returns run.json's concurrency (nil
// when no segment counted its operations in flight).
func writeConcurrency(use []*shard, warmupS float64, path string) (*results.Concurrency, error) {
	type sums struct {
		lenS       float64
		mean       float64
		most, user int64
	}
	type key struct {
		start  float64
		warmup bool
	}
	rows := map[key]*sums{}
	var c *results.Concurrency
	for _, s := range use {
		rc := s.run.Concurrency
		if rc == nil {
			continue
		}
		got, err := report.ReadConcurrency(filepath.Join(s.dir, results.ConcurrencyFile))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("segment %d: %w", s.run.Segment.Index, err)
		}
		if c == nil {
			c = &results.Concurrency{Users: rc.Users, MaxIsBound: len(use) > 1}
		}
		c.MeanInFlight += rc.MeanInFlight
		for _, r := range got {
			k := key{seriesKey(r.T-r.IntervalS, s.offsetS, warmupS, r.Warmup), r.Warmup}
			sm := rows[k]
			if sm == nil {
				sm = &sums{}
				rows[k] = sm
			}
			sm.lenS = max(sm.lenS, r.IntervalS)
			sm.mean += r.Mean
			sm.most += r.Max
			sm.user += r.Users
		}
	}
	if c == nil {
		return nil, nil
	}
	keys := make([]key, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].start < keys[j].start })
	var b bytes.Buffer
	b.WriteString(metrics.ConcurrencyHeader())
	for _, k := range keys {
		sm := rows[k]
		metrics.FormatConcurrencyRow(&b, k.start+sm.lenS, sm.lenS, sm.mean, sm.most, sm.user, k.warmup)
		if !k.warmup {
			c.MaxInFlight = max(c.MaxInFlight, sm.most)
		}
	}
	return c, results.WriteFileAtomic(path, b.Bytes())
}
