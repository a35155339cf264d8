//go:build !linux

package load

import (
	"errors"
	"time"
)

// alarm is the Linux timerfd alarm (alarm_linux.go); elsewhere the
// dispatchers sleep on Go timers.
type alarm struct{}

func newAlarm() (*alarm, error)    { return nil, errors.New("no timerfd on this system") }
func (a *alarm) set(time.Duration) {}
func (a *alarm) disarm()           {}
func (a *alarm) wait() bool        { return false }
func (a *alarm) close()            {}
