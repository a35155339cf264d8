// Package netdial dials the TCP connections of engine clients so that a
// request abandoned by the load generator can never reach the server
// later.
//
// A socket closed the ordinary way keeps retransmitting the data the peer
// has not acknowledged, after its process has exited too. When a network
// fault cut a node off, a request sent into the cut is then delivered
// seconds after the link heals, with TCP's backed-off retransmission: a
// write of one run could land in the data the next run has just loaded.
// Connections from this package close abortively (SO_LINGER 0): close
// sends a reset and drops what was not delivered, so a request the client
// gave up on is either already at the server or never arrives.
package netdial

import (
	"context"
	"fmt"
	"net"
	"time"
)

// Dialer dials TCP connections that close abortively. Its zero value has
// no connect timeout and the system's keep-alive.
type Dialer struct {
	// Timeout bounds the connect (0: none besides the context's).
	Timeout time.Duration
	// KeepAlive is the TCP keep-alive period (0: the system's default).
	KeepAlive time.Duration
}

// DialContext connects to address on network and sets SO_LINGER 0 on a
// TCP connection.
func (d Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	nd := net.Dialer{Timeout: d.Timeout, KeepAlive: d.KeepAlive}
	c, err := nd.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		if err := tc.SetLinger(0); err != nil {
			c.Close()
			return nil, fmt.Errorf("dial %s: set SO_LINGER: %w", address, err)
		}
	}
	return c, nil
}
