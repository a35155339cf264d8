package experiment

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/cluster/cgroup"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/fault"
	"github.com/scalelab/scalelab/load"
	"github.com/scalelab/scalelab/setting"
)

// CheckLoad checks a load field's value alone.
func CheckLoad(key, raw string) error {
	raw = strings.TrimSpace(raw)
	switch key {
	case "model":
		if !contains(load.ModelNames(), raw) {
			return fmt.Errorf("%q: allowed: %s", raw, strings.Join(load.ModelNames(), "|"))
		}
	case "users":
		if n, err := strconv.Atoi(raw); err != nil || n < 1 || n > 1_000_000 {
			return fmt.Errorf("%q: allowed: an integer in [1, 1000000]", raw)
		}
	case "loops":
		if n, err := strconv.Atoi(raw); err != nil || n < 0 || n > 1_000_000_000 {
			return fmt.Errorf("%q: allowed: an integer in [0, 1000000000] (loops per user; 0: until the duration or ops end the run)", raw)
		}
	case "ops":
		if n, err := strconv.ParseInt(raw, 10, 64); err != nil || n < 0 {
			return fmt.Errorf("%q: allowed: an integer >= 0 (0: no limit)", raw)
		}
	case "segments":
		if n, err := strconv.Atoi(raw); err != nil || n < 1 || n > MaxSegments {
			return fmt.Errorf("%q: allowed: an integer in [1, %d] (load processes per run, merged)", raw, MaxSegments)
		}
	case "seed":
		if _, err := strconv.ParseUint(raw, 10, 64); err != nil {
			return fmt.Errorf("%q: allowed: an integer >= 0", raw)
		}
	case "duration", "warmup", "drain", "ramp_up":
		if d, err := time.ParseDuration(raw); err != nil || d < 0 {
			return fmt.Errorf("%q: allowed: a duration such as 30s or 2m", raw)
		}
	case "think":
		if _, err := load.ParseThink(raw); err != nil {
			return err
		}
	case "rate":
		if _, err := load.ParseRate(raw); err != nil {
			return err
		}
	case "arrivals":
		if raw != "constant" && raw != "poisson" {
			return fmt.Errorf("%q: allowed: constant|poisson", raw)
		}
	case "phases":
		if _, err := load.ParsePhases(raw); err != nil {
			return err
		}
	case "fault":
		if raw != "none" {
			if _, err := fault.ParseList([]string{raw}); err != nil {
				return fmt.Errorf("%w (or none; several faults: comma-separated)", err)
			}
		}
	default:
		return fmt.Errorf("unknown load field %q; allowed: %s", key, strings.Join(LoadKeys, ", "))
	}
	return nil
}

// checkCluster checks a cluster field a factor varies.
func checkCluster(key, raw string) error {
	switch key {
	case "nodes":
		if n, err := strconv.Atoi(raw); err != nil || n < 1 || n > 16 {
			return fmt.Errorf("%q: allowed: an integer in [1, 16]", raw)
		}
	case "replicas":
		if n, err := strconv.Atoi(raw); err != nil || n < 0 || n > 8 {
			return fmt.Errorf("%q: allowed: an integer in [0, 8]", raw)
		}
	case "heap":
		if _, err := setting.ParseSize(raw); err != nil {
			return fmt.Errorf("%q: allowed: a size such as 512m or 1g", raw)
		}
	case "cpus":
		if _, err := cgroup.ParseCPUs(raw); err != nil {
			return err
		}
	case "memory":
		if _, err := cgroup.ParseMemory(raw); err != nil {
			return err
		}
	case "cpuset":
		if _, err := cgroup.ParseCPUSet(raw); err != nil {
			return err
		}
	case "link":
		if _, err := cluster.ParseLinks((&ClusterSpec{Link: raw}).LinkSpecs()); err != nil {
			return fmt.Errorf("%v (several separated by ';'; none: no emulation)", err)
		}
	}
	return nil
}

// checkTier checks a tier key's value: an engine (or none) for cache.
func checkTier(key, raw string) error {
	if key != "cache" || raw == "none" {
		return nil
	}
	if _, err := engine.Lookup(raw); err != nil {
		return fmt.Errorf("%q: %v; or none (no cache)", raw, err)
	}
	return nil
}

// keyKind classifies a key a factor or level sets.
func keyKind(key string) string {
	switch {
	case key == "engine":
		return "engine"
	case contains(ClusterKeys, key):
		return "cluster"
	case contains(LoadKeys, key):
		return "load"
	case contains(TierKeys, key):
		return "tier"
	case appField(key) != "":
		return "app"
	case strings.Contains(key, "."):
		return "setting"
	}
	return ""
}

// knownKeys lists the non-setting keys, for did-you-mean.
func knownKeys() []string {
	keys := append(append(append([]string{"engine"}, ClusterKeys...), LoadKeys...), TierKeys...)
	for _, f := range AppKeys {
		keys = append(keys, "app."+f)
	}
	return keys
}

// checkAssign checks one key=value a factor level sets.
func (d *decoder) checkAssign(n *yaml.Node, field, key, raw string) bool {
	var err error
	switch keyKind(key) {
	case "load":
		err = CheckLoad(key, raw)
	case "cluster":
		err = checkCluster(key, raw)
	case "tier":
		err = checkTier(key, raw)
	case "app":
		err = checkApp(appField(key), raw)
	case "engine", "setting":
	default:
		msg := fmt.Sprintf("%q is not something a level can set; allowed: engine, %s, %s, %s, app.FIELD (an app tier field), or a setting engine.key / scenario.key / cache.engine.key", key, strings.Join(ClusterKeys, ", "), strings.Join(LoadKeys, ", "), strings.Join(TierKeys, ", "))
		if near := setting.Nearest(key, knownKeys()); near != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		}
		d.errorf(n, field, "%s", msg)
		return false
	}
	if err != nil {
		d.errorf(n, field, "%v", err)
		return false
	}
	return true
}
