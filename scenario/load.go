package scenario

import (
	"context"
	"sync"
)

// LoadRanges loads items [0, n) in parallel for Workload.Load: it splits
// them into one contiguous range per worker (at most workers, at least one,
// never more than there are chunks), cuts each range into chunks of at most
// chunk items and hands them in order to the function newWorker made for
// that worker (so a worker may keep buffers across its chunks). progress,
// if not nil, is called after each chunk with its size, from one goroutine
// at a time. The first error cancels the others and is returned; a
// cancelled ctx returns its error.
func LoadRanges(ctx context.Context, n int64, workers int, chunk int64, progress func(int64), newWorker func() func(ctx context.Context, lo, hi int64) error) error {
	if n <= 0 {
		return nil
	}
	chunk = max(chunk, 1)
	w := min(max(int64(workers), 1), (n+chunk-1)/chunk)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex // guards firstErr and progress calls
		firstErr error
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}
	for i := range w {
		lo, hi := n*i/w, n*(i+1)/w
		do := newWorker()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := lo; k < hi; {
				if err := ctx.Err(); err != nil {
					fail(err)
					return
				}
				end := min(k+chunk, hi)
				if err := do(ctx, k, end); err != nil {
					fail(err)
					return
				}
				if progress != nil {
					mu.Lock()
					progress(end - k)
					mu.Unlock()
				}
				k = end
			}
		}()
	}
	wg.Wait()
	return firstErr
}
