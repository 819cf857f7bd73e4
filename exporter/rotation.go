package sandboxauditexporter // import "github.com/sandboxaudit/sandboxaudit/exporter"

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

// rotation builds the file sink's rotation from file.rotation; nil when the
// section is absent. Each rotation, removal and failure is logged and
// counted; a retention that stays stopped is counted each round and
// logged again at most hourly.
func (e *auditExporter) rotation(fc *FileConfig) *filesink.Rotation {
	rc := fc.Rotation.Get()
	if rc == nil {
		return nil
	}
	t := e.telemetry
	log := e.logger
	return &filesink.Rotation{
		MaxBytes:   int64(rc.MaxMegabytes) << 20,
		Interval:   rc.Interval,
		MaxBackups: rc.MaxBackups,
		MaxAge:     time.Duration(rc.MaxDays) * 24 * time.Hour,
		Compress:   rc.Compression == compressionZstd,
		OnRotate: func(path, segment string) {
			log.Info("Audit file rotated", zap.String("path", path), zap.String("segment", segment))
			t.tb.SandboxauditExporterSegmentsRotated.Add(context.Background(), 1)
		},
		OnRemoved: func(path string, seg filesink.Segment, reason string) {
			log.Info("Retention removed a closed segment", zap.String("path", path),
				zap.String("segment", seg.Path), zap.String("reason", reason))
			t.tb.SandboxauditExporterSegmentsRemoved.Add(context.Background(), 1,
				metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", reason))))
		},
		OnIgnored: func(path string, seg filesink.Segment) {
			log.Warn("A file named as a segment is dated ahead of the clock and of the log's own segments; rotation and retention pass over it",
				zap.String("path", path), zap.String("file", seg.Path))
		},
		OnError: func(path string, err error) {
			log.Error("Rotation, compression or retention step failed; no segment was lost and the step is tried again",
				zap.String("path", path), zap.Error(err))
			t.tb.SandboxauditExporterSegmentErrors.Add(context.Background(), 1)
		},
		// Logged once above, a segment that still cannot be removed is
		// counted each round, and summed up in the log at most hourly.
		OnStillStopped: func(string) {
			t.tb.SandboxauditExporterSegmentErrors.Add(context.Background(), 1)
		},
		OnRetentionStuck: func(s filesink.RetentionStuck) {
			log.Error("Retention is still stopped at closed segments it cannot remove; they and the newer segments due for removal stay, and the disk may fill (path: the one stopped longest)",
				zap.Int("paths", s.Paths), zap.Int("segments_due", s.Due), zap.Int("stopped_rounds", s.Rounds),
				zap.String("path", s.Longest.Path), zap.String("segment", s.Longest.Segment),
				zap.Time("stopped_since", s.Longest.Since), zap.Error(s.Longest.Err))
		},
		OnRetentionResumed: func(s filesink.StoppedRetention) {
			log.Info("Retention runs again: the segment it stopped at is removed, gone or no longer due",
				zap.String("path", s.Path), zap.Int("stopped_rounds", s.Rounds), zap.Time("stopped_since", s.Since))
		},
	}
}
