package e2e

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKafkaExporterEncodingNotInServiceExtensions: kafka-edge.yaml with
// the sandboxaudit_encoding extension configured but left out of
// service::extensions stops the collector at start, exit 1, naming the
// exporter's encoding key and what is missing.
func TestKafkaExporterEncodingNotInServiceExtensions(t *testing.T) {
	requireE2E(t)
	k := newKafkaTier(t)
	cfg := k.edgeConfig(t)
	const listed = "service:\n  extensions: [sandboxaudit_encoding]\n"
	require.Contains(t, cfg, listed)
	cfg = strings.Replace(cfg, listed, "service:\n", 1)
	require.NoError(t, os.MkdirAll(k.edgeDir, 0o700))
	path := writeConfig(t, k.edgeDir, cfg)
	code, out := runCollector(t, k.edgeDir, "--config", path)
	assert.Equal(t, 1, code, "%s", out)
	assert.Regexp(t, `exporters::kafka::(logs|traces)::encoding: extension "sandboxaudit_encoding" is not in service::extensions`, out)
	assert.NotContains(t, out, "audit lines to", "the collector never said it was ready")
}

// TestKafkaExporterRefusesOTLPOnTheAuditTopic: kafka-edge.yaml with the
// traces encoding left out (otlp_proto) would write OTLP protobuf to
// sandbox-audit, which a central collector refuses and skips message by
// message; the edge stops at start, exit 1, naming the key.
func TestKafkaExporterRefusesOTLPOnTheAuditTopic(t *testing.T) {
	requireE2E(t)
	k := newKafkaTier(t)
	cfg := k.edgeConfig(t)
	const traces = "    traces:\n      topic: sandbox-audit\n      encoding: sandboxaudit_encoding\n"
	require.Contains(t, cfg, traces)
	cfg = strings.Replace(cfg, traces, "    traces:\n      topic: sandbox-audit\n", 1)
	require.NoError(t, os.MkdirAll(k.edgeDir, 0o700))
	code, out := runCollector(t, k.edgeDir, "--config", writeConfig(t, k.edgeDir, cfg))
	assert.Equal(t, 1, code, "%s", out)
	assert.Contains(t, out, `exporters::kafka::traces::encoding: "otlp_proto" writes to topic "sandbox-audit", where logs writes sandboxaudit_encoding lines`)
}
