package sandboxauditencoding // import "github.com/sandboxaudit/sandboxaudit/encoding"

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/sandboxaudit/sandboxaudit/encoding/internal/metadata"
)

// NewFactory returns the sandboxaudit_encoding extension factory.
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig, createExtension, metadata.ExtensionStability)
}

func createExtension(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	return newEncodingExtension(cfg.(*Config), set)
}

// Names reports whether a component's `encoding` value (an extension id,
// such as `sandboxaudit_encoding/edge`) names this extension.
func Names(encoding string) bool {
	var id component.ID
	return id.UnmarshalText([]byte(encoding)) == nil && id.Type() == metadata.Type
}
