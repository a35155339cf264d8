package enginetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/setting"
)

// RefusesSettings checks that set refuses each assignment (key=value)
// with setting.ErrBadValue and an error naming the key.
func RefusesSettings(t testing.TB, set *setting.Set, assignments ...string) {
	t.Helper()
	for _, a := range assignments {
		key, _, _ := strings.Cut(a, "=")
		if err := set.Apply(a); !errors.Is(err, setting.ErrBadValue) || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: %v, want a bad value naming %s", a, err, key)
		}
	}
}

// AcceptsSettings checks that set takes each assignment (key=value).
func AcceptsSettings(t testing.TB, set *setting.Set, assignments ...string) {
	t.Helper()
	for _, a := range assignments {
		if err := set.Apply(a); err != nil {
			t.Errorf("%s refused: %v", a, err)
		}
	}
}

// RefusesTargets checks that check refuses each target with
// engine.ErrConfig and an error that does not show secret, the part of
// the targets that must never be echoed.
func RefusesTargets(t testing.TB, check func(target string) error, secret string, targets ...string) {
	t.Helper()
	for _, target := range targets {
		err := check(target)
		if !errors.Is(err, engine.ErrConfig) || strings.Contains(err.Error(), secret) {
			t.Errorf("%q: %v; want an ErrConfig that does not show %q", target, err, secret)
		}
	}
}

// RefusesSpecs checks that p refuses each cluster spec before anything
// starts: Up fails and leaves no node.
func RefusesSpecs(t testing.TB, p cluster.Provisioner, specs ...cluster.Spec) {
	t.Helper()
	for _, spec := range specs {
		st := &cluster.State{Name: "x", Dir: t.TempDir(), Params: map[string]string{}}
		if err := p.Up(context.Background(), spec, st); err == nil || len(st.Nodes) != 0 {
			t.Errorf("%+v: %v, nodes %v", spec, err, st.Nodes)
		}
	}
}

// NothingListening checks that connect, given host:port of a loopback port
// where nothing listens, fails with engine.ErrUnreachable, classed
// refused.
func NothingListening(t testing.TB, connect func(hostPort string) error) {
	t.Helper()
	port, err := cluster.FreePort(cluster.Loopback)
	if err != nil {
		t.Fatal(err)
	}
	err = connect(fmt.Sprintf("%s:%d", cluster.Loopback, port))
	if !errors.Is(err, engine.ErrUnreachable) || metrics.ClassOf(err) != metrics.Refused {
		t.Errorf("nothing listening: %v (class %v), want unreachable, refused", err, metrics.ClassOf(err))
	}
}
