// Package spanmap maps sandbox operation spans to audit events and back
// (docs/format.md, "Inside the collector"), for the exporter and the
// receiver alike, so the mapping exists once. A span is a sandbox span when
// it has the sandbox.operation and sandbox.session.id attributes (names from
// package semconv); Mapper reads spans into events, AppendSpan writes the
// span of a start/finish pair so that reading it back gives the same
// canonical lines.
package spanmap
