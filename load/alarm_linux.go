package load

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// alarm wakes a dispatcher at its next due time through the network
// poller: a timerfd read as a pollable file. A garbage-collection worker
// that runs on an otherwise idle processor gives the processor up as soon
// as the poller has a ready file, but not for an expired Go timer, which
// waits until the worker is preempted (up to 10 ms and more with a large
// heap to mark): with a million sessions that is what made wake-ups late.
type alarm struct {
	f  *os.File
	fd int
}

// newAlarm returns an alarm, or an error where the system has no timerfd.
func newAlarm() (*alarm, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("timerfd: %w", err)
	}
	f := os.NewFile(uintptr(fd), "timerfd")
	if f == nil {
		unix.Close(fd)
		return nil, fmt.Errorf("timerfd: no file")
	}
	return &alarm{f: f, fd: fd}, nil
}

// set arms the alarm to ring after d (at once for d <= 0); a later set
// replaces it.
func (a *alarm) set(d time.Duration) {
	d = max(d, time.Nanosecond)
	_ = unix.TimerfdSettime(a.fd, 0, &unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}, nil)
}

// disarm stops the alarm until the next set.
func (a *alarm) disarm() {
	_ = unix.TimerfdSettime(a.fd, 0, &unix.ItimerSpec{}, nil)
}

// wait blocks until the alarm rings; false once the alarm is closed.
func (a *alarm) wait() bool {
	var buf [8]byte
	_, err := a.f.Read(buf[:])
	return err == nil
}

// close releases the timerfd; a wait in progress returns false.
func (a *alarm) close() { a.f.Close() }
