package experiment

import (
	"strconv"
	"strings"
	"time"

	"github.com/scalelab/scalelab/runner"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/segment"
)

// RunOptions are the runner options of one run of a combination; repeat
// counts from 1 and shifts the seed (every combination of one repeat gets
// the same seed: common random numbers).
func (s *Spec) RunOptions(c *Combination, repeat int, out string, names ClusterNames) *runner.Options {
	o := &runner.Options{Scenario: s.Scenario.Text, Engine: c.Engine, Target: s.Target.Text, Cluster: names.Run,
		Sets: append([]string(nil), c.Sets...), Out: out, Drain: time.Second, Seed: 1, Given: map[string]bool{}}
	if names.Run != "" {
		o.Target = ""
	}
	for _, a := range c.Load {
		v := strings.TrimSpace(a.Value)
		o.Given[a.Key] = true
		switch a.Key {
		case "model":
			o.Model = v
		case "users":
			o.Users, _ = strconv.Atoi(v)
		case "think":
			o.Think = v
		case "duration":
			o.Duration, _ = time.ParseDuration(v)
		case "warmup":
			o.Warmup, _ = time.ParseDuration(v)
		case "drain":
			o.Drain, _ = time.ParseDuration(v)
		case "ops":
			o.Ops, _ = strconv.ParseInt(v, 10, 64)
		case "rate":
			o.Rate = v
		case "arrivals":
			o.Arrivals = v
		case "phases":
			o.Phases = v
		case "ramp_up":
			o.RampUp, _ = time.ParseDuration(v)
			o.Given["ramp-up"] = true
		case "loops":
			o.Loops, _ = strconv.Atoi(v)
		case "seed":
			o.Seed, _ = strconv.ParseUint(v, 10, 64)
		case "segments":
			n, _ := strconv.Atoi(v)
			o.Segment = segment.Segment{Count: n}
		case "fault":
			if v != "none" && v != "" {
				o.Faults = append(o.Faults, v)
			}
		}
	}
	cache := cacheTier(c.Tiers)
	if names.Cache != "" {
		cache.Cluster = names.Cache
	}
	if cache.Engine != "" || cache.Cluster != "" {
		cache.Role = scenario.RoleCache
		o.Tiers = append(o.Tiers, cache)
	}
	if repeat > 1 {
		o.Seed += uint64(repeat - 1)
	}
	o.Args = commandLine(o)
	return o
}

// commandLine is the `scalelab run` command equivalent to the options,
// recorded in run.json.
func commandLine(o *runner.Options) []string {
	args := []string{"scalelab", "run", o.Scenario, "--engine", o.Engine}
	for _, t := range o.Tiers {
		if t.Engine != "" {
			args = append(args, "--"+t.Role, t.Engine)
		}
		if t.Cluster != "" {
			args = append(args, "--"+t.Role+"-cluster", t.Cluster)
		}
		if t.Target != "" {
			args = append(args, "--"+t.Role+"-target", t.Target)
		}
	}
	if o.Cluster != "" {
		args = append(args, "--cluster", o.Cluster)
	}
	if o.Target != "" {
		args = append(args, "--target", o.Target)
	}
	if o.Model != "" {
		args = append(args, "--model", o.Model)
	}
	if o.Given["users"] {
		args = append(args, "--users", strconv.Itoa(o.Users))
	}
	for _, f := range []struct{ name, v string }{{"think", o.Think}, {"rate", o.Rate}, {"arrivals", o.Arrivals}, {"phases", o.Phases}} {
		if f.v != "" {
			args = append(args, "--"+f.name, f.v)
		}
	}
	if o.Given["ramp-up"] {
		args = append(args, "--ramp-up", o.RampUp.String())
	}
	if o.Given["loops"] {
		args = append(args, "--loops", strconv.Itoa(o.Loops))
	}
	if o.Duration > 0 {
		args = append(args, "--duration", o.Duration.String())
	}
	if o.Warmup > 0 {
		args = append(args, "--warmup", o.Warmup.String())
	}
	if o.Ops > 0 {
		args = append(args, "--ops", strconv.FormatInt(o.Ops, 10))
	}
	args = append(args, "--seed", strconv.FormatUint(o.Seed, 10))
	for _, st := range o.Sets {
		args = append(args, "--set", st)
	}
	for _, f := range o.Faults {
		args = append(args, "--fault", f)
	}
	return append(args, "--out", o.Out)
}
