package kit

// Chooser picks an operation with fixed proportions (YCSB's
// DiscreteGenerator over the operation proportions). Its zero value
// chooses nothing; make one with NewChooser.
type Chooser struct {
	cum   []float64 // cumulative weights of the operations with weight > 0
	ops   []int
	total float64
}

// NewChooser returns a chooser over the operations 0..len(weights)-1 with
// the given weights (not necessarily summing to 1); operations of weight 0
// are never chosen.
func NewChooser(weights []float64) Chooser {
	var c Chooser
	for op, w := range weights {
		if w > 0 {
			c.total += w
			c.cum = append(c.cum, c.total)
			c.ops = append(c.ops, op)
		}
	}
	return c
}

// Next picks an operation with r; with a single operation it draws
// nothing.
func (c *Chooser) Next(r *RNG) int {
	if len(c.ops) == 1 {
		return c.ops[0]
	}
	return c.NextU(r.Float64())
}

// NextU picks the operation at u, a uniform value in [0, 1).
func (c *Chooser) NextU(u float64) int {
	u *= c.total
	n := len(c.ops)
	for i := 0; i < n-1; i++ {
		if u < c.cum[i] {
			return c.ops[i]
		}
	}
	return c.ops[n-1]
}
