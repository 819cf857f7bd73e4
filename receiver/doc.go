// Package sandboxauditreceiver is the collector receiver of sandbox audit
// events (component type "sandboxaudit").
//
// It serves two HTTP intakes on one confighttp server:
//
//   - traces_path (default /v1/traces): OTLP/HTTP traces, protobuf or JSON.
//     Each sandbox span becomes its start and finish events (log records);
//     the spans themselves go on unchanged to a traces pipeline.
//   - events_path (default /v1/sandbox/events): sandbox events as the Python
//     HttpProxySink posts them, one per request as application/json, or a
//     batch as application/x-ndjson. Events become log records; in a traces
//     pipeline each start/finish pair also becomes a span.
//
// Events whose event_id was already delivered are dropped, so the
// at-least-once replay of an exporter does not duplicate the audit trail.
package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"
