package kafkaexportcheck

import (
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
