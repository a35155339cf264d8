package memcached

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/scalelab/scalelab/engine"
)

// Stats sends "stats ARG" (ARG "" for the general statistics, "settings"
// for the server's settings) to the server at addr over a connection of
// its own and returns the STAT lines as name, value; gomemcache has no
// such command. It gives up after timeout or when ctx ends.
func Stats(ctx context.Context, addr string, timeout time.Duration, arg string) (map[string]string, error) {
	d := net.Dialer{Timeout: timeout}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, wrap(err)
	}
	defer nc.Close()
	deadline := time.Now().Add(timeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	if err := nc.SetDeadline(deadline); err != nil {
		return nil, wrap(err)
	}
	cmd := "stats\r\n"
	if arg != "" {
		cmd = "stats " + arg + "\r\n"
	}
	if _, err := nc.Write([]byte(cmd)); err != nil {
		return nil, wrap(err)
	}
	out := map[string]string{}
	r := bufio.NewReader(nc)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, wrap(err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "END" {
			return out, nil
		}
		f := strings.SplitN(line, " ", 3)
		if len(f) != 3 || f[0] != "STAT" {
			return nil, wrap(fmt.Errorf("memcached: unexpected reply to %q: %q", strings.TrimSpace(cmd), line))
		}
		out[f[1]] = f[2]
	}
}

var _ engine.StatsSampler = (*Conn)(nil)

// sampled are the statistics SampleStats reports: counters (commands,
// hits and misses, evictions, connections, bytes) and gauges (items,
// bytes stored, connections open).
var sampled = []string{
	"cmd_get", "cmd_set", "cmd_touch", "get_hits", "get_misses", "delete_hits", "delete_misses", "cas_hits", "cas_misses", "cas_badval",
	"evictions", "total_connections", "rejected_connections", "listen_disabled_num", "bytes_read", "bytes_written",
	"curr_items", "bytes", "limit_maxbytes", "curr_connections", "rusage_user", "rusage_system",
}

// SampleStats reports the servers' statistics as "memcached.NAME"
// ("memcached.get_hits", "memcached.curr_items", ...), summed over the
// servers.
func (c *Conn) SampleStats(ctx context.Context) (map[string]float64, error) {
	out := make(map[string]float64, len(sampled))
	for _, addr := range c.addrs {
		stats, err := Stats(ctx, addr, c.opts.Timeout, "")
		if err != nil {
			return nil, fmt.Errorf("sample memcached stats of %s: %w", addr, err)
		}
		for _, k := range sampled {
			if v, err := strconv.ParseFloat(stats[k], 64); err == nil {
				out["memcached."+k] += v
			}
		}
	}
	return out, nil
}
