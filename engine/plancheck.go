package engine

import (
	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/setting"
)

// PlanChecker is an optional capability of an Engine: it checks its
// resolved settings against each other and against the run's local
// cluster (nil with --target) before anything is created, so that a
// setting naming what the cluster lacks (a node) is a usage error (exit 2)
// with no results directory. Open applies the same checks.
type PlanChecker interface {
	CheckPlan(set *setting.Set, cl *cluster.State) error
}
