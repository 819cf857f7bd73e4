// Command otelcol-sandboxaudit is an OpenTelemetry Collector with the
// sandbox audit receiver and exporter built in. Without --config it runs the
// embedded default configuration (see sandboxaudit.DefaultConfig), whose
// keys --set alone changes; with --config it behaves like any collector.
// Unless the environment sets GOGC or GOMEMLIMIT, it runs with GOGC=400 and
// a 512 MiB soft memory limit, less under a smaller cgroup memory.max (see
// gc.go).
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/collector/otelcol"

	"github.com/sandboxaudit/sandboxaudit"
)

func main() {
	applyGCDefaults(os.LookupEnv, os.ReadFile)
	if err := newCommand(os.Args[1:]).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}

// newCommand is the collector's command line, run with args.
func newCommand(args []string) *cobra.Command {
	cmd := otelcol.NewCommand(sandboxaudit.CollectorSettings())
	cmd.SetArgs(withDefaultConfig(args))
	// Printed once, by main: cobra would print it too.
	cmd.SilenceErrors = true
	redactPrintConfig(cmd)
	return cmd
}
