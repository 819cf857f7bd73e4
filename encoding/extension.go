package sandboxauditencoding // import "github.com/sandboxaudit/sandboxaudit/encoding"

import (
	"context"
	"fmt"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/encoding/internal/metadata"
	"github.com/sandboxaudit/sandboxaudit/internal/payloadpolicy"
	"github.com/sandboxaudit/sandboxaudit/internal/spanmap"
)

// The interfaces the kafka exporter and receiver (and other contrib
// components) type-assert an encoding extension to.
var (
	_ ptrace.Marshaler   = (*encodingExtension)(nil)
	_ plog.Marshaler     = (*encodingExtension)(nil)
	_ ptrace.Unmarshaler = (*encodingExtension)(nil)
	_ plog.Unmarshaler   = (*encodingExtension)(nil)
)

// encodingExtension is the sandboxaudit_encoding extension. Its methods are
// safe for concurrent use: exporters and receivers call them from several
// goroutines (queue consumers, partition workers).
type encodingExtension struct {
	logger    *zap.Logger
	buildVer  string
	policies  *payloadpolicy.Table
	telemetry *telemetry
	// One Mapper per extension: it holds the per-session seq counters for
	// spans that do not carry their seqs, as the exporter's does.
	mapper    *spanmap.Mapper
	eventBufs sync.Pool
}

func newEncodingExtension(cfg *Config, set extension.Settings) (*encodingExtension, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, fmt.Errorf("sandboxaudit_encoding: telemetry: %w", err)
	}
	policies, err := newPolicies(cfg)
	if err != nil {
		return nil, fmt.Errorf("sandboxaudit_encoding: %w", err)
	}
	if off := policies.RedactionOff(); len(off) > 0 {
		set.Logger.Warn("payload_policy redact is off: credentials in commands, environment, errors and output are written in clear",
			zap.Strings("ops", off))
	}
	return &encodingExtension{
		logger:    set.Logger,
		buildVer:  set.BuildInfo.Version,
		policies:  policies,
		telemetry: &telemetry{tb: tb},
		mapper:    spanmap.NewMapper(0),
	}, nil
}

// Start does nothing: the extension holds no resources.
func (*encodingExtension) Start(context.Context, component.Host) error { return nil }

// Shutdown does nothing: the extension holds no resources.
func (*encodingExtension) Shutdown(context.Context) error { return nil }

// getEvents and putEvents recycle the per-call event slices.
func (e *encodingExtension) getEvents() *[]auditevent.Event {
	if v, ok := e.eventBufs.Get().(*[]auditevent.Event); ok {
		return v
	}
	s := make([]auditevent.Event, 0, 256)
	return &s
}

func (e *encodingExtension) putEvents(s *[]auditevent.Event) {
	if cap(*s) > 1<<16 {
		return // one huge batch must not pin its slice for good
	}
	clear(*s) // drop the references to this batch's data
	*s = (*s)[:0]
	e.eventBufs.Put(s)
}
