package null_test

import (
	"context"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/null"
	"github.com/scalelab/scalelab/setting"
)

func TestRegisteredAndOpens(t *testing.T) {
	t.Parallel()
	e, err := engine.Lookup("null")
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Settings()) != 0 {
		t.Errorf("null has settings: %v", e.Settings())
	}
	c, err := e.Open(context.Background(), engine.Config{Settings: setting.NewSet(), Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.(*null.Conn); !ok {
		t.Fatalf("conn is %T, want *null.Conn", c)
	}
	info, err := c.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.Engine != "null" || info.Version != "n/a" {
		t.Errorf("info = %+v", info)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestOpenHonoursDoneContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (&null.Engine{}).Open(ctx, engine.Config{}); err == nil {
		t.Fatal("Open with a cancelled context succeeded")
	}
}
