package sandboxauditexporter

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// The start-up check judges the hash store as verify does: a store whose
// hash over two subtrees is not theirs is refused at start, naming the
// store, rather than sealed over (verify would go on calling it damaged,
// or a later checkpoint would fail). A store cut short is rebuilt from
// the file, and verify then finds nothing wrong. Hashes after the newest
// checkpoint, which verify does not read (nothing signs them), are cut
// back where they disagree with the file, with a warning, rather than
// refused.
func TestIntegrityStartJudgesTheStoreAsVerifyDoes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		damage  func(t *testing.T, store []byte, path string) []byte
		refused string // "" when the start goes on
		warn    string // logged when the start goes on
	}{
		{"hash over lines 1-2 changed", func(_ *testing.T, s []byte, _ string) []byte { s[2*tlog.HashSize] ^= 1; return s },
			"the hash it holds over lines 1-2 of the log is not the one their own hashes give", ""},
		{"hash over the newest subtree changed", func(_ *testing.T, s []byte, _ string) []byte { s[len(s)-1] ^= 1; return s },
			"the hash it holds over lines 9-12 of the log is not the one their own hashes give", ""},
		{"store cut short", func(_ *testing.T, s []byte, _ string) []byte { return s[:tlog.StoredHashCount(2)*tlog.HashSize] }, "", ""},
		{"store longer than the file", func(t *testing.T, s []byte, path string) []byte {
			return append(s, storeTail(s, firstLines(t, path, 3), -1)...)
		}, "", "disagree with the file from line 13 (the file ends at line 12)"},
		{"a hash after the checkpoint changed", func(t *testing.T, s []byte, path string) []byte {
			lines := firstLines(t, path, 4)
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			require.NoError(t, err)
			_, err = f.Write(bytes.Join(lines, nil))
			require.NoError(t, errors.Join(err, f.Close()))
			return append(s, storeTail(s, lines, 2)...)
		}, "", "disagree with the file from line 14 (the hash it holds over lines 13-14 of the log is not the one their own hashes give"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, pubPath, cfg, store := sealThreeBatches(t)
			require.Equal(t, tlog.StoredHashCount(12)*tlog.HashSize, int64(len(store)), "3 batches of 4 lines")
			require.NoError(t, os.WriteFile(integrity.StorePath(path), tc.damage(t, store, path), 0o600))
			damage := checkFile(t, path, pubPath).StoreDamage
			if tc.warn == "" {
				require.NotEmpty(t, damage, "verify calls the store damaged")
			} else {
				require.Empty(t, damage, "verify does not read a store's hashes after the newest checkpoint")
			}

			cps, err := os.ReadFile(integrity.CheckpointsPath(path))
			require.NoError(t, err)
			core, logs := observer.New(zapcore.WarnLevel)
			set := exportertest.NewNopSettings(typ)
			set.Logger = zap.New(core)
			tr, err := NewFactory().CreateTraces(context.Background(), set, cfg)
			require.NoError(t, err)
			err = tr.Start(context.Background(), componenttest.NewNopHost())
			if tc.refused != "" {
				require.NoError(t, tr.Shutdown(context.Background()))
				require.ErrorIs(t, err, integrity.ErrTampered)
				require.ErrorContains(t, err, path+".tlog is damaged ("+damage+")")
				require.ErrorContains(t, err, tc.refused)
				logged := logs.FilterLevelExact(zapcore.ErrorLevel).FilterField(zap.String("path", path)).All()
				require.Len(t, logged, 1, "%v", logs.All())
				require.Contains(t, logged[0].ContextMap()["error"], path+".tlog is damaged ("+damage+")")
				after, err := os.ReadFile(integrity.CheckpointsPath(path))
				require.NoError(t, err)
				require.Equal(t, cps, after, "nothing sealed over the damaged store")
				return
			}
			require.NoError(t, err)
			require.NoError(t, tr.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...)))
			require.NoError(t, tr.Shutdown(context.Background()))
			if tc.warn != "" {
				warned := logs.FilterMessageSnippet("repaired").FilterField(zap.String("path", path)).All()
				require.Len(t, warned, 1, "%v", logs.All())
				require.Contains(t, warned[0].ContextMap()["repair"], tc.warn)
			}
			res := checkFile(t, path, pubPath)
			require.Nil(t, res.Failure)
			require.Empty(t, res.StoreDamage)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			require.EqualValues(t, bytes.Count(data, []byte("\n")), res.Sealed, "every line sealed")
		})
	}
}

// firstLines is the file's first n lines, each with its newline.
func firstLines(t *testing.T, path string, n int) [][]byte {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return bytes.SplitAfterN(data, []byte("\n"), n+1)[:n]
}

// storeTail is what a store of 12 records would hold next for lines, as
// lines 13 on hashed before a checkpoint that never came: their leaf
// hashes, and the nodes they complete, folded over the store's own. The
// hash stored at index bad among them is flipped (-1: none).
func storeTail(store []byte, lines [][]byte, bad int) []byte {
	hashes := make([]tlog.Hash, 0, len(store)/tlog.HashSize+8)
	for i := 0; i < len(store); i += tlog.HashSize {
		hashes = append(hashes, tlog.Hash(store[i:i+tlog.HashSize]))
	}
	reader := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			out[i] = hashes[x]
		}
		return out, nil
	})
	for k, line := range lines {
		more, err := tlog.StoredHashes(int64(12+k), line, reader)
		if err != nil {
			panic(err)
		}
		hashes = append(hashes, more...)
	}
	var tail []byte
	for _, h := range hashes[len(store)/tlog.HashSize:] {
		tail = append(tail, h[:]...)
	}
	if bad >= 0 {
		tail[bad*tlog.HashSize] ^= 1
	}
	return tail
}

// A store cut short below the newest checkpoint is one verify --key calls
// damaged; the start rebuilds it from the file, after which verify passes.
// The WARN is what is left to tell an operator the store was cut.
func TestIntegrityStartWarnsWhenItRebuildsAStoreCutShort(t *testing.T) {
	path, pubPath, cfg, store := sealThreeBatches(t)
	require.Len(t, store, 22*tlog.HashSize, "12 lines hold 22 stored hashes")
	require.NoError(t, os.WriteFile(integrity.StorePath(path), store[:3*tlog.HashSize], 0o600), "the hashes of 2 lines")
	require.NotEmpty(t, checkFile(t, path, pubPath).StoreDamage, "verify calls the cut store damaged")

	core, logs := observer.New(zapcore.WarnLevel)
	set := exportertest.NewNopSettings(typ)
	set.Logger = zap.New(core)
	tr, err := NewFactory().CreateTraces(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, tr.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, tr.Shutdown(context.Background()))

	warned := logs.FilterMessageSnippet("hash store was cut short").All()
	require.Len(t, warned, 1, "%v", logs.All())
	fields := warned[0].ContextMap()
	require.Equal(t, path, fields["path"])
	require.Equal(t, integrity.StorePath(path), fields["store"])
	require.EqualValues(t, 3, fields["hashes_held"])
	require.EqualValues(t, 2, fields["lines_held"])
	require.EqualValues(t, 22-3, fields["hashes_rebuilt"])
	require.EqualValues(t, 12-2, fields["lines_rebuilt"])
	require.Empty(t, checkFile(t, path, pubPath).StoreDamage, "the rebuilt store passes verify")

	// A store that is not there at all is rebuilt without this warning:
	// verify does not call a missing store damaged.
	require.NoError(t, os.Remove(integrity.StorePath(path)))
	tr, err = NewFactory().CreateTraces(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, tr.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, tr.Shutdown(context.Background()))
	require.Len(t, logs.FilterMessageSnippet("hash store was cut short").All(), 1, "%v", logs.All())
	require.FileExists(t, integrity.StorePath(path))
}

// sealThreeBatches writes three sealed batches of four lines to an audit
// file with integrity on, stops the exporter and returns the file's path,
// the public key's path, the config and the hash store's bytes.
func sealThreeBatches(t *testing.T) (path, pubPath string, cfg *Config, store []byte) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "audit.jsonl")
	keyPath, pubPath := writeKeys(t)
	cfg = syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	withIntegrity(cfg, keyPath)
	te := startIntegrityExporters(t, cfg)
	for range 3 {
		require.NoError(t, te.traces.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...)))
	}
	te.shutdown(t)
	store, err := os.ReadFile(integrity.StorePath(path))
	require.NoError(t, err)
	return path, pubPath, cfg, store
}
