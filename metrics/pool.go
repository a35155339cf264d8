package metrics

// Pool shares a fixed set of recorders among many goroutines (sessions of
// the phases model, of which there may be 100,000): a session takes a free
// recorder with a compare-and-swap, records, and puts it back. Nothing
// blocks; with more takers than recorders a taker moves on to the next one.
type Pool struct {
	recs []*Recorder
}

// Get takes a free recorder; hint spreads takers over the pool.
func (p *Pool) Get(hint uint32) *Recorder {
	n := uint32(len(p.recs))
	for i := hint % n; ; i = (i + 1) % n {
		r := p.recs[i]
		if !r.busy.Load() && r.busy.CompareAndSwap(false, true) {
			return r
		}
	}
}

// Put returns a recorder taken with Get.
func (p *Pool) Put(r *Recorder) { r.busy.Store(false) }
