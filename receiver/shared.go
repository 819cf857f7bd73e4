package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"

import (
	"sync"

	"go.opentelemetry.io/collector/component"
)

// sharedReceivers hands out one receiver per component ID, so that a
// sandboxaudit receiver listed in both a logs and a traces pipeline runs one
// HTTP server that feeds both. The collector's own helper for this is
// internal to its module; this is the small part of it we need. A factory
// owns one map: nothing is shared between factories (or tests).
type sharedReceivers struct {
	mu   sync.Mutex
	byID map[component.ID]*sandboxReceiver
}

func newSharedReceivers() *sharedReceivers {
	return &sharedReceivers{byID: make(map[component.ID]*sandboxReceiver)}
}

// loadOrCreate returns the receiver for id, creating it with create when
// there is none. The receiver removes itself on Shutdown so that the same
// ID can be created again (a collector reload).
func (s *sharedReceivers) loadOrCreate(id component.ID, create func(release func()) (*sandboxReceiver, error)) (*sandboxReceiver, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.byID[id]; ok {
		return r, nil
	}
	var r *sandboxReceiver
	release := func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.byID[id] == r {
			delete(s.byID, id)
		}
	}
	r, err := create(release)
	if err != nil {
		return nil, err
	}
	s.byID[id] = r
	return r, nil
}
