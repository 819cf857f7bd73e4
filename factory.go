// Package sandboxaudit is the root of the sandbox audit collector
// components: the factories to embed in any collector build, and the
// settings and default configuration of the otelcol-sandboxaudit
// distribution (cmd/otelcol-sandboxaudit).
package sandboxaudit

import (
	"os"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/debugexporter"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/batchprocessor"
	"go.opentelemetry.io/collector/processor/memorylimiterprocessor"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
	"go.uber.org/zap"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/kafkaexporter"
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/bearertokenauthextension"

	sandboxauditencoding "github.com/sandboxaudit/sandboxaudit/encoding"
	sandboxauditexporter "github.com/sandboxaudit/sandboxaudit/exporter"
	"github.com/sandboxaudit/sandboxaudit/internal/kafkaexportcheck"
	"github.com/sandboxaudit/sandboxaudit/internal/startupline"
	"github.com/sandboxaudit/sandboxaudit/kafkaguardreceiver"
	sandboxauditprocessor "github.com/sandboxaudit/sandboxaudit/processor"
	sandboxauditreceiver "github.com/sandboxaudit/sandboxaudit/receiver"
)

// Module and version strings, as `otelcol-sandboxaudit components` and
// builder-config.yaml show them.
const (
	// Module is this Go module.
	Module = "github.com/sandboxaudit/sandboxaudit"
	// Version is the release of this module and of the distribution.
	Version = "0.1.0"
	// CollectorVersion is the release of the collector modules built in.
	CollectorVersion = "v0.165.0"
	// ContribVersion is the release of the contrib modules built in (the
	// contrib patch release that matches CollectorVersion).
	ContribVersion = "v0.165.1"
)

// ReceiverFactory returns the sandboxaudit receiver factory.
func ReceiverFactory() receiver.Factory {
	return sandboxauditreceiver.NewFactory()
}

// ExporterFactory returns the sandboxaudit exporter factory.
func ExporterFactory() exporter.Factory {
	return sandboxauditexporter.NewFactory()
}

// EncodingExtensionFactory returns the sandboxaudit_encoding extension
// factory.
func EncodingExtensionFactory() extension.Factory {
	return sandboxauditencoding.NewFactory()
}

// ProcessorFactory returns the sandboxaudit processor factory.
func ProcessorFactory() processor.Factory {
	return sandboxauditprocessor.NewFactory()
}

// Components returns the factories of the otelcol-sandboxaudit
// distribution: the sandboxaudit receiver, processor and exporter, the
// sandboxaudit_encoding extension, the OTLP receiver, the contrib kafka
// receiver behind its encoding check (kafkaguardreceiver), the contrib
// kafka exporter, the batch and memory_limiter processors, the debug
// exporter, and the standard self-telemetry. Each call builds new factories.
func Components() (otelcol.Factories, error) {
	factories := otelcol.Factories{Telemetry: otelconftelemetry.NewFactory()}
	if err := addFactories(&factories); err != nil {
		return otelcol.Factories{}, err
	}
	addModules(&factories)
	return factories, nil
}

// addFactories fills in the distribution's receiver, processor, exporter
// and extension factories.
func addFactories(factories *otelcol.Factories) error {
	var err error
	factories.Receivers, err = otelcol.MakeFactoryMap[receiver.Factory](
		otlpreceiver.NewFactory(),
		kafkaguardreceiver.NewFactory(),
		ReceiverFactory(),
	)
	if err != nil {
		return err
	}
	factories.Processors, err = otelcol.MakeFactoryMap[processor.Factory](
		batchprocessor.NewFactory(),
		memorylimiterprocessor.NewFactory(),
		ProcessorFactory(),
	)
	if err != nil {
		return err
	}
	factories.Exporters, err = otelcol.MakeFactoryMap[exporter.Factory](
		debugexporter.NewFactory(),
		// The contrib kafka exporter, its encoding checked against
		// service::extensions before it starts.
		kafkaexportcheck.NewFactory(EncodingExtensionFactory().Type()),
		// otlphttp forwards the processor's spans to a tracing backend.
		otlphttpexporter.NewFactory(),
		ExporterFactory(),
	)
	if err != nil {
		return err
	}
	factories.Extensions, err = otelcol.MakeFactoryMap[extension.Factory](
		// So that the receiver's and exporter's `auth` keys can be used
		// in this distribution: a bearer token is what an agent's sink
		// can send.
		bearertokenauthextension.NewFactory(),
		EncodingExtensionFactory(),
	)
	return err
}

// addModules names the module of each factory, for the collector's
// components command.
func addModules(factories *otelcol.Factories) {
	own := Module + " v" + Version
	collector := func(path string) string { return "go.opentelemetry.io/collector/" + path + " " + CollectorVersion }
	contrib := func(path string) string {
		return "github.com/open-telemetry/opentelemetry-collector-contrib/" + path + " " + ContribVersion
	}
	factories.ReceiverModules = map[component.Type]string{
		otlpreceiver.NewFactory().Type():       collector("receiver/otlpreceiver"),
		kafkaguardreceiver.NewFactory().Type(): own,
		ReceiverFactory().Type():               own,
	}
	factories.ProcessorModules = map[component.Type]string{
		batchprocessor.NewFactory().Type():         collector("processor/batchprocessor"),
		memorylimiterprocessor.NewFactory().Type(): collector("processor/memorylimiterprocessor"),
		ProcessorFactory().Type():                  own,
	}
	factories.ExporterModules = map[component.Type]string{
		debugexporter.NewFactory().Type():    collector("exporter/debugexporter"),
		kafkaexporter.NewFactory().Type():    contrib("exporter/kafkaexporter"),
		otlphttpexporter.NewFactory().Type(): collector("exporter/otlphttpexporter"),
		ExporterFactory().Type():             own,
	}
	// A factory registered under a deprecated alias too (otlphttp for
	// otlp_http) reports its module under both names.
	for typ, f := range factories.Exporters {
		if _, ok := factories.ExporterModules[typ]; !ok {
			factories.ExporterModules[typ] = factories.ExporterModules[f.Type()]
		}
	}
	factories.ExtensionModules = map[component.Type]string{
		bearertokenauthextension.NewFactory().Type(): contrib("extension/bearertokenauthextension"),
		EncodingExtensionFactory().Type():            own,
	}
}

// BuildInfo describes the otelcol-sandboxaudit binary.
func BuildInfo() component.BuildInfo {
	return component.BuildInfo{
		Command:     "otelcol-sandboxaudit",
		Description: "OpenTelemetry Collector distribution for sandbox audit trails",
		Version:     Version,
	}
}

// CollectorSettings returns the settings of the otelcol-sandboxaudit
// distribution. Its configuration is DefaultConfig unless --config is given.
// Once running, it prints one line on stderr naming the audit file, each
// intake address and where self-metrics are served.
func CollectorSettings() otelcol.CollectorSettings {
	line := startupline.New(os.Stderr)
	providers := ConfigProviderSettings()
	providers.ResolverSettings.ConverterFactories = append(providers.ResolverSettings.ConverterFactories, line.ConverterFactory())
	return otelcol.CollectorSettings{
		BuildInfo:              BuildInfo(),
		Factories:              Components,
		ConfigProviderSettings: providers,
		LoggingOptions:         []zap.Option{line.LoggingOption()},
		ProviderModules: map[string]string{
			"file": "go.opentelemetry.io/collector/confmap/provider/fileprovider v1.71.0",
			"env":  "go.opentelemetry.io/collector/confmap/provider/envprovider v1.71.0",
			"yaml": "go.opentelemetry.io/collector/confmap/provider/yamlprovider v1.71.0",
			"http": "go.opentelemetry.io/collector/confmap/provider/httpprovider v1.71.0",
		},
	}
}
