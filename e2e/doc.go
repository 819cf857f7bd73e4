// Package e2e holds the end-to-end tests: they build otelcol-sandboxaudit,
// the sandboxaudit CLI and the instrumented example, run collectors as
// child processes on free loopback ports, and check the audit files they
// write. They are skipped unless SANDBOXAUDIT_E2E=1 (`make e2e`).
package e2e
