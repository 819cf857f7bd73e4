// Package sharedcomponent gives the pipelines of one configured component
// one instance of it. The collector passes every signal of a component the
// same *Config, so the receiver keys its HTTP server and the exporter its
// sinks by that pointer. The collector's own helper for this is internal to
// its module and shuts down on the first Shutdown; this one counts users,
// because the exporter's sinks must stay open until the last signal's queue
// has drained.
package sharedcomponent // import "github.com/sandboxaudit/sandboxaudit/internal/sharedcomponent"

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
)

// Map holds the shared instances, one per key. A factory owns one Map:
// nothing is shared between factories (or tests).
type Map[K comparable, V component.Component] struct {
	mu      sync.Mutex
	entries map[K]*entry[V]
}

// NewMap returns an empty Map.
func NewMap[K comparable, V component.Component]() *Map[K, V] {
	return &Map[K, V]{entries: map[K]*entry[V]{}}
}

// entry is one shared instance and its users.
type entry[V component.Component] struct {
	comp      V
	startOnce sync.Once
	startErr  error
	users     int // guarded by Map.mu
}

// Acquire returns a new user's handle on the instance for key, creating the
// instance with create when there is none.
func (m *Map[K, V]) Acquire(key K, create func() (V, error)) (*Handle[K, V], error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[key]
	if !ok {
		comp, err := create()
		if err != nil {
			return nil, err
		}
		e = &entry[V]{comp: comp}
		m.entries[key] = e
	}
	e.users++
	return &Handle[K, V]{m: m, key: key, e: e}, nil
}

// Handle is one user's use of a shared instance; it is the component the
// factory returns to the collector.
type Handle[K comparable, V component.Component] struct {
	m   *Map[K, V]
	key K
	e   *entry[V]

	stopOnce sync.Once
	stopErr  error
}

var _ component.Component = (*Handle[int, component.Component])(nil)

// Unwrap returns the shared instance.
func (h *Handle[K, V]) Unwrap() V { return h.e.comp }

// Start starts the instance once; every user gets the same error.
func (h *Handle[K, V]) Start(ctx context.Context, host component.Host) error {
	h.e.startOnce.Do(func() { h.e.startErr = h.e.comp.Start(ctx, host) })
	return h.e.startErr
}

// Shutdown releases this user. The last one shuts the instance down (the
// instance must allow that whether or not Start ran) and forgets it, so a
// new pipeline with the same key starts afresh.
func (h *Handle[K, V]) Shutdown(ctx context.Context) error {
	h.stopOnce.Do(func() {
		if h.release() {
			h.stopErr = h.e.comp.Shutdown(ctx)
		}
	})
	return h.stopErr
}

// release drops this user and says whether it was the last.
func (h *Handle[K, V]) release() bool {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	h.e.users--
	if h.e.users > 0 {
		return false
	}
	if h.m.entries[h.key] == h.e {
		delete(h.m.entries, h.key)
	}
	return true
}
