package runner

import (
	"context"
	"errors"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/scenario"
)

var errDriver = errors.New("driver: too many clients")

// classifyingConn classes errDriver as rejected, as an engine classifies
// its driver's errors.
type classifyingConn struct{}

func (classifyingConn) Info(context.Context) (engine.Info, error) { return engine.Info{}, nil }
func (classifyingConn) Close() error                              { return nil }
func (classifyingConn) Classify(_ context.Context, err error) error {
	if errors.Is(err, errDriver) {
		return metrics.WithClass(metrics.Rejected, err)
	}
	return err
}

type failingWorkload struct{ scenario.Workload }

func (failingWorkload) NewSession(uint64, uint64) scenario.Session { return failingSession{} }

type failingSession struct{}

func (failingSession) Next() (int, bool)            { return 0, true }
func (failingSession) Do(ctx context.Context) error { return errDriver }

// TestEngineClassifiesErrors: the runner applies the store's Classifier to
// what a session's Do returns, so scenarios never classify driver errors;
// without a Classifier (and no audit) the workload is not wrapped at all.
func TestEngineClassifiesErrors(t *testing.T) {
	var a *auditRun
	wl := a.wrap(failingWorkload{}, []engine.Classifier{classifyingConn{}})
	err := wl.NewSession(1, 1).Do(context.Background())
	if !errors.Is(err, errDriver) || metrics.ClassOf(err) != metrics.Rejected {
		t.Errorf("classified error %v has class %v, want rejected", err, metrics.ClassOf(err))
	}
	if w := a.wrap(failingWorkload{}, classifiers(struct{ engine.Conn }{classifyingConn{}}, nil)); w != (failingWorkload{}) {
		t.Errorf("a workload on an engine without a classifier was wrapped: %T", w)
	}
}
