package sandboxauditexporter

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"

	"github.com/sandboxaudit/sandboxaudit/exporter/internal/metadata"
	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/httpsink"
	"github.com/sandboxaudit/sandboxaudit/internal/redact"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/metadatatest"
)

// TestMetadataMatchesCode records every metric through the code the
// exporter records it with and checks the result against metadata.yaml
// both ways (name, unit, description, kind, attributes and their enums),
// plus the TelemetryBuilder field names and the status. A new metric or
// attribute value needs a line in recordings; the failures say what to add
// to metadata.yaml.
func TestMetadataMatchesCode(t *testing.T) {
	md := metadatatest.MustLoad(t, "metadata.yaml")
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	tb, err := metadata.NewTelemetryBuilder(tel.NewTelemetrySettings())
	require.NoError(t, err)
	tl := newTelemetry(tb, component.MustNewID("sandboxaudit"))
	http := httpObserver{t: tl}
	seal := sealObserver{t: tl}
	ctx := context.Background()

	recordings := []func(){
		func() { tl.written(ctx, sinkFile, 1); tl.written(ctx, sinkHTTP, 1) },
		func() {
			for _, r := range []string{reasonNotSandboxSpan, reasonInvalidSpan, reasonNotAuditEvent, reasonInvalidEvent} {
				tl.skipped(ctx, r, 1)
			}
		},
		func() {
			for _, r := range []string{reasonFileError, reasonFileSymlink, httpsink.ReasonHTTP4xx, httpsink.ReasonEndpointRefused,
				httpsink.ReasonSpoolFull, httpsink.ReasonSpoolError, httpsink.ReasonNoSpool, httpsink.ReasonShutdown} {
				tl.dropped(ctx, r, 1)
			}
		},
		func() { tl.seqSessionsEvicted(ctx, 1) },
		func() { http.Spooled(ctx, 1) },
		func() { http.Replayed(ctx, 1) },
		func() { http.SpoolSize(1) },
		func() { http.Quarantined(ctx, 1) },
		func() { http.AdoptedNotKept(ctx, 1) },
		func() { seal.LinesSealed(ctx, 1) },
		func() { seal.CheckpointWritten(ctx) },
		func() { seal.SealLag(ctx, 1) },
		func() {
			wo := witnessObserver{t: tl}
			wo.Cosigned(ctx, "w.example/1")
			for _, r := range []string{"conflict", "unknown_log", "bad_signature", "inconsistent", "refused", "bad_cosignature", "dated_ahead", "unreachable"} {
				wo.Failed(ctx, "w.example/1", r)
			}
		},
		func() {
			e := &auditExporter{telemetry: tl, logger: zap.NewNop()}
			r := e.rotation(&FileConfig{Rotation: configoptional.Some(RotationConfig{MaxMegabytes: 1})})
			r.OnRotate("a", "b")
			r.OnError("a", errors.New("x"))
			r.OnStillStopped("a")
			r.OnRetentionStuck(filesink.RetentionStuck{Paths: 1, Due: 1, Rounds: 1, Longest: filesink.StoppedRetention{Path: "a", Err: errors.New("x")}})
			r.OnRetentionResumed(filesink.StoppedRetention{Path: "a"})
			for _, reason := range []string{filesink.RemovedMaxBackups, filesink.RemovedMaxAge} {
				r.OnRemoved("a", filesink.Segment{}, reason)
			}
		},
		func() {
			var every redact.Counts
			for k := range every {
				every[k] = 1
			}
			tl.redacted(ctx, &every)
		},
	}
	for _, record := range recordings {
		record()
	}
	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.Reader.Collect(ctx, &rm))
	metadatatest.CheckTelemetry(t, md, rm, metadata.ScopeName)
	metadatatest.CheckFields(t, md, tb)

	f := NewFactory()
	metadatatest.CheckStatus(t, md, metadata.Type.String(), metadatatest.Stability(map[string]component.StabilityLevel{
		"traces": f.TracesStability(),
		"logs":   f.LogsStability(),
	}))
}

// TestDocumentationMatchesMetadata keeps documentation.md, written by hand
// in mdatagen's shape, in step with metadata.yaml.
func TestDocumentationMatchesMetadata(t *testing.T) {
	md := metadatatest.MustLoad(t, "metadata.yaml")
	metadatatest.CheckDocumentation(t, md, "documentation.md")
}
