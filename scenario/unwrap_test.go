package scenario

import (
	"context"
	"testing"
	"time"
)

type thinkSession struct{}

func (thinkSession) Next() (int, bool)            { return 0, true }
func (thinkSession) Do(context.Context) error     { return nil }
func (thinkSession) Think() (time.Duration, bool) { return time.Second, true }

type wrapSession struct{ Session }

func (w wrapSession) Unwrap() Session { return w.Session }

// TestSessionCapability finds a capability through two wrappers, and
// none where nothing under the wrappers has it.
func TestSessionCapability(t *testing.T) {
	s := wrapSession{wrapSession{thinkSession{}}}
	th, ok := SessionCapability[Thinker](s)
	if !ok {
		t.Fatal("the Thinker under two wrappers was not found")
	}
	if d, _ := th.Think(); d != time.Second {
		t.Errorf("Think = %v, want the wrapped session's 1s", d)
	}
	if _, ok := SessionCapability[Composer](s); ok {
		t.Error("a Composer was found where no session has one")
	}
	if _, ok := SessionCapability[Thinker](nil); ok {
		t.Error("a Thinker was found in a nil session")
	}
}
