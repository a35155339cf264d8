package load

import (
	"testing"
	"time"
)

// TestAlarm: an alarm rings no sooner than set, at once when set to 0, a
// later set replaces an earlier one, and a wait ends when it is closed.
func TestAlarm(t *testing.T) {
	a, err := newAlarm()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	a.set(20 * time.Millisecond)
	if !a.wait() {
		t.Fatal("wait failed")
	}
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Errorf("rang after %v, set for 20ms", d)
	}
	a.set(time.Hour)
	a.set(0) // replaces the hour
	start = time.Now()
	if !a.wait() || time.Since(start) > 5*time.Second {
		t.Errorf("set(0) did not ring at once")
	}
	a.disarm()
	done := make(chan bool)
	go func() { done <- a.wait() }()
	select {
	case <-done:
		t.Fatal("a disarmed alarm rang")
	case <-time.After(50 * time.Millisecond):
	}
	a.close()
	select {
	case ok := <-done:
		if ok {
			t.Error("wait on a closed alarm reported a ring")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("close did not end the wait")
	}
}
