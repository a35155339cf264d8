package apptier

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/scalelab/scalelab/app"
	"github.com/scalelab/scalelab/cluster"
)

// ErrNoHAProxy is wrapped by the error of an app cluster on a machine
// without HAProxy.
var ErrNoHAProxy = errors.New("HAProxy is not installed")

// HAProxyEnv names a haproxy binary to use instead of the one on PATH.
const HAProxyEnv = "SCALELAB_HAPROXY"

// HAProxyPath finds the haproxy binary: $SCALELAB_HAPROXY, else on PATH,
// else in /usr/sbin where Debian's package puts it (not on every user's
// PATH).
func HAProxyPath() (string, error) {
	return cluster.FindBinary(ErrNoHAProxy, HAProxyEnv, "haproxy", "the app tier's balancer is Debian's haproxy package: apt-get install -y haproxy (or set $"+HAProxyEnv+")", "/usr/sbin")
}

var versionRe = regexp.MustCompile(`version (\d+\.\d+[.\d]*)`)

// haproxyVersion asks the binary for its version ("2.6.12").
func haproxyVersion(ctx context.Context, bin string) (string, error) {
	out, err := exec.CommandContext(ctx, bin, "-v").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("haproxy -v: %w: %s", err, out)
	}
	m := versionRe.FindSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("haproxy -v: no version in %q", firstLine(string(out)))
	}
	return string(m[1]), nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// balancerConfig is what the HAProxy configuration says.
type balancerConfig struct {
	Listen    string   // the frontend's host:port
	Servers   []string // name=host:port of each app server, in order
	Algorithm string   // roundrobin, leastconn
	Check     time.Duration
	Socket    string        // the stats socket's path
	Timeout   time.Duration // the app servers' request timeout
}

// haproxyConfig renders the balancer's configuration: HTTP mode, the
// frontend on loopback, the app servers health-checked at app.HealthPath
// (down after 2 failed checks, up after 2 good ones), a connection that
// fails is retried on another server (option redispatch; requests that
// reached a server are never replayed), a request whose client has gone is
// aborted on the server too (option abortonclose: the backlog of a run
// that ended is not worked off during the next one), and an admin stats
// socket that only root can open.
func haproxyConfig(c balancerConfig) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# written by scalelab cluster up app; scalelab cluster down removes it\n")
	fmt.Fprintf(&b, "global\n  maxconn 4000\n  stats socket %s mode 600 level admin\n  stats timeout 10s\n\n", c.Socket)
	server := c.Timeout + 10*time.Second
	fmt.Fprintf(&b, "defaults\n  mode http\n  option http-keep-alive\n  option redispatch\n  option abortonclose\n  retries 2\n")
	fmt.Fprintf(&b, "  timeout connect 2s\n  timeout client 2m\n  timeout server %dms\n  timeout http-keep-alive 2m\n  timeout queue %dms\n\n", server.Milliseconds(), server.Milliseconds())
	fmt.Fprintf(&b, "frontend web\n  bind %s\n  default_backend app\n\n", c.Listen)
	fmt.Fprintf(&b, "backend app\n  balance %s\n  option httpchk GET %s\n  http-check expect status 200\n", c.Algorithm, app.HealthPath)
	fmt.Fprintf(&b, "  default-server check inter %dms fall 2 rise 2\n", c.Check.Milliseconds())
	for _, s := range c.Servers {
		name, addr, _ := strings.Cut(s, "=")
		fmt.Fprintf(&b, "  server %s %s\n", name, addr)
	}
	return b.String()
}

// ServerStats is one row of HAProxy's `show stat`: a server, or the
// frontend or backend (Name FRONTEND, BACKEND).
type ServerStats struct {
	Proxy  string // web (the frontend) or app (the backend)
	Name   string // app1, ..., FRONTEND, BACKEND
	Status string // UP, DOWN, "UP 1/2" (going down), MAINT, OPEN, ...
	// Requests is the HTTP responses the row gave, of every class (a
	// server's requests; the frontend's requests answered).
	Requests int64
	// Responses by class: 1xx ... 5xx and other.
	Responses map[string]int64
	Sessions  int64 // stot: connections over time
	// ConnErrors (econ) are connections to the server that failed;
	// RespErrors (eresp) responses cut or refused; Retries (wretr) and
	// Redispatches (wredis) the attempts moved.
	ConnErrors, RespErrors, Retries, Redispatches int64
	Downs                                         int64 // chkdown: UP to DOWN transitions
	DowntimeS                                     int64 // seconds spent DOWN
	LastChgS                                      int64 // seconds since the last status change
}

// Up reports whether the balancer sends requests to the server now.
func (s ServerStats) Up() bool { return strings.HasPrefix(s.Status, "UP") }

// Stats reads `show stat` from the balancer's stats socket.
func Stats(ctx context.Context, socket string) ([]ServerStats, error) {
	d := net.Dialer{Timeout: 2 * time.Second}
	c, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return nil, fmt.Errorf("haproxy stats: %w", err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := io.WriteString(c, "show stat\n"); err != nil {
		return nil, fmt.Errorf("haproxy stats: %w", err)
	}
	rows, err := parseStats(bufio.NewReader(c))
	if err != nil {
		return nil, fmt.Errorf("haproxy stats: %w", err)
	}
	return rows, nil
}

// parseStats reads the CSV of `show stat` by its header's column names.
func parseStats(r io.Reader) ([]ServerStats, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("no header: %w", err)
	}
	if len(head) == 0 || !strings.HasPrefix(head[0], "# ") {
		return nil, fmt.Errorf("not a stats header: %q", strings.Join(head, ","))
	}
	head[0] = strings.TrimPrefix(head[0], "# ")
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	for _, need := range []string{"pxname", "svname", "status", "stot"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("no %s column in the stats header", need)
		}
	}
	var out []ServerStats
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(rec) < len(head) || (len(rec) == 1 && rec[0] == "") {
			continue
		}
		num := func(name string) int64 {
			i, ok := col[name]
			if !ok {
				return 0
			}
			v, _ := strconv.ParseInt(rec[i], 10, 64)
			return v
		}
		s := ServerStats{Proxy: rec[col["pxname"]], Name: rec[col["svname"]], Status: rec[col["status"]], Sessions: num("stot"),
			ConnErrors: num("econ"), RespErrors: num("eresp"), Retries: num("wretr"), Redispatches: num("wredis"),
			Downs: num("chkdown"), DowntimeS: num("downtime"), LastChgS: num("lastchg"), Responses: map[string]int64{}}
		for _, class := range []string{"1xx", "2xx", "3xx", "4xx", "5xx", "other"} {
			if v := num("hrsp_" + class); v > 0 {
				s.Responses[class] = v
				s.Requests += v
			}
		}
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Proxy < out[j].Proxy })
	return out, nil
}
