// Package bindcheck tells, before anything is created, whether scalelab
// can listen on an address, and when the port is taken, which process
// holds it (read from /proc on Linux: the listening socket's inode in
// /proc/net/tcp and tcp6, then the process whose descriptors hold it).
package bindcheck

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrInUse is wrapped by the error of Check when another socket holds the
// address's port.
var ErrInUse = errors.New("address already in use")

// Check listens on the TCP address addr and closes the listener at once.
// A port that is taken is an error wrapping ErrInUse that names the port
// and the process holding it (its PID and command) when /proc tells; any
// other failure is returned as the listen's error.
func Check(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln.Close()
	}
	if !errors.Is(err, syscall.EADDRINUSE) {
		return err
	}
	_, portStr, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portStr)
	if h, ok := HolderOf(port); ok {
		return fmt.Errorf("%w: port %d is held by %s", ErrInUse, port, h)
	}
	return fmt.Errorf("%w: port %d is in use", ErrInUse, port)
}

// Holder is a process listening on a port.
type Holder struct {
	PID     int
	Command string // its command name (/proc/PID/comm), never its arguments
}

// String says "pid 123 (postgres)".
func (h Holder) String() string {
	if h.Command == "" {
		return fmt.Sprintf("pid %d", h.PID)
	}
	return fmt.Sprintf("pid %d (%s)", h.PID, h.Command)
}

// HolderOf returns the process with a TCP socket listening on port, and
// false when none can be found (not Linux, or the process is another
// user's and its descriptors cannot be read).
func HolderOf(port int) (Holder, bool) {
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		for _, ino := range listeningInodes(f, port) {
			inodes[ino] = true
		}
	}
	if len(inodes) == 0 {
		return Holder{}, false
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return Holder{}, false
	}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		if holds(pid, inodes) {
			comm, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "comm"))
			return Holder{PID: pid, Command: strings.TrimSpace(string(comm))}, true
		}
	}
	return Holder{}, false
}

// tcpListen is the state of a listening socket in /proc/net/tcp.
const tcpListen = "0A"

// listeningInodes returns the inodes of the sockets listening on port
// that the /proc/net/tcp-format file lists.
func listeningInodes(file string, port int) []string {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != tcpListen {
			continue
		}
		_, hexPort, ok := strings.Cut(fields[1], ":")
		if p, err := strconv.ParseUint(hexPort, 16, 16); !ok || err != nil || int(p) != port {
			continue
		}
		if fields[9] != "0" {
			out = append(out, fields[9])
		}
	}
	return out
}

// holds reports whether process pid has a descriptor on one of the
// socket inodes.
func holds(pid int, inodes map[string]bool) bool {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(dir, fd.Name()))
		if err != nil {
			continue
		}
		if ino, ok := strings.CutPrefix(link, "socket:["); ok && inodes[strings.TrimSuffix(ino, "]")] {
			return true
		}
	}
	return false
}
