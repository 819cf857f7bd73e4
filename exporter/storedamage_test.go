package sandboxauditexporter

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// The start-up check judges the hash store as verify does: a store whose
// hash over two subtrees is not theirs is refused at start, naming the
// store, rather than sealed over (verify would go on calling it damaged,
// or a later checkpoint would fail). A store cut short is rebuilt from
// the file, and verify then finds nothing wrong.
func TestIntegrityStartJudgesTheStoreAsVerifyDoes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		damage  func(store []byte) []byte
		refused string // "" when the start goes on
	}{
		{"hash over lines 1-2 changed", func(s []byte) []byte { s[2*tlog.HashSize] ^= 1; return s },
			"the hash it holds over lines 1-2 of the log is not the one their own hashes give"},
		{"hash over the newest subtree changed", func(s []byte) []byte { s[len(s)-1] ^= 1; return s },
			"the hash it holds over lines 9-12 of the log is not the one their own hashes give"},
		{"store cut short", func(s []byte) []byte { return s[:tlog.StoredHashCount(2)*tlog.HashSize] }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			keyPath, pubPath := writeKeys(t)
			cfg := syncConfig()
			withFile(cfg, path, auditevent.PolicyOverride{})
			withIntegrity(cfg, keyPath)
			te := startIntegrityExporters(t, cfg)
			for range 3 {
				require.NoError(t, te.traces.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...)))
			}
			te.shutdown(t)
			store, err := os.ReadFile(integrity.StorePath(path))
			require.NoError(t, err)
			require.Equal(t, tlog.StoredHashCount(12)*tlog.HashSize, int64(len(store)), "3 batches of 4 lines")
			require.NoError(t, os.WriteFile(integrity.StorePath(path), tc.damage(store), 0o600))
			damage := checkFile(t, path, pubPath).StoreDamage
			require.NotEmpty(t, damage, "verify calls the store damaged")

			if tc.refused != "" {
				cps, err := os.ReadFile(integrity.CheckpointsPath(path))
				require.NoError(t, err)
				err = startAnother(t, cfg)
				require.ErrorIs(t, err, integrity.ErrTampered)
				require.ErrorContains(t, err, path+".tlog is damaged ("+damage+")")
				require.ErrorContains(t, err, tc.refused)
				after, err := os.ReadFile(integrity.CheckpointsPath(path))
				require.NoError(t, err)
				require.Equal(t, cps, after, "nothing sealed over the damaged store")
				return
			}
			te = startIntegrityExporters(t, cfg)
			require.NoError(t, te.traces.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...)))
			te.shutdown(t)
			res := checkFile(t, path, pubPath)
			require.Nil(t, res.Failure)
			require.Empty(t, res.StoreDamage)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			require.EqualValues(t, bytes.Count(data, []byte("\n")), res.Sealed, "every line sealed")
		})
	}
}
