package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/multierr"
)

// TestEachRefusalNamesItsComponent: a section with several bad keys is
// refused with every key under its component's path. The collector
// prefixes each section's error once, so a second error was a line of its
// own ("witness_quorum: …", "payload_policy::redact::patterns[0]: …")
// naming no component, though the exporter, the processor and the
// extension take the same keys.
func TestEachRefusalNamesItsComponent(t *testing.T) {
	dir := t.TempDir()
	msg := refusalText(t, dir, `
extensions:
  sandboxaudit_encoding:
    payload_policy_by_op: {nope: {}}
    payload_policy: {redact: {patterns: ['(']}}
processors:
  sandboxaudit:
    payload_policy_by_op: {nope: {}}
    payload_policy: {redact: {patterns: ['(']}}
receivers:
  sandboxaudit: {endpoint: 127.0.0.1:8088, max_connections: 0, max_pending: 0}
exporters:
  sandboxaudit:
    max_line_bytes: 1
    payload_policy_by_op: {nope: {}}
    file:
      path: `+filepath.Join(dir, "events.jsonl")+`
      max_open_files: -1
      integrity: {witness_quorum: 2}
service:
  extensions: [sandboxaudit_encoding]
  pipelines:
    logs: {receivers: [sandboxaudit], processors: [sandboxaudit], exporters: [sandboxaudit]}
`, distFactories(t))
	for _, want := range []string{
		"receivers::sandboxaudit: max_connections: must be positive (got 0)",
		"receivers::sandboxaudit: max_pending: must be positive (got 0)",
		"exporters::sandboxaudit: max_line_bytes: must be at least 1024",
		"exporters::sandboxaudit::file: integrity: signing_key_file: must be set",
		"exporters::sandboxaudit::file: integrity: witness_quorum: must be between 0 (all) and the 0 witnesses, got 2",
		"processors::sandboxaudit: payload_policy::redact::patterns[0]: not an RE2 expression",
		"extensions::sandboxaudit_encoding: payload_policy::redact::patterns[0]: not an RE2 expression",
	} {
		assert.Contains(t, msg, want)
	}
	for line := range strings.SplitSeq(strings.TrimPrefix(msg, "invalid configuration: "), "\n") {
		assert.Regexp(t, `^(receivers|processors|exporters|extensions)::sandboxaudit`, line)
	}
}

// TestEachStartRefusalNamesItsComponent: errors a component's start joins
// (two TLS files that cannot be read) each name the component.
func TestEachStartRefusalNamesItsComponent(t *testing.T) {
	factories := distFactories(t)
	start := errors.Join(errors.New("http::tls::ca_file: open a: no such file"), errors.New("file: integrity: witnesses::0::tls::ca_file: open b: no such file"))
	failed := fmt.Errorf("cannot start pipelines: %w", fmt.Errorf(`failed to start "sandboxaudit" exporter: %w`, start))
	assert.Equal(t, `cannot start pipelines: failed to start "sandboxaudit" exporter: http::tls::ca_file: open a: no such file`+"\n"+
		`failed to start "sandboxaudit" exporter: file: integrity: witnesses::0::tls::ca_file: open b: no such file`, errorText(failed, factories))
}

// TestErrorWrappingTwoKeepsItsText: an error that wraps two with text
// around them ("…: %w; close it with a newline: %w", as closing a torn
// audit file's last line reports) is one error, not a join: it is printed
// whole, under its component.
func TestErrorWrappingTwoKeepsItsText(t *testing.T) {
	factories := distFactories(t)
	two := fmt.Errorf("keep the torn last line of a aside: %w; close it with a newline: %w", errors.New("no room"), errors.New("read-only"))
	failed := fmt.Errorf("cannot start pipelines: %w", fmt.Errorf(`failed to start "sandboxaudit" exporter: file: %w`, two))
	assert.Equal(t, failed.Error(), errorText(failed, factories))
}

// TestStartRefusalWithAShutdownErrorNamesItsComponent: the collector
// combines a start error with its shutdown's (multierr, "a; b"); the start
// error's lines each still name the component.
func TestStartRefusalWithAShutdownErrorNamesItsComponent(t *testing.T) {
	factories := distFactories(t)
	start := errors.Join(errors.New("http::tls::ca_file: open a: no such file"), errors.New("file: integrity: witnesses::0::tls::ca_file: open b: no such file"))
	failed := multierr.Combine(fmt.Errorf("cannot start pipelines: %w", fmt.Errorf(`failed to start "sandboxaudit" exporter: %w`, start)),
		errors.New("failed to shutdown pipelines: x"))
	assert.Equal(t, `cannot start pipelines: failed to start "sandboxaudit" exporter: http::tls::ca_file: open a: no such file`+"\n"+
		`cannot start pipelines: failed to start "sandboxaudit" exporter: file: integrity: witnesses::0::tls::ca_file: open b: no such file`+"\n"+
		"failed to shutdown pipelines: x", errorText(failed, factories))
}
