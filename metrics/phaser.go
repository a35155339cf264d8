package metrics

import (
	"math"
	"runtime"
	"sync/atomic"
)

// phaser lets many writers record without locks while one reader swaps the
// buffer they write to and waits until no writer is still using the old one
// (the writer-reader phaser of HdrHistogram's Recorder). A writer costs two
// uncontended atomic adds.
type phaser struct {
	start   atomic.Int64
	_       [56]byte // keep the writer's counters off the reader's cache line
	evenEnd atomic.Int64
	oddEnd  atomic.Int64
}

// enter marks the start of a write and returns the token exit needs.
func (p *phaser) enter() int64 { return p.start.Add(1) - 1 }

// exit marks the end of the write entered with token e.
func (p *phaser) exit(e int64) {
	if e < 0 {
		p.oddEnd.Add(1)
	} else {
		p.evenEnd.Add(1)
	}
}

// flip starts a new phase and waits until every writer that entered in the
// previous phase has exited. Only one goroutine may call flip at a time.
func (p *phaser) flip() {
	nextEven := p.start.Load() < 0
	var initial int64
	if nextEven {
		p.evenEnd.Store(0)
	} else {
		initial = math.MinInt64
		p.oddEnd.Store(initial)
	}
	atFlip := p.start.Swap(initial)
	for {
		var end int64
		if nextEven {
			end = p.oddEnd.Load()
		} else {
			end = p.evenEnd.Load()
		}
		if end == atFlip {
			return
		}
		runtime.Gosched()
	}
}
