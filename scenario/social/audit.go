package social

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/scalelab/scalelab/scenario"
)

// The acknowledged-write audit (docs/audit.md): every user is a register
// (its user number). An update stores its version at the end of the
// user's status (" #v" and the version in base 36), an insert stores it
// the same way in the new user's status, and a delete is logged with a
// version of its own; after the run the audit reads every user written
// back and checks the version it holds, or its absence, against the
// history.

var (
	_ scenario.Audited        = (*Session)(nil)
	_ scenario.RegisterReader = (*Workload)(nil)
)

// versionMark separates a status from the version an audited write stored.
const versionMark = " #v"

// SetWriteLog makes the session log its inserts, updates and deletes
// (only through a log that takes register writes).
func (s *Session) SetWriteLog(l scenario.WriteLog) {
	if rl, ok := l.(scenario.RegisterLog); ok {
		s.rlog = rl
	}
}

// stamped returns status with version v appended.
func stamped(status string, v int64) string {
	return status + versionMark + strconv.FormatInt(v, 36)
}

// versionIn returns the version a status carries, or 0 for a status
// written without one (a loaded user).
func versionIn(status string) int64 {
	i := strings.LastIndex(status, versionMark)
	if i < 0 {
		return 0
	}
	v, err := strconv.ParseInt(status[i+len(versionMark):], 36, 64)
	if err != nil || v <= 0 {
		return 0
	}
	return v
}

// ReadVersions reports the version each user holds (-1 for a user the
// store does not hold), reading the users back through the collection's
// read-back (the primary, no injected faults).
func (w *Workload) ReadVersions(ctx context.Context, keys []int64, versions []int64) error {
	if w.null {
		return fmt.Errorf("social: reading users back: %w", errors.ErrUnsupported)
	}
	ks := make([]string, len(keys))
	for i, n := range keys {
		ks[i] = Key(uint64(n))
	}
	users, err := w.st.readBack(ctx, ks)
	if err != nil {
		return fmt.Errorf("read back users: %w", err)
	}
	for i, k := range ks {
		if u, ok := users[k]; ok {
			versions[i] = versionIn(u.Status)
		} else {
			versions[i] = -1
		}
	}
	return nil
}
