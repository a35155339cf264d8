package redis

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"

	goredis "github.com/redis/go-redis/v9"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/metrics"
)

var _ engine.Classifier = (*Conn)(nil)

// ErrExists is returned (classed metrics.Other) by a collection's Insert
// when the key is stored already.
var ErrExists = metrics.WithClass(metrics.Other, errors.New("redis: key exists"))

// Classify gives Redis errors their class (Classify).
func (c *Conn) Classify(ctx context.Context, err error) error { return Classify(ctx, err) }

// wrap marks err as the engine's (nil stays nil).
func wrap(err error) error { return engine.WrapOp(Name, err) }

// Classify gives err its outcome class: a reply or a free connection that
// did not come in time is metrics.Timeout; a refused, reset or closed
// connection, a server still loading its data set and a failed
// authentication are metrics.Refused; a server out of memory, at its
// client limit, busy with a script, read-only or without its master is
// metrics.Rejected; other replies of the server are metrics.Other; an
// error after ctx ended is joined with ctx.Err(). An error that is not
// the engine's, or has a class already, is returned as it is; nil stays
// nil.
func Classify(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var reply goredis.Error
	if !engine.IsOpError(err, Name) && !errors.As(err, &reply) {
		return err
	}
	return engine.ClassifyWith(ctx, err, classOf)
}

// classOf finds the class of an error of the engine's.
func classOf(err error) metrics.Class {
	var ne net.Error
	switch {
	case errors.Is(err, goredis.ErrPoolTimeout), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return metrics.Timeout
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, goredis.ErrClosed), errors.Is(err, net.ErrClosed),
		goredis.IsLoadingError(err), goredis.IsAuthError(err):
		return metrics.Refused
	case goredis.IsOOMError(err), goredis.IsMaxClientsError(err), goredis.IsReadOnlyError(err),
		goredis.IsMasterDownError(err), goredis.IsTryAgainError(err), goredis.IsClusterDownError(err),
		goredis.HasErrorPrefix(err, "BUSY"), goredis.IsNoReplicasError(err):
		return metrics.Rejected
	}
	return metrics.Other
}
