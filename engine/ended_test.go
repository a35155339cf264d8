package engine

import (
	"context"
	"errors"
	"testing"
)

func TestEnded(t *testing.T) {
	op := errors.New("read tcp: use of closed connection")
	if ended, err := Ended(context.Background(), op); ended || err != op {
		t.Fatalf("live context: %v %v", ended, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if ended, err := Ended(ctx, op); !ended || !errors.Is(err, context.Canceled) || !errors.Is(err, op) {
		t.Fatalf("ended context: %v %v", ended, err)
	}
	if ended, err := Ended(ctx, context.Canceled); !ended || err != context.Canceled {
		t.Fatalf("the context's own error: %v %v", ended, err)
	}
}
