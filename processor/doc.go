// Package sandboxauditprocessor is the sandboxaudit processor: it applies
// the audit exporter's payload policy (payload_policy,
// payload_policy_by_op) to sandbox span attributes, so a traces pipeline
// that also feeds a tracing backend forwards spans no less redacted than
// the audit file. By default it removes all raw exec output.
package sandboxauditprocessor // import "github.com/sandboxaudit/sandboxaudit/processor"
