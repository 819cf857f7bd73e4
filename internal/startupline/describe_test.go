package startupline

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
)

func conf(t *testing.T, yaml string) *confmap.Conf {
	t.Helper()
	ret, err := confmap.NewRetrievedFromYAML([]byte(yaml))
	require.NoError(t, err)
	c, err := ret.AsConf()
	require.NoError(t, err)
	return c
}

func TestDescribeNamesFileIntakesAndMetrics(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	got := Describe(conf(t, `
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:4317
      http:
        endpoint: 127.0.0.1:4318
  sandboxaudit:
    endpoint: 127.0.0.1:8088
exporters:
  sandboxaudit:
    file:
      path: ./audit/events.jsonl
service:
  telemetry:
    metrics:
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: 8888
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [sandboxaudit]
    logs:
      receivers: [sandboxaudit, otlp]
      exporters: [sandboxaudit]
`))
	assert.Equal(t, "sandboxaudit: audit lines to "+filepath.Join(wd, "audit", "events.jsonl")+
		"; intake OTLP/gRPC 127.0.0.1:4317, OTLP/HTTP http://127.0.0.1:4318, events http://127.0.0.1:8088/v1/sandbox/events"+
		"; self-metrics http://127.0.0.1:8888/metrics", got)
}

// TestDescribeEscapes: a path holding what the configuration check lets
// through (a bidirectional override, a C1 control such as CSI) is shown
// escaped, as the CLI shows a file's name.
func TestDescribeEscapes(t *testing.T) {
	got := Describe(conf(t, `
exporters:
  sandboxaudit:
    file:
      path: "/srv/a\u202eb\u009b31m/events.jsonl"
service:
  pipelines:
    logs:
      receivers: [sandboxaudit]
      exporters: [sandboxaudit]
`))
	assert.Contains(t, got, `audit lines to /srv/a\u202eb\u009b31m/events.jsonl;`)
}

// TestDescribeAppliesDefaultsAndSkipsUnused: unset endpoints are the
// components' defaults, a component no pipeline lists is left out, an HTTP
// sink's credentials are not shown.
func TestDescribeAppliesDefaultsAndSkipsUnused(t *testing.T) {
	got := Describe(conf(t, `
receivers:
  otlp:
    protocols:
      grpc:
  otlp/unused:
    protocols:
      http:
        endpoint: 127.0.0.1:9999
  sandboxaudit: {}
  sandboxaudit/tls:
    endpoint: 0.0.0.0:8443
    events_path: /events
    tls:
      cert_file: server.crt
      key_file: server.key
exporters:
  sandboxaudit:
    http:
      endpoint: https://user:secret@audit.example/v1/events?token=secret
  debug: {}
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    logs:
      receivers: [sandboxaudit, sandboxaudit/tls, otlp]
      exporters: [sandboxaudit, debug]
`))
	assert.Equal(t, "sandboxaudit: audit lines to https://audit.example/v1/events"+
		"; intake OTLP/gRPC localhost:4317, events http://localhost:8088/v1/sandbox/events, events (sandboxaudit/tls) https://0.0.0.0:8443/events"+
		"; self-metrics off", got)
	assert.NotContains(t, got, "secret")
}

func TestDescribeDefaultTelemetry(t *testing.T) {
	got := Describe(conf(t, `
receivers:
  sandboxaudit: {}
exporters:
  sandboxaudit:
    file:
      path: /var/log/audit/{session_id}.jsonl
service:
  pipelines:
    logs:
      receivers: [sandboxaudit]
      exporters: [sandboxaudit]
`))
	assert.Equal(t, "sandboxaudit: audit lines to /var/log/audit/{session_id}.jsonl; intake events http://localhost:8088/v1/sandbox/events; self-metrics http://localhost:8888/metrics", got)
}

// TestDescribeNamesKafkaTopics: a Kafka edge's line says which topic its
// audit lines go to, and a central collector's names the topics it
// consumes as an intake; only the sections of the signals the pipelines
// use count, and only an exporter that writes audit lines
// (sandboxaudit_encoding).
func TestDescribeNamesKafkaTopics(t *testing.T) {
	edge := Describe(conf(t, `
extensions:
  sandboxaudit_encoding:
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:4318
exporters:
  kafka:
    brokers: ["10.0.0.1:9092", "10.0.0.2:9092"]
    traces: {topic: sandbox-audit, encoding: sandboxaudit_encoding}
    logs: {topic: sandbox-audit, encoding: sandboxaudit_encoding}
  kafka/otlp:
    logs: {topic: raw-logs}
service:
  telemetry: {metrics: {level: none}}
  pipelines:
    traces: {receivers: [otlp], exporters: [kafka]}
    logs: {receivers: [otlp], exporters: [kafka, kafka/otlp]}
`))
	assert.Equal(t, "sandboxaudit: audit lines to kafka topic sandbox-audit at 10.0.0.1:9092,10.0.0.2:9092"+
		"; intake OTLP/HTTP http://127.0.0.1:4318; self-metrics off", edge)

	central := Describe(conf(t, `
receivers:
  kafka:
    brokers: [127.0.0.1:9092]
    logs: {topics: [sandbox-audit, other], encoding: sandboxaudit_encoding}
    group_id: sandboxaudit-central
exporters:
  sandboxaudit:
    file: {path: /srv/audit/events.jsonl}
service:
  telemetry: {metrics: {level: none}}
  pipelines:
    logs: {receivers: [kafka], exporters: [sandboxaudit]}
`))
	assert.Equal(t, "sandboxaudit: audit lines to /srv/audit/events.jsonl"+
		"; intake kafka topics other,sandbox-audit at 127.0.0.1:9092 (group sandboxaudit-central); self-metrics off", central)
}

// TestDescribeNamesWhereATopicIsChosenPerBatch: with topic_from_attribute
// or topic_from_metadata_key the kafka exporter sends a batch to the topic
// its data names; the line said every audit line went to the configured
// topic.
func TestDescribeNamesWhereATopicIsChosenPerBatch(t *testing.T) {
	edge := Describe(conf(t, `
extensions:
  sandboxaudit_encoding:
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:4318
exporters:
  kafka:
    brokers: [127.0.0.1:9092]
    topic_from_attribute: tenant
    traces: {topic: sandbox-audit, encoding: sandboxaudit_encoding}
    logs: {topic: sandbox-audit, encoding: sandboxaudit_encoding, topic_from_metadata_key: x-topic}
service:
  telemetry: {metrics: {level: none}}
  pipelines:
    traces: {receivers: [otlp], exporters: [kafka]}
    logs: {receivers: [otlp], exporters: [kafka]}
`))
	assert.Equal(t, "sandboxaudit: audit lines to kafka topic sandbox-audit, or the one a batch names"+
		" (metadata key x-topic, resource attribute tenant), at 127.0.0.1:9092"+
		"; intake OTLP/HTTP http://127.0.0.1:4318; self-metrics off", edge)
}
