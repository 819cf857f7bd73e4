// Command otelcol-sandboxaudit is an OpenTelemetry Collector with the
// sandbox audit receiver and exporter built in. Without --config it runs the
// embedded default configuration (see sandboxaudit.DefaultConfig); with
// --config it behaves like any collector.
package main

import (
	"fmt"
	"os"

	"go.opentelemetry.io/collector/otelcol"

	"github.com/sandboxaudit/sandboxaudit"
)

func main() {
	if err := otelcol.NewCommand(sandboxaudit.CollectorSettings()).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
