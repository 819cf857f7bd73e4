package sandboxauditreceiver

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.yaml.in/yaml/v3"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/metadatatest"
	"github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"
	"github.com/sandboxaudit/sandboxaudit/receiver/internal/metadata"
)

// TestMetadataMatchesCode records every metric through the code the
// receiver records it with and checks the result against metadata.yaml
// both ways (name, unit, description, kind, attributes and their enums),
// plus the TelemetryBuilder field names and the status. A new metric or
// attribute value needs a line in recordings; the failures say what to add
// to metadata.yaml.
func TestMetadataMatchesCode(t *testing.T) {
	md := metadatatest.MustLoad(t, "metadata.yaml")
	set, tel := recordingSettings(t)
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
					outcomeInFlight, outcomeOverBudget, outcomeDecompressFailure, outcomeUnauthenticated, outcomeTimeout} {
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
			for _, reason := range []string{giveUpTimeout, giveUpEvicted, giveUpReplaced, giveUpShutdown, giveUpMismatched} {
				r.countGivenUp(ctx, reason, 1)
			}
		},
		func() { r.countSpansSkipped(ctx, 1) },
		func() { r.countSpansDropped(ctx, 1) },
		func() {
			for _, reason := range []string{admission.EvictedIdle, admission.EvictedNew, admission.EvictedWaiting} {
				r.connEvicted(reason, netip.MustParseAddr("127.0.0.2"))
			}
		},
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

// schemaProperty is one property of metadata.yaml's config schema.
type schemaProperty struct {
	Default    any                       `yaml:"default"`
	Embed      bool                      `yaml:"embed"`
	Properties map[string]schemaProperty `yaml:"properties"`
}

// schemaDefaults returns the defaults the schema gives, nested as in the
// configuration; an embedded property's defaults sit at its parent's level.
func schemaDefaults(props map[string]schemaProperty) map[string]any {
	out := map[string]any{}
	for key, p := range props {
		switch {
		case p.Embed:
			maps.Copy(out, p.Default.(map[string]any))
		case p.Properties != nil:
			out[key] = schemaDefaults(p.Properties)
		case p.Default != nil:
			out[key] = p.Default
		}
	}
	return out
}

// TestConfigSchemaMatchesConfig keeps metadata.yaml's config schema (which
// mdatagen would generate Config from; here Config is written by hand) in
// step with Config: the same keys, both ways, and defaults that
// createDefaultConfig already has.
func TestConfigSchemaMatchesConfig(t *testing.T) {
	raw, err := os.ReadFile("metadata.yaml")
	require.NoError(t, err)
	var doc struct {
		Config struct {
			Properties map[string]schemaProperty `yaml:"properties"`
		} `yaml:"config"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &doc))
	props := doc.Config.Properties
	require.NotEmpty(t, props)

	// Keys: the marshaled default config, less what the embedded server
	// config brings, is exactly the schema's non-embedded properties.
	conf := confmap.New()
	require.NoError(t, conf.Marshal(createDefaultConfig()))
	server := confmap.New()
	require.NoError(t, server.Marshal(createDefaultConfig().(*Config).ServerConfig))
	var inCode, inSchema []string
	for k := range conf.ToStringMap() {
		if !server.IsSet(k) {
			inCode = append(inCode, k)
		}
	}
	for k, p := range props {
		if !p.Embed {
			inSchema = append(inSchema, k)
		}
	}
	assert.ElementsMatch(t, inCode, inSchema, "top-level keys of Config (first) vs config.properties of metadata.yaml (second)")
	for k, p := range props {
		if p.Properties == nil {
			continue
		}
		var nested []string
		for nk := range conf.ToStringMap()[k].(map[string]any) {
			nested = append(nested, nk)
		}
		assert.ElementsMatch(t, nested, slices.Collect(maps.Keys(p.Properties)), "keys of %s in Config (first) vs metadata.yaml (second)", k)
	}

	// Defaults: applying the schema's defaults to the default config
	// changes nothing.
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, confmap.NewFromStringMap(schemaDefaults(props)).Unmarshal(cfg))
	assert.Equal(t, createDefaultConfig(), cfg, "metadata.yaml config defaults differ from createDefaultConfig")
}
