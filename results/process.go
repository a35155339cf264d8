package results

import (
	"syscall"
	"time"
)

// Process reports scalelab's own resource use during the measured run: the
// figures that show whether the generator, not the store, was the limit.
type Process struct {
	CPUUserS      float64 `json:"cpu_user_s"`
	CPUSysS       float64 `json:"cpu_sys_s"`
	CPUPerOpUs    float64 `json:"cpu_per_op_us"` // (user + sys) / operations
	MaxRSSBytes   int64   `json:"max_rss_bytes"`
	WallS         float64 `json:"wall_s"`
	CPUUtilPerCPU float64 `json:"cpu_utilisation"` // (user + sys) / wall / CPUs
}

// Usage is a snapshot of this process's CPU time.
type Usage struct {
	user, sys time.Duration
	at        time.Time
}

// IsZero reports whether u was never taken.
func (u Usage) IsZero() bool { return u.at.IsZero() }

// TakeUsage reads this process's CPU time so far.
func TakeUsage() Usage {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return Usage{user: time.Duration(ru.Utime.Nano()), sys: time.Duration(ru.Stime.Nano()), at: time.Now()}
}

// ProcessBetween reports the CPU used between two snapshots for ops
// operations on cpus CPUs, with the peak resident memory so far.
func ProcessBetween(u, now Usage, ops int64, cpus int) *Process {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	p := &Process{CPUUserS: (now.user - u.user).Seconds(), CPUSysS: (now.sys - u.sys).Seconds(),
		MaxRSSBytes: ru.Maxrss * 1024, WallS: now.at.Sub(u.at).Seconds()}
	if ops > 0 {
		p.CPUPerOpUs = (p.CPUUserS + p.CPUSysS) / float64(ops) * 1e6
	}
	if p.WallS > 0 && cpus > 0 {
		p.CPUUtilPerCPU = (p.CPUUserS + p.CPUSysS) / p.WallS / float64(cpus)
	}
	return p
}
