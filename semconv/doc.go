// Package semconv names the span attributes, span names and log event names
// of sandbox audit telemetry (docs/format.md, "Inside the collector").
//
// These names are the contract between the Go instrumentation
// (sandboxtrace), the collector's receiver and exporter, and the people who
// query the resulting traces and logs; they exist once, here, so the parties
// cannot drift apart. The package holds names only, no behaviour.
//
// The keys are untyped string constants, so they work both with the OTel Go
// API (attribute.String(semconv.AttrOperation, op)) and with pdata
// (attrs.PutStr(semconv.AttrOperation, op)).
package semconv
