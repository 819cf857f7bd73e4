// Package configtest loads a component's section of a testdata config file
// the way the collector does, for the components' config tests.
package configtest // import "github.com/sandboxaudit/sandboxaudit/internal/testutil/configtest"

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"
)

// Load unmarshals the section id of the YAML file at path over factory's
// default config. A missing file or section fails t; the unmarshal error is
// returned, and validation is left to the caller, since some tests check
// the unmarshal and the validation errors apart.
func Load(t testing.TB, factory component.Factory, path string, id component.ID) (component.Config, error) {
	t.Helper()
	cm, err := confmaptest.LoadConf(path)
	require.NoError(t, err)
	sub, err := cm.Sub(id.String())
	require.NoError(t, err)
	cfg := factory.CreateDefaultConfig()
	if err := sub.Unmarshal(&cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}
