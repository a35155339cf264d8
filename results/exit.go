package results

import (
	"context"
	"errors"
	"fmt"

	"github.com/scalelab/scalelab/setting"
)

// Exit codes: the process exit code and run.json's exit_code.
const (
	ExitOK          = 0  // the run finished and every check passed
	ExitCheckFailed = 1  // an SLO, threshold or correctness check failed
	ExitUsage       = 2  // bad usage or configuration
	ExitInterrupted = 3  // interrupted (Ctrl-C, SIGTERM)
	ExitUnfinished  = 4  // the run could not finish (engine unreachable, ...)
	ExitInternal    = 70 // a bug in scalelab
)

// ExitError carries an exit code with an error.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// WithCode attaches an exit code to err (nil stays nil).
func WithCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &ExitError{Code: code, Err: err}
}

// UsageErr is a bad-usage error (exit code 2).
func UsageErr(format string, a ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, a...)}
}

// ErrReported marks an error whose message has already been shown (a
// failed check printed in the summary): only its exit code matters.
var ErrReported = errors.New("reported")

// ExitCode maps an error to an exit code. Errors that carry no code are
// internal errors: every failure a user can cause has a code.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	if errors.Is(err, setting.ErrBadValue) || errors.Is(err, setting.ErrUnknownKey) {
		return ExitUsage
	}
	if errors.Is(err, context.Canceled) {
		return ExitInterrupted
	}
	return ExitInternal
}
