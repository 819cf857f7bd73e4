// Package roundtrip holds an in-process benchmark of one acknowledged POST
// over loopback: a bare net/http server, the sandboxaudit receiver's events
// intake and the OTLP/HTTP receiver's /v1/logs, each into the sandboxaudit
// exporter writing a file with fsync never and batch. The targets are
// posted to in turn, one request each per iteration, so a noisy machine
// moves them all alike.
package roundtrip
