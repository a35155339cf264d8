package cluster

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/scalelab/scalelab/wait"
)

// Start launches a node process detached from scalelab (its own session,
// so Ctrl-C on scalelab does not reach it and it outlives scalelab), with
// stdout and stderr appended to logFile. extraEnv is added to the
// environment. It returns the PID.
func Start(cmd []string, dir, logFile string, extraEnv []string) (int, error) {
	if len(cmd) == 0 {
		return 0, errors.New("start: empty command")
	}
	lf, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, fmt.Errorf("start %s: log file: %w", filepath.Base(cmd[0]), err)
	}
	defer lf.Close()
	c := exec.Command(cmd[0], cmd[1:]...)
	c.Dir = dir
	c.Stdout, c.Stderr = lf, lf
	c.Env = append(os.Environ(), extraEnv...)
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		return 0, fmt.Errorf("start %s: %w", filepath.Base(cmd[0]), err)
	}
	pid := c.Process.Pid
	// Reap the child if it exits while this scalelab still runs, so that it
	// does not linger as a zombie (which would look alive to Alive).
	go func() { _ = c.Wait() }()
	return pid, nil
}

// Alive reports whether pid is a running (not zombie) process.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses: "pid (comm) S ...".
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}

// Stop ends pid and its process group: SIGTERM, then SIGKILL after grace.
// It returns once the process is gone.
func Stop(pid int, grace time.Duration) error { return stopWith(pid, syscall.SIGTERM, grace) }

// StopNode ends a node with its proper stop signal (StopSignal; TERM by
// default), then SIGKILL after grace.
func StopNode(n Node, grace time.Duration) error {
	sig := syscall.SIGTERM
	switch n.StopSignal {
	case "INT":
		sig = syscall.SIGINT
	case "QUIT":
		sig = syscall.SIGQUIT
	}
	return stopWith(n.PID, sig, grace)
}

func stopWith(pid int, first syscall.Signal, grace time.Duration) error {
	if !Alive(pid) {
		return nil
	}
	signal := func(sig syscall.Signal) {
		if sig == syscall.SIGKILL || sig == syscall.SIGTERM {
			_ = syscall.Kill(-pid, sig) // the group Start created
		}
		_ = syscall.Kill(pid, sig)
	}
	signal(first)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if !Alive(pid) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	signal(syscall.SIGKILL)
	for i := 0; i < 100; i++ {
		if !Alive(pid) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("process %d survived SIGKILL", pid)
}

// StopAll stops every node of st (in reverse order), TERM then KILL after
// grace each, and returns the first error.
func StopAll(st *State, grace time.Duration) error {
	var first error
	for i := len(st.Nodes) - 1; i >= 0; i-- {
		if err := StopNode(st.Nodes[i], grace); err != nil && first == nil {
			first = fmt.Errorf("stop %s: %w", st.Nodes[i].Name, err)
		}
	}
	stopLinks(st)
	if first == nil {
		first = removeCgroups(st)
	}
	if first == nil {
		first = removeNet(st)
	}
	return first
}

// FreePort returns a TCP port free on host (a loopback address) right now.
func FreePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("find a free port on %s: %w", host, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Listening reports whether something accepts TCP connections at addr.
func Listening(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// DefaultUpTimeout bounds a cluster's waits when the caller gives no
// deadline (cluster up's --timeout default).
const DefaultUpTimeout = 10 * time.Minute

// WaitFor polls ready every interval until it returns true, ctx ends or a
// node dies (dead returns true: an error wrapping ErrNodeExited), and says
// which. It is bounded by ctx's deadline (`cluster up --timeout`),
// announced after a few seconds on the output of wait.WithOutput, and at
// its deadline fails with a *wait.TimeoutError.
func WaitFor(ctx context.Context, what string, interval time.Duration, ready func() bool, dead func() bool) error {
	return waitFor(ctx, what, interval, func() (bool, string) { return ready(), "" }, dead)
}

// timeoutHint ends the error of a cluster wait that timed out; a failed
// start adds the last lines of the nodes' logs (Launch), as their
// directory is removed.
const timeoutHint = "raise --timeout on a slow machine"

// ErrNodeExited means a node process of a cluster exited while the
// cluster was waited for.
var ErrNodeExited = errors.New("a node process exited")

func waitFor(ctx context.Context, what string, interval time.Duration, check func() (bool, string), dead func() bool) error {
	f := wait.For{What: what, Every: interval, Setting: "cluster up --timeout, or an experiment cluster's timeout"}
	if _, ok := ctx.Deadline(); !ok {
		f.Bound = DefaultUpTimeout // a caller without a deadline still waits a bounded time
	}
	err := f.Poll(ctx, func(context.Context) (bool, string, error) {
		ok, state := check()
		if ok {
			return true, "", nil
		}
		if dead != nil && dead() {
			return false, state, ErrNodeExited
		}
		return false, state, nil
	})
	var te *wait.TimeoutError
	if errors.As(err, &te) {
		te.Hint = timeoutHint
	}
	return err
}

// NewSecret generates a random password, writes it to path with mode 0600
// and returns it.
func NewSecret(path string) (string, error) {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate password: %w", err)
	}
	pw := base64.RawURLEncoding.EncodeToString(b)
	if err := os.WriteFile(path, []byte(pw+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write secret: %w", err)
	}
	return pw, nil
}

// ReadSecret reads a password file, refusing one that others can read.
func ReadSecret(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("read secret: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("secret file %s is readable by others (mode %o); chmod 600 it", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read secret: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// WaitNodes polls ready every interval until it returns true or ctx ends;
// when a node process of st exits meanwhile it fails at once, naming that
// node (Launch adds the last lines of its log).
func WaitNodes(ctx context.Context, st *State, what string, interval time.Duration, ready func() bool) error {
	return WaitNodesState(ctx, st, what, interval, func() (bool, string) { return ready(), "" })
}

// WaitNodesState is WaitNodes with a check that also says how far the
// cluster is ("2 of 3 nodes up"), shown in the wait's messages and error.
func WaitNodesState(ctx context.Context, st *State, what string, interval time.Duration, check func() (bool, string)) error {
	dead := ""
	isDead := func() bool {
		for _, n := range st.Nodes {
			if !Alive(n.PID) {
				dead = n.Name
				return true
			}
		}
		return false
	}
	err := waitFor(ctx, what, interval, check, isDead)
	if err != nil && dead != "" {
		return fmt.Errorf("%w (%s)", err, dead)
	}
	return err
}
