package audit

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// killedHistory writes the history a killed run leaves: two sessions log
// to two shards, the blocks of one reached the file and the last records
// of the other did not (versions b+3, b+5 and b+11 were handed out and
// never recorded, and so was everything after b+12), and the file ends
// in a torn block. It returns the file's path and the version base.
func killedHistory(t *testing.T, start time.Time) (string, int64) {
	t.Helper()
	b := VersionBase(start)
	var d deltas
	a1 := appendRegInv(nil, &d, kindRegWrite, 1, b+1, 100)
	a1 = appendRegOut(a1, &d, kindRegOK, 0, b+1, 200)
	d = deltas{}
	var b1 []byte
	for _, r := range []struct{ key, ver, t int64 }{
		{2, b + 2, 150}, {4, b + 4, 300}, {4, b + 6, 500}, {5, b + 7, 700},
		{6, b + 8, 900}, {9, b + 10, 1100}, {8, b + 12, 1300}, {7, b + 9, 4_999_000},
	} {
		b1 = appendRegInv(b1, &d, kindRegWrite, r.key, r.ver, r.t)
		b1 = appendRegOut(b1, &d, kindRegOK, 0, r.ver, r.t+100)
	}
	file := append([]byte(Header+"\n"), block(a1)...)
	file = append(file, block(b1)...)
	torn := block(appendRegInv(nil, &deltas{}, kindRegWrite, 1, b+3, 5_000_100))
	file = append(file, torn[:len(torn)-2]...)
	path := filepath.Join(t.TempDir(), "history.log")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, b
}

// TestCheckRegistersKilledRun: the run's process was killed, so its
// history lacks the records its sessions had not flushed. A register
// holding one of those writes, newer than every write of it the history
// acknowledged, is "not yet recorded", not lost: whether its version is
// below the greatest the file holds (another session's records reached
// the file) or above it. An older version, a version the history gave
// another register, and a later run's version are judged as before; and
// with a complete history (a run that finished) nothing changes.
func TestCheckRegistersKilledRun(t *testing.T) {
	t.Parallel()
	start := time.Now().Add(-time.Hour)
	path, b := killedHistory(t, start)
	h, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !h.Torn {
		t.Fatal("the history does not end torn")
	}
	store := fakeRegs{
		1: b + 3,                                   // unrecorded, newer than its acknowledged b+1
		2: b + 2,                                   // as logged
		4: b + 4,                                   // older than its acknowledged b+6: lost
		5: b + 13,                                  // unrecorded, after the file's last version
		6: b + 10,                                  // register 9's version: lost
		7: VersionBase(start.Add(2*time.Hour)) + 1, // a later run's
		8: b + 11,                                  // unrecorded but older than its acknowledged b+12: lost
		9: b + 10,
	}
	for _, tc := range []struct {
		incomplete                  bool
		lost, unlogged, overwritten int64
	}{{true, 3, 2, 1}, {false, 4, 0, 2}} {
		a, err := CheckRegisters(context.Background(), h, store, CheckConfig{Settle: time.Millisecond, Incomplete: tc.incomplete})
		if err != nil {
			t.Fatal(err)
		}
		if a.Lost != tc.lost || a.Unlogged != tc.unlogged || a.Overwritten != tc.overwritten || a.Resurrected != 0 {
			t.Errorf("incomplete history %v: %d lost, %d not yet recorded, %d overwritten since, %d resurrected; want %d, %d, %d, 0 (examples %+v)",
				tc.incomplete, a.Lost, a.Unlogged, a.Overwritten, a.Resurrected, tc.lost, tc.unlogged, tc.overwritten, a.Examples)
		}
		if tc.incomplete && (len(a.Examples) != 3 || a.Examples[0].Key != 4 || a.Examples[1].Key != 6 || a.Examples[2].Key != 8) {
			t.Errorf("lost examples %+v: want registers 4, 6, 8", a.Examples)
		}
	}
}
