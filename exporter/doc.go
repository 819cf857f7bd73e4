// Package sandboxauditexporter is the sandboxaudit collector exporter: it
// turns sandbox operation spans (each into its start and finish audit
// events) and audit-event log records into canonical JSONL lines, and
// writes every event to a file sink and/or delivers it over HTTP, each sink
// under its own payload policy (see README.md).
package sandboxauditexporter // import "github.com/sandboxaudit/sandboxaudit/exporter"
