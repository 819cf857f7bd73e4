// Package sandboxauditencoding is the sandboxaudit_encoding extension: the
// canonical audit JSONL (docs/format.md) as a collector encoding extension,
// for components that take one by id, such as the contrib kafka exporter
// and receiver.
//
//   - MarshalTraces: sandbox spans to canonical lines, through the same span
//     mapping (internal/spanmap) and encoder (auditevent) as the sandboxaudit
//     exporter, under the extension's payload policy; other spans are skipped
//     and counted.
//   - MarshalLogs: audit log records to canonical lines.
//   - UnmarshalLogs: canonical lines to audit log records, as strict as the
//     receiver's ndjson intake; a bad line refuses the message, naming the line
//     and the field.
//   - UnmarshalTraces: canonical lines to spans, pairing start and finish
//     events within one message (see documentation.md for why not across
//     messages).
package sandboxauditencoding // import "github.com/sandboxaudit/sandboxaudit/encoding"
