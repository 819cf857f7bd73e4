// Command otelcol-sandboxaudit is an OpenTelemetry Collector with the
// sandbox audit receiver and exporter built in. Without --config it runs the
// embedded default configuration (see sandboxaudit.DefaultConfig), whose
// keys --set alone changes; with --config it behaves like any collector.
// Unless the environment sets GOGC or GOMEMLIMIT, it runs with GOGC=400 and
// a 512 MiB soft memory limit, less under a smaller cgroup memory.max (see
// gc.go). A shutdown that has not finished after 30s ends the process with
// exit 1 (see stopbound.go).
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/collector/otelcol"

	"github.com/sandboxaudit/sandboxaudit"
)

func main() {
	applyGCDefaults(os.LookupEnv, os.ReadFile)
	settings := sandboxaudit.CollectorSettings()
	bound := newStopBound(defaultStopLimit, os.Stderr, os.Exit)
	settings.LoggingOptions = append(settings.LoggingOptions, bound.LoggingOption())
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	bound.ArmOn(stop)
	if err := newCommand(settings, os.Args[1:]).Execute(); err != nil {
		// Without its factories (never, as built) the error is still
		// escaped; only squashed keys are named as Go fields.
		factories, _ := settings.Factories()
		fmt.Fprintln(os.Stderr, "Error:", errorText(err, factories))
		os.Exit(1)
	}
}

// newCommand is the collector's command line with settings, run with args.
func newCommand(settings otelcol.CollectorSettings, args []string) *cobra.Command {
	cmd := otelcol.NewCommand(settings)
	cmd.SetArgs(withDefaultConfig(args))
	// Printed once, by main: cobra would print it too.
	cmd.SilenceErrors = true
	redactPrintConfig(cmd)
	return cmd
}
