package main

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/otelcol"

	"github.com/sandboxaudit/sandboxaudit"
)

// validate runs the distribution's `validate` command with args as main
// would, after withDefaultConfig.
func validate(t *testing.T, args ...string) error {
	t.Helper()
	cmd := otelcol.NewCommand(sandboxaudit.CollectorSettings())
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	cmd.SetArgs(withDefaultConfig(append([]string{"validate"}, args...)))
	return cmd.Execute()
}

// TestSetAloneOverridesTheEmbeddedDefault: --set without --config changes
// one key of the embedded default configuration, as the docs say, rather
// than replacing the whole configuration with that one key.
func TestSetAloneOverridesTheEmbeddedDefault(t *testing.T) {
	if err := validate(t, "--set", "exporters::sandboxaudit::file::path=./elsewhere/events.jsonl"); err != nil {
		t.Fatalf("--set alone: %v", err)
	}
	if err := validate(t, "--set=service::telemetry::metrics::level=none"); err != nil {
		t.Fatalf("--set= alone: %v", err)
	}
	err := validate(t, "--set", "exporters::sandboxaudit::file::path=")
	if err == nil || !strings.Contains(err.Error(), "exporters::sandboxaudit::file: path: must be set") {
		t.Fatalf("a --set that empties the default's key: got %v", err)
	}
}

func TestWithDefaultConfigLeavesAGivenConfigAlone(t *testing.T) {
	for _, args := range [][]string{
		{"--config", "a.yaml", "--set", "x::y=1"},
		{"--config=a.yaml", "--set=x::y=1"},
		{"validate"},
		{},
		{"--", "--set", "x"},
	} {
		if got := withDefaultConfig(args); strings.Join(got, " ") != strings.Join(args, " ") {
			t.Errorf("%q became %q", args, got)
		}
	}
}
