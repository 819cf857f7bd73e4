package sandboxauditexporter

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"golang.org/x/sys/unix"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
)

func TestMaxOpenFilesShare(t *testing.T) {
	for _, tc := range []struct {
		name       string
		set        int
		nofile     uint64
		want       int
		wantCapped bool
		wantErr    string
		used       int
		by         []component.ID
	}{
		{name: "default under a large limit", set: 0, nofile: 1 << 20, want: filesink.DefaultMaxOpenFiles},
		{name: "set within half the limit", set: 512, nofile: 1024, want: 512},
		{name: "set above half the limit", set: 513, nofile: 1024,
			wantErr: "file::max_open_files: 513 is more than the file sink may keep open: the process's open-file limit (RLIMIT_NOFILE) is 1024 and the sink takes at most half of it, 512"},
		{name: "default lowered", set: 0, nofile: 100, want: 50, wantCapped: true},
		{name: "default written out lowered", set: filesink.DefaultMaxOpenFiles, nofile: 100, want: 50, wantCapped: true},
		{name: "default at a limit of 1", set: 0, nofile: 1, want: 1, wantCapped: true},
		{name: "unlimited", set: 1 << 30, nofile: unix.RLIM_INFINITY, want: 1 << 30},
		{name: "set within what the other sinks leave", set: 12, nofile: 100, used: 38, by: ids("a"), want: 12},
		{name: "set above what the other sinks leave", set: 13, nofile: 100, used: 38, by: ids("a", "c"),
			wantErr: `file::max_open_files: 13 is more than the file sink may keep open: the process's open-file limit (RLIMIT_NOFILE) is 100 ` +
				`and the sink takes at most half of it, 50, of which the file sinks of exporters "sandboxaudit/a", "sandboxaudit/c" may keep 38 open`},
		{name: "default lowered to what the other sinks leave", set: 0, nofile: 100, used: 40, by: ids("a"), want: 10, wantCapped: true},
		{name: "default with nothing left", set: 0, nofile: 100, used: 64, by: ids("a"), want: 1, wantCapped: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, capped, err := maxOpenFiles(tc.set, tc.nofile, tc.used, tc.by)
			if tc.wantErr != "" {
				require.EqualError(t, err, tc.wantErr+"; lower max_open_files or raise the limit")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, n)
			assert.Equal(t, tc.wantCapped, capped)
		})
	}
}

// ids are the ids sandboxaudit/name of names.
func ids(names ...string) []component.ID {
	out := make([]component.ID, len(names))
	for i, n := range names {
		out[i] = component.MustNewIDWithName(typ.String(), n)
	}
	return out
}

// lowNofileEnv marks the child process of TestMaxOpenFilesUnderLoweredLimit.
const lowNofileEnv = "SANDBOXAUDIT_TEST_LOW_NOFILE"

// TestMaxOpenFilesUnderLoweredLimit starts the exporter under a real soft
// RLIMIT_NOFILE of 100, in a child process (this test binary run again)
// so this process's own limit is untouched: a max_open_files set above
// half of it refuses the start naming the key and the limit, and makes
// nothing on disk; the default is lowered to 50 with one warning.
func TestMaxOpenFilesUnderLoweredLimit(t *testing.T) {
	if os.Getenv(lowNofileEnv) != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMaxOpenFilesUnderLoweredLimit$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), lowNofileEnv+"=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "--- PASS: TestMaxOpenFilesUnderLoweredLimit")
		return
	}
	var lim unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &lim))
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: 100, Max: lim.Max}))

	t.Run("set above the share", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "audit")
		cfg := syncConfig()
		withFile(cfg, filepath.Join(dir, "{session_id}.jsonl"), auditevent.PolicyOverride{})
		cfg.File.Get().MaxOpenFiles = 1000
		require.EqualError(t, startError(t, cfg), "file::max_open_files: 1000 is more than the file sink may keep open: the process's "+
			"open-file limit (RLIMIT_NOFILE) is 100 and the sink takes at most half of it, 50; lower max_open_files or raise the limit")
		require.NoDirExists(t, dir)
	})
	t.Run("default", func(t *testing.T) {
		cfg := syncConfig()
		withFile(cfg, filepath.Join(t.TempDir(), "{session_id}.jsonl"), auditevent.PolicyOverride{})
		core, logs := observer.New(zapcore.InfoLevel)
		startExportersWithLogger(t, cfg, zap.New(core))
		warned := logs.FilterMessageSnippet("file.max_open_files lowered").All()
		require.Len(t, warned, 1)
		assert.Equal(t, zapcore.WarnLevel, warned[0].Level)
		assert.Equal(t, map[string]any{"max_open_files": int64(50), "default": int64(filesink.DefaultMaxOpenFiles), "open_file_limit": uint64(100)},
			warned[0].ContextMap())
	})
	// A plain path's sink keeps one file open: max_open_files, which only
	// bounds a templated path's files, is neither refused nor lowered.
	t.Run("plain path", func(t *testing.T) {
		for _, set := range []int{0, 1000} {
			cfg := syncConfig()
			withFile(cfg, filepath.Join(t.TempDir(), "events.jsonl"), auditevent.PolicyOverride{})
			cfg.File.Get().MaxOpenFiles = set
			core, logs := observer.New(zapcore.InfoLevel)
			startExportersWithLogger(t, cfg, zap.New(core))
			assert.Zero(t, logs.FilterMessageSnippet("max_open_files").Len(), "max_open_files %d", set)
		}
	})
	// The share is the process's: two exporters of one collector that
	// each fit it but not together are refused, the second naming the
	// first; a plain path counts its one file.
	t.Run("several exporters", func(t *testing.T) {
		f := NewFactory()
		templated := func(n int) *Config {
			cfg := fileConfig(filepath.Join(t.TempDir(), "{session_id}.jsonl"), nil)
			cfg.File.Get().MaxOpenFiles = n
			return cfg
		}
		_, err := startNamed(t, f, "a", templated(30))
		require.NoError(t, err)
		_, err = startNamed(t, f, "plain", fileConfig(filepath.Join(t.TempDir(), "events.jsonl"), nil))
		require.NoError(t, err)
		_, err = startNamed(t, f, "b", templated(20))
		require.EqualError(t, err, `file::max_open_files: 20 is more than the file sink may keep open: the process's open-file limit `+
			`(RLIMIT_NOFILE) is 100 and the sink takes at most half of it, 50, of which the file sinks of exporters "sandboxaudit/a", `+
			`"sandboxaudit/plain" may keep 31 open; lower max_open_files or raise the limit`)
		_, err = startNamed(t, f, "c", templated(19))
		require.NoError(t, err)
	})
	t.Run("set within the share", func(t *testing.T) {
		cfg := syncConfig()
		withFile(cfg, filepath.Join(t.TempDir(), "{session_id}.jsonl"), auditevent.PolicyOverride{})
		cfg.File.Get().MaxOpenFiles = 50
		core, logs := observer.New(zapcore.InfoLevel)
		startExportersWithLogger(t, cfg, zap.New(core))
		assert.Zero(t, logs.FilterMessageSnippet("max_open_files").Len())
	})
}

// TestSpoolBelowOneLineWarns: a spool max_size under one line of
// max_line_bytes starts, with one warning naming both keys; a spool that
// holds such a line, or an unbounded one, starts without it. What such a
// spool does with a line it cannot hold (the push fails, spool_full) is
// TestHTTPFullSpoolFailsExportVisibly's.
func TestSpoolBelowOneLineWarns(t *testing.T) {
	for _, tc := range []struct {
		maxSize int64
		warned  bool
	}{
		{maxSize: 1 << 20, warned: true},
		{maxSize: defaultMaxLineBytes, warned: true},
		{maxSize: defaultMaxLineBytes + 1},
		{maxSize: 0},
	} {
		rec := newRecorder(t, nil)
		cfg := syncConfig()
		hc := withHTTP(cfg, rec.srv.URL, "ndjson", auditevent.PolicyOverride{})
		sc := hc.Spool.GetOrInsertDefault()
		sc.Path = filepath.Join(t.TempDir(), "spool.jsonl")
		sc.MaxSize = tc.maxSize
		core, logs := observer.New(zapcore.InfoLevel)
		startExportersWithLogger(t, cfg, zap.New(core))

		warned := logs.FilterMessageSnippet("http.spool.max_size is smaller than one line of max_line_bytes").All()
		if !tc.warned {
			assert.Empty(t, warned, "max_size %d", tc.maxSize)
			continue
		}
		require.Len(t, warned, 1, "max_size %d", tc.maxSize)
		assert.Equal(t, zapcore.WarnLevel, warned[0].Level)
		assert.Equal(t, map[string]any{"max_size": tc.maxSize, "max_line_bytes": int64(defaultMaxLineBytes)}, warned[0].ContextMap())
	}
}
