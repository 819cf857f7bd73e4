package sandboxauditreceiver

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/sandboxaudit/sandboxaudit/internal/metadatatest"
	"github.com/sandboxaudit/sandboxaudit/receiver/internal/metadata"
)

// TestMetadataMatchesCode records every metric through the code the
// receiver records it with and checks the result against metadata.yaml
// both ways (name, unit, description, kind, attributes and their enums),
// plus the TelemetryBuilder field names and the status. A new metric or
// attribute value needs a line in recordings; the failures say what to add
// to metadata.yaml.
func TestMetadataMatchesCode(t *testing.T) {
	md, err := metadatatest.Load("metadata.yaml")
	require.NoError(t, err)
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := receivertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	cfg := createDefaultConfig().(*Config)
	r, err := newSandboxReceiver(cfg, set)
	require.NoError(t, err)
	r.pairs = newPairer(cfg)
	ctx := context.Background()

	recordings := []func(){
		func() {
			for _, endpoint := range []string{endpointTraces, endpointEvents, endpointOther} {
				for _, outcome := range []string{outcomeAccepted, outcomeMalformed, outcomeMethodNotAllowed,
					outcomeTooLarge, outcomeUnsupportedType, outcomeRefusedRetryable, outcomeRefusedPermanent,
					outcomeInFlight, outcomeOverBudget, outcomeDecompressFailure, outcomeUnauthenticated} {
					r.recordRequest(ctx, endpoint, textReply(http.StatusBadRequest, outcome, ""))
				}
			}
		},
		func() {
			r.countDelivery(ctx, 1, nil)
			r.countDelivery(ctx, 1, errors.New("busy"))
			r.countDelivery(ctx, 1, consumererror.NewPermanent(errors.New("broken")))
		},
		func() {
			for _, reason := range []string{reasonInvalid, reasonInvalidSpan, reasonRetryable, reasonPermanent, reasonInFlight} {
				r.countRefused(ctx, reason, 1)
			}
		},
		func() { r.countDuplicates(ctx, 1) },
		func() { require.NoError(t, r.registerPendingGauge()) },
		func() {
			for _, reason := range []string{giveUpTimeout, giveUpEvicted, giveUpReplaced, giveUpShutdown} {
				r.countGivenUp(ctx, reason, 1)
			}
		},
		func() { r.countSpansSkipped(ctx, 1) },
		func() { r.countSpansDropped(ctx, 1) },
	}
	for _, record := range recordings {
		record()
	}
	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.Reader.Collect(ctx, &rm))
	r.tel.Shutdown()
	metadatatest.CheckTelemetry(t, md, rm, metadata.ScopeName)
	metadatatest.CheckFields(t, md, r.tel)

	f := NewFactory()
	metadatatest.CheckStatus(t, md, metadata.Type.String(), map[string]string{
		"traces": strings.ToLower(f.TracesStability().String()),
		"logs":   strings.ToLower(f.LogsStability().String()),
	})
}
