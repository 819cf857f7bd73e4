package kafkaexportcheck

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exportertest"
)

// guardedFactory is the checked kafka exporter factory for the
// sandboxaudit_encoding extension, with settings to create it by.
func guardedFactory() (exporter.Factory, exporter.Settings) {
	f := NewFactory(component.MustNewType("sandboxaudit_encoding"))
	set := exportertest.NewNopSettings(f.Type())
	set.ID = component.NewID(f.Type())
	return f, set
}

// create creates the signal's exporter with cfg.
func create(f exporter.Factory, set exporter.Settings, signal string, cfg component.Config) (component.Component, error) {
	if signal == "traces" {
		return f.CreateTraces(context.Background(), set, cfg)
	}
	return f.CreateLogs(context.Background(), set, cfg)
}
