package metrics

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// Class is the outcome class of an operation: OK or one of the error classes.
type Class uint8

// Outcome classes. Every operation that started ends in exactly one of them,
// or is still in flight when the run stops.
const (
	OK Class = iota
	Timeout
	Refused
	Rejected
	NotFound
	Integrity
	Other
	NumClasses // number of classes, not a class
)

var classNames = [NumClasses]string{"ok", "timeout", "refused", "rejected", "not_found", "integrity", "other"}

// String returns the class name used in run.json and reports.
func (c Class) String() string {
	if c < NumClasses {
		return classNames[c]
	}
	return "unknown"
}

// ErrorClasses lists the error classes (every class but OK) in report order.
func ErrorClasses() []Class {
	return []Class{Timeout, Refused, Rejected, NotFound, Integrity, Other}
}

// Classed is implemented by errors that know their class; engines and
// scenarios wrap their errors with WithClass or implement it themselves.
type Classed interface {
	ErrorClass() Class
}

type classedError struct {
	class Class
	err   error
}

func (e *classedError) Error() string     { return e.err.Error() }
func (e *classedError) Unwrap() error     { return e.err }
func (e *classedError) ErrorClass() Class { return e.class }

// WithClass wraps err so that ClassOf reports class for it.
func WithClass(class Class, err error) error {
	if err == nil {
		return nil
	}
	return &classedError{class: class, err: err}
}

// ClassOf sorts an operation's error into a class. nil is OK. An error that
// implements Classed (anywhere in its chain) decides itself; otherwise
// deadlines are timeouts, connections refused, reset or closed by the
// server before its answer (EOF, a broken pipe: a node going down) are
// refused, and the rest are other.
func ClassOf(err error) Class {
	if err == nil {
		return OK
	}
	var c Classed
	if errors.As(err, &c) {
		return c.ErrorClass()
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return Timeout
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return Timeout
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return Refused
	}
	return Other
}
