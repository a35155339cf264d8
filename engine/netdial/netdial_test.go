package netdial

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// closeSeenBy dials a listener with dial, closes the connection at once
// and returns what the server's next read saw.
func closeSeenBy(t *testing.T, dial func(ctx context.Context, network, address string) (net.Conn, error)) error {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
		close(accepted)
	}()
	c, err := dial(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, ok := <-accepted
	if !ok {
		t.Fatal("no connection accepted")
	}
	defer s.Close()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	_, err = s.Read(make([]byte, 1))
	return err
}

// TestAbortiveClose: the server sees a reset where an ordinary close
// shows as the end of the stream.
func TestAbortiveClose(t *testing.T) {
	if err := closeSeenBy(t, Dialer{Timeout: time.Second}.DialContext); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("abortive close: server read %v, want a connection reset", err)
	}
	var plain net.Dialer
	if err := closeSeenBy(t, plain.DialContext); !errors.Is(err, io.EOF) {
		t.Errorf("ordinary close: server read %v, want EOF", err)
	}
}
