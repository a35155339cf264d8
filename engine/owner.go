package engine

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/scalelab/scalelab/setting"
)

// ErrNotOwned means an object of the name a run would create (a table, an
// index, a collection, keys under a prefix) exists and scalelab did not
// create it: the run refuses to drop, truncate, recreate or write into it.
// A run that meets it exits 2 before anything is written.
var ErrNotOwned = errors.New("not created by scalelab")

// ReplaceExistingKey is the key, after "<engine>.", of the setting that
// lets a run replace an object of its name that scalelab did not create.
const ReplaceExistingKey = "replace_existing"

// MarkPrefix starts every mark scalelab leaves on what it creates (a
// table's comment, an index's _meta, a registry row): what reads marks
// tests for it.
const MarkPrefix = "created by scalelab"

// NotOwnedError is the refusal of an object scalelab did not create. It
// names the object and the two ways on: another namespace, or replacing
// it explicitly.
type NotOwnedError struct {
	Engine    string   // the engine's name: postgres
	Kind      string   // table, index, collection, keyspace, keys
	Name      string   // the object as the store names it, qualified: scalelab.usertable
	Namespace string   // the setting that chooses the namespace (postgres.schema); "" when the engine has none
	Also      []string // the other objects of the run's names that scalelab did not create, named as Name is
}

// Error says what exists, that a run leaves it alone, and how to go on.
func (e *NotOwnedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s %s exists and was not created by scalelab", e.Engine, e.Kind, e.Name)
	if len(e.Also) > 0 {
		fmt.Fprintf(&b, " (nor %s)", strings.Join(e.Also, ", "))
	}
	b.WriteString("; a run never drops, truncates or writes into what it did not create. ")
	if e.Namespace != "" {
		fmt.Fprintf(&b, "Run in another namespace (--set %s=NAME), or replace it: --set %s.%s=true (its data is lost)", e.Namespace, e.Engine, ReplaceExistingKey)
	} else {
		fmt.Fprintf(&b, "Use another target, or replace it: --set %s.%s=true (its data is lost)", e.Engine, ReplaceExistingKey)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrNotOwned) and errors.Is(err, ErrConfig) true:
// the refusal is a configuration error (exit 2).
func (e *NotOwnedError) Is(target error) bool { return target == ErrNotOwned || target == ErrConfig }

// Mark is the text scalelab leaves on an object it creates: the scenario
// and the run that created it. It starts with MarkPrefix.
func Mark(scenario, run string) string {
	if scenario == "" {
		scenario = "unknown"
	}
	s := fmt.Sprintf("%s (scenario %s", MarkPrefix, scenario)
	if run != "" {
		s += ", run " + run
	}
	return s + ", " + time.Now().UTC().Format(time.RFC3339) + ")"
}

// IsMark reports whether text (a comment, a _meta value, a registry row)
// is a mark scalelab left.
func IsMark(text string) bool { return strings.HasPrefix(strings.TrimSpace(text), MarkPrefix) }

// ReplaceExistingSpec declares <engine>.replace_existing for an engine's
// Settings.
func ReplaceExistingSpec(engineName string) setting.Spec {
	return setting.Spec{Key: engineName + "." + ReplaceExistingKey, Kind: setting.Bool, Default: "false",
		Description: "drop and replace a table, index, collection or keys of the name a scenario uses that scalelab did not create (its data is lost); without it such a run is refused, exit 2"}
}

// ObjectNames maps objects to the names a NotOwnedError's Also lists.
func ObjectNames[T any](objs []T, name func(T) string) []string {
	if len(objs) == 0 {
		return nil
	}
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = name(o)
	}
	return out
}
