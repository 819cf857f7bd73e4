package sandboxauditexporter

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exportertest"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// startNamed starts a logs exporter of factory f under the id
// sandboxaudit/name, returning it and its start error; it is shut down
// when the test ends.
func startNamed(t *testing.T, f exporter.Factory, name string, cfg *Config) (exporter.Logs, error) {
	t.Helper()
	require.NoError(t, cfg.Validate())
	set := exportertest.NewNopSettings(typ)
	set.ID = component.MustNewIDWithName(typ.String(), name)
	lg, err := f.CreateLogs(context.Background(), set, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = lg.Shutdown(context.Background()) })
	return lg, lg.Start(context.Background(), componenttest.NewNopHost())
}

// fileConfig is a config of a file sink at path with rotation rc (none
// when nil).
func fileConfig(path string, rc *RotationConfig) *Config {
	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	if rc != nil {
		*cfg.File.Get().Rotation.GetOrInsertDefault() = *rc
	}
	return cfg
}

// TestTwoExportersOfOneFileRotateAlike: two exporters of one collector
// that write one file.path with different rotations (or one rotating and
// one not) would each rotate the file and remove its segments by its own
// rules: the second to start is refused, naming the other exporter and
// the key. The same rotation, or another path, starts; so does the
// second once the first has shut down.
func TestTwoExportersOfOneFileRotateAlike(t *testing.T) {
	byHour := &RotationConfig{Interval: time.Hour, MaxBackups: 3, Compression: compressionNone}
	bySize := &RotationConfig{MaxMegabytes: 1, Compression: compressionZstd}
	for name, rcs := range map[string][2]*RotationConfig{
		"different rotations":   {byHour, bySize},
		"one rotating, one not": {nil, bySize},
		"one retaining fewer":   {byHour, {Interval: time.Hour, MaxBackups: 2, Compression: compressionNone}},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			f := NewFactory()
			_, err := startNamed(t, f, "a", fileConfig(filepath.Join(dir, "events.jsonl"), rcs[0]))
			require.NoError(t, err)
			// Through a symlinked directory too.
			link := filepath.Join(t.TempDir(), "link")
			require.NoError(t, os.Symlink(dir, link))
			_, err = startNamed(t, f, "b", fileConfig(filepath.Join(link, "events.jsonl"), rcs[1]))
			require.ErrorContains(t, err, `file::rotation: differs from that of exporter "sandboxaudit/a", which writes the same file::path `+
				filepath.Join(link, "events.jsonl"))
		})
	}
	t.Run("alike, elsewhere, or after the other stopped", func(t *testing.T) {
		dir := t.TempDir()
		f := NewFactory()
		a, err := startNamed(t, f, "a", fileConfig(filepath.Join(dir, "{session_id}.jsonl"), byHour))
		require.NoError(t, err)
		b, err := startNamed(t, f, "b", fileConfig(filepath.Join(dir, "{session_id}.jsonl"), byHour))
		require.NoError(t, err)
		_, err = startNamed(t, f, "c", fileConfig(filepath.Join(dir, "other.jsonl"), bySize))
		require.NoError(t, err)
		_, err = startNamed(t, f, "d", fileConfig(filepath.Join(dir, "{session_id}.jsonl"), bySize))
		require.Error(t, err)
		require.NoError(t, a.Shutdown(context.Background()))
		require.NoError(t, b.Shutdown(context.Background()))
		_, err = startNamed(t, f, "e", fileConfig(filepath.Join(dir, "{session_id}.jsonl"), bySize))
		require.NoError(t, err)
	})
}
