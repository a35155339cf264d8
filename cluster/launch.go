package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// Launch starts a cluster as `scalelab cluster up` does: spec's options
// checked against the provisioner's declarations (nothing starts when one
// is wrong), the state directory and the state saved first (so that `cluster down` finds
// whatever a crash leaves), the nodes' cgroups, their own network and
// emulated links when spec.Netns or links ask for them, the provisioner's
// Up within timeout, the links applied, and the state saved with how long
// it took to come up. On error, whatever started is stopped and the
// directory removed; the error ends with the last lines of the log of
// each node that exited (of every node when the start timed out), read
// first. A start cut short by the timeout fails with an *UpTimeoutError.
func Launch(ctx context.Context, prov Provisioner, spec Spec, st *State, links *Links, timeout time.Duration) error {
	if _, err := Resolve(prov, spec); err != nil {
		return err
	}
	if err := st.PrepareLimits(spec.Limits); err != nil {
		return err
	}
	if err := os.MkdirAll(st.Dir, 0o700); err != nil {
		return fmt.Errorf("cluster %s: %w", st.Name, err)
	}
	fail := func(err error) error {
		logs := failedLogs(st, err)
		_ = StopAll(st, 10*time.Second)
		_ = os.RemoveAll(st.Dir)
		if logs == "" {
			return err
		}
		return fmt.Errorf("%w%s", err, logs)
	}
	if err := st.Save(); err != nil {
		return fail(err)
	}
	if spec.Netns || links != nil {
		if err := st.PrepareNet(prov); err != nil {
			return fail(err)
		}
		if err := st.PrepareLinks(links); err != nil {
			return fail(err)
		}
		if err := st.Save(); err != nil {
			return fail(err)
		}
	}
	upCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	err := prov.Up(upCtx, spec, st)
	if err == nil {
		err = st.ApplyLinks()
	}
	if serr := st.Save(); serr != nil && err == nil {
		err = serr
	}
	if err != nil {
		err = fail(fmt.Errorf("%w (stopped what had started and removed the cluster's directory)", err))
		if ctx.Err() == nil && errors.Is(upCtx.Err(), context.DeadlineExceeded) {
			// the provisioner's error is what the deadline broke (a
			// killed initdb, a wait cut short): say first that time ran
			// out (outermost, so that a caller can name its setting)
			err = &UpTimeoutError{Timeout: timeout, Err: err}
		}
		return err
	}
	st.Params["up_seconds"] = fmt.Sprintf("%.1f", time.Since(start).Seconds())
	return st.Save()
}

// UpTimeoutError is Launch's error when the cluster did not come up
// within its timeout: Err is what the deadline cut short. Launch returns
// it unwrapped, so that a caller can set Setting before wrapping it.
type UpTimeoutError struct {
	Timeout time.Duration
	// Setting names the timeout as the user gave it ("--timeout"); ""
	// words it generically.
	Setting string
	Err     error
}

func (e *UpTimeoutError) Error() string {
	if e.Setting != "" {
		return fmt.Sprintf("the cluster did not come up within %s %s: %v", e.Setting, e.Timeout, e.Err)
	}
	return fmt.Sprintf("the cluster did not come up within its timeout of %s: %v", e.Timeout, e.Err)
}

func (e *UpTimeoutError) Unwrap() error { return e.Err }

// Teardown stops every node of st: through the provisioner's Down when it
// has one (replicas before the primary), then each node left with TERM,
// grace and KILL, and removes the cluster's cgroups, network and links. It
// leaves the state directory to the caller.
func Teardown(ctx context.Context, st *State, grace time.Duration) error {
	var errs []error
	if prov, err := ProvisionerOf(st); err == nil {
		if d, ok := prov.(Downer); ok {
			errs = append(errs, d.Down(ctx, st))
		}
	}
	errs = append(errs, StopAll(st, grace))
	return errors.Join(errs...)
}
