// Package registry is a set of named implementations (engines, scenarios,
// cluster provisioners) registered from init functions, as database/sql
// registers drivers: duplicate or empty registrations panic, names list
// sorted, and a failed lookup names what exists and the nearest name.
package registry

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/scalelab/scalelab/setting"
)

// Registry holds named values of one kind.
type Registry[T any] struct {
	kind  string // "engine", "scenario", ...
	mu    sync.RWMutex
	items map[string]T
}

// New returns an empty registry of the given kind of thing.
func New[T any](kind string) *Registry[T] {
	return &Registry[T]{kind: kind, items: map[string]T{}}
}

// Register adds v under name; it panics on an empty or duplicate name.
func (r *Registry[T]) Register(name string, v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if name == "" {
		panic(r.kind + ": Register with an empty name")
	}
	if _, dup := r.items[name]; dup {
		panic(r.kind + ": Register called twice for " + name)
	}
	r.items[name] = v
}

// Lookup returns the value registered under name. The error lists the
// registered names and the nearest one to name.
func (r *Registry[T]) Lookup(name string) (T, error) {
	r.mu.RLock()
	v, ok := r.items[name]
	r.mu.RUnlock()
	if ok {
		return v, nil
	}
	names := r.Names()
	msg := fmt.Sprintf("unknown %s %q; available: %s", r.kind, name, strings.Join(names, ", "))
	if n := setting.Nearest(name, names); n != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", n)
	}
	var zero T
	return zero, fmt.Errorf("%s", msg)
}

// Names returns the registered names, sorted.
func (r *Registry[T]) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Sorted(maps.Keys(r.items))
}
