package sandboxauditexporter // import "github.com/sandboxaudit/sandboxaudit/exporter"

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
)

// sharedExporters hands the traces and logs exporters of one configured
// component (the collector passes both the same *Config) the same
// auditExporter. It counts users instead of shutting down on the first
// Shutdown: exporterhelper drains a signal's queue before calling our
// shutdown, so the sinks must stay open until the last signal has drained.
type sharedExporters struct {
	mu sync.Mutex
	m  map[*Config]*sharedExporter
}

func newSharedExporters() *sharedExporters {
	return &sharedExporters{m: map[*Config]*sharedExporter{}}
}

// sharedExporter is one auditExporter and its users.
type sharedExporter struct {
	exp *auditExporter

	startOnce sync.Once
	startErr  error

	owner *sharedExporters
	key   *Config
	users int // guarded by owner.mu
}

// handle is one signal's use of a sharedExporter.
type handle struct {
	s        *sharedExporter
	stopOnce sync.Once
	stopErr  error
}

// acquire returns a handle on the exporter for cfg, creating it on first use.
func (s *sharedExporters) acquire(cfg *Config, set exporter.Settings) (*handle, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	se, ok := s.m[cfg]
	if !ok {
		exp, err := newAuditExporter(cfg, set)
		if err != nil {
			return nil, err
		}
		se = &sharedExporter{exp: exp, owner: s, key: cfg}
		s.m[cfg] = se
	}
	se.users++
	return &handle{s: se}, nil
}

// Start starts the shared exporter once; every user gets the same error.
func (h *handle) Start(ctx context.Context, host component.Host) error {
	se := h.s
	se.startOnce.Do(func() {
		se.startErr = se.exp.start(ctx, host)
	})
	return se.startErr
}

// Shutdown releases this user; the last one shuts the exporter down (it is
// safe to call whether or not Start ran) and forgets it, so a new pipeline
// with the same config starts afresh.
func (h *handle) Shutdown(ctx context.Context) error {
	h.stopOnce.Do(func() {
		se := h.s
		se.owner.mu.Lock()
		se.users--
		last := se.users == 0
		if last {
			delete(se.owner.m, se.key)
		}
		se.owner.mu.Unlock()
		if last {
			h.stopErr = se.exp.shutdown(ctx)
		}
	})
	return h.stopErr
}
