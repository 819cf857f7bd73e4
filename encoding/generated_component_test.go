// Written by hand in the shape mdatagen v0.165.0 generates for an extension
// (mdatagen cannot be installed here); the config comes from metadata.yaml
// tests::config.

package sandboxauditencoding

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/extension/extensiontest"

	"github.com/sandboxaudit/sandboxaudit/encoding/internal/metadata"
)

var typ = component.MustNewType("sandboxaudit_encoding")

func TestComponentFactoryType(t *testing.T) {
	require.Equal(t, typ, NewFactory().Type())
	require.Equal(t, metadata.Type, NewFactory().Type())
}

func TestComponentConfigStruct(t *testing.T) {
	require.NoError(t, componenttest.CheckConfigStruct(NewFactory().CreateDefaultConfig()))
}

func TestComponentLifecycle(t *testing.T) {
	factory := NewFactory()

	cm, err := confmaptest.LoadConf("metadata.yaml")
	require.NoError(t, err)
	cfg := factory.CreateDefaultConfig()
	sub, err := cm.Sub("tests::config")
	require.NoError(t, err)
	require.NoError(t, sub.Unmarshal(&cfg))
	require.NoError(t, cfg.(*Config).Validate())

	t.Run("shutdown", func(t *testing.T) {
		e, err := factory.Create(context.Background(), extensiontest.NewNopSettings(typ), cfg)
		require.NoError(t, err)
		require.NoError(t, e.Shutdown(context.Background()))
	})
	t.Run("lifecycle", func(t *testing.T) {
		first, err := factory.Create(context.Background(), extensiontest.NewNopSettings(typ), cfg)
		require.NoError(t, err)
		require.NoError(t, first.Start(context.Background(), componenttest.NewNopHost()))
		require.NoError(t, first.Shutdown(context.Background()))

		second, err := factory.Create(context.Background(), extensiontest.NewNopSettings(typ), cfg)
		require.NoError(t, err)
		require.NoError(t, second.Start(context.Background(), componenttest.NewNopHost()))
		require.NoError(t, second.Shutdown(context.Background()))
	})
}
