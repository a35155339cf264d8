package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// What a failed start shows of each node's log.
const (
	// FailedLogLines is how many of a log's last non-blank lines a failed
	// start shows.
	FailedLogLines = 10
	tailBytes      = 64 << 10 // how much of a log's end is read
	tailWidth      = 400      // longer lines are cut
)

// LogTail returns the last n lines of the log file at path that are not
// blank, each without trailing space and cut to a few hundred characters.
// It reads only the file's end.
func LogTail(path string, n int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read log: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read log: %w", err)
	}
	off := max(0, fi.Size()-tailBytes)
	b, err := io.ReadAll(io.NewSectionReader(f, off, fi.Size()-off))
	if err != nil {
		return nil, fmt.Errorf("read log %s: %w", path, err)
	}
	if off > 0 {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:] // the first line read is likely cut
		}
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimRight(l, " \t\r")
		if strings.TrimSpace(l) == "" {
			continue
		}
		if r := []rune(l); len(r) > tailWidth {
			l = string(r[:tailWidth]) + " …"
		}
		lines = append(lines, l)
	}
	return lines[max(0, len(lines)-n):], nil
}

// failedLogs is what a failed start of st shows of its nodes' logs, read
// before the nodes stop and their directory goes: the last lines of the
// log of each node whose process exited or, when none did and err is a
// timeout, of every node. The cluster's password, should a log hold it,
// is masked. It is "" when no node concerns err.
func failedLogs(st *State, err error) string {
	var nodes []Node
	for _, n := range st.Nodes {
		if !Alive(n.PID) {
			nodes = append(nodes, n)
		}
	}
	state := "exited"
	if len(nodes) == 0 && errors.Is(err, context.DeadlineExceeded) {
		nodes, state = st.Nodes, "running"
	}
	if len(nodes) == 0 {
		return ""
	}
	pw, _ := st.Password()
	var b strings.Builder
	for _, n := range nodes {
		lines, err := LogTail(n.LogFile, FailedLogLines)
		switch {
		case err != nil:
			fmt.Fprintf(&b, "\n%s (%s): no log: %v", n.Name, state, err)
			continue
		case len(lines) == 0:
			fmt.Fprintf(&b, "\n%s (%s): its log is empty", n.Name, state)
			continue
		}
		fmt.Fprintf(&b, "\n%s (%s), the end of its log:", n.Name, state)
		for _, l := range lines {
			if pw != "" {
				l = strings.ReplaceAll(l, pw, "[password]")
			}
			b.WriteString("\n  " + l)
		}
	}
	return b.String()
}
