package runner

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/setting"
)

// ConnectExitCode is the exit code of an error from connecting to a store
// or opening what runs on it: bad usage when the configuration was
// refused (engine.ErrConfig, a setting's value or a file it names), else
// the run could not finish.
func ConnectExitCode(err error) int {
	if errors.Is(err, engine.ErrConfig) || errors.Is(err, setting.ErrBadValue) {
		return results.ExitUsage
	}
	return results.ExitUnfinished
}

// CheckDefaultTarget refuses a --target URL on a command line that names
// no engine: the default engine's store is a file, and a server's URL
// taken for a file name would run on a new SQLite file instead of the
// server.
func CheckDefaultTarget(target string) error {
	scheme, _, ok := strings.Cut(target, "://")
	if s := strings.ToLower(scheme); !ok || s == "file" { // SQLite takes file: URIs
		return nil
	}
	name := "--engine ENGINE (one of: " + strings.Join(engine.Names(), ", ") + ")"
	switch s := strings.ToLower(scheme); {
	case s == DefaultEngine:
		return results.UsageErr("--target %s: the %s engine takes the file's path, without %s://", redactTarget(target), DefaultEngine, scheme)
	case s == "postgresql":
		name = "--engine postgres"
	case s == "http" || s == "https":
		name = "--engine opensearch or --engine elasticsearch"
	case slices.Contains(engine.Names(), s):
		name = "--engine " + s
	}
	return results.UsageErr("--target %s is a server's URL, but no --engine was given and the default engine, %s, takes a file; name the engine: %s",
		redactTarget(target), DefaultEngine, name)
}

// CheckServer refuses a run on an engine whose store is a server that it
// is not told of: neither a target nor a cluster (one the run names or
// one started for it), nor the environment variable the engine reads
// instead (engine.CheckServerNamed, the one rule of run, serve and
// experiment validate). The error is exit 2.
func CheckServer(engineName, target string, cluster bool) error {
	if err := engine.CheckServerNamed(engineName, target, cluster); err != nil {
		return results.WithCode(results.ExitUsage, fmt.Errorf("engine %s: %w", engineName, err))
	}
	return nil
}
