package memcached

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/metrics"
)

var _ engine.Classifier = (*Conn)(nil)

// ErrExists is returned (classed metrics.Other) by a collection's Insert
// when the key is stored already (memcached's add was NOT_STORED).
var ErrExists = metrics.WithClass(metrics.Other, errors.New("memcached: key exists"))

// errContended is returned (classed metrics.Rejected) by an update that
// lost every compare-and-swap to concurrent writes of the record.
var errContended = errors.New("memcached: the record changed under every compare-and-swap")

// wrap marks err as the engine's (nil stays nil).
func wrap(err error) error { return engine.WrapOp(Name, err) }

// Classify gives memcached errors their class (Classify).
func (c *Conn) Classify(ctx context.Context, err error) error { return Classify(ctx, err) }

// Classify gives err its outcome class: a connection or an operation that
// timed out is metrics.Timeout; a refused, reset or closed connection, or
// no server to send to, is metrics.Refused; a SERVER_ERROR (out of
// memory, an item too large) and an update that lost every
// compare-and-swap are metrics.Rejected; other errors of the engine are
// metrics.Other; an error after ctx ended is joined with ctx.Err(). An
// error that is not the engine's, or has a class already, is returned as
// it is; nil stays nil.
func Classify(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if !engine.IsOpError(err, Name) {
		return err
	}
	return engine.ClassifyWith(ctx, err, classOf)
}

// classOf finds the class of an error of the engine's.
func classOf(err error) metrics.Class {
	var ne net.Error
	var cte *memcache.ConnectTimeoutError
	switch {
	case errors.As(err, &cte), errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return metrics.Timeout
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed), errors.Is(err, memcache.ErrNoServers):
		return metrics.Refused
	case errors.Is(err, memcache.ErrServerError), errors.Is(err, errContended), strings.Contains(err.Error(), "SERVER_ERROR"):
		return metrics.Rejected
	}
	return metrics.Other
}
