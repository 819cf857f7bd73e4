package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
)

// rotateNewLog writes ops operations to the new log at path, which a
// handover to keyFile left there, rotating every 2 KiB and sealing with
// the key as the collector does, and returns its closed segments.
func rotateNewLog(t *testing.T, path, keyFile string, ops int) []filesink.Segment {
	t.Helper()
	keys, err := integrity.LoadSigningKey(keyFile)
	require.NoError(t, err)
	sealer, err := integrity.NewSealer(integrity.Settings{Keys: keys, Interval: time.Second})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, sealer.SealAtStart(ctx, path))
	sink, err := filesink.New(filesink.Options{Path: path, OnWrite: sealer.Wrote, Rotation: &filesink.Rotation{MaxBytes: 2 << 10}})
	require.NoError(t, err)
	for i := range ops {
		s, f := op(sessionB, "read", fmt.Sprintf("c%015d", i), int64(2*i+201), int64(2*i+202))
		require.NoError(t, sink.WriteBatch(ctx, sessionB.String(), []byte(canonLines(s, f))))
		require.NoError(t, sealer.SealPending(ctx))
	}
	require.NoError(t, sink.Close())
	require.NoError(t, sealer.Close(ctx))
	segs, err := filesink.Segments(path)
	require.NoError(t, err)
	require.Greater(t, len(segs), 1)
	return segs
}

func TestExploreAloneNewLog(t *testing.T) {
	path, retired, oldPub, newKey := handOverRotated(t)
	segs := rotateNewLog(t, path, newKey, 30)
	newPub := strings.TrimSuffix(newKey, ".key") + ".pub"
	for _, k := range []string{oldPub, newPub} {
		res := run(t, "", "verify", "--key", k, "--alone", segs[1].Path)
		t.Logf("key %s: %d\n%s\n%s", filepath.Base(k), res.code, res.stdout, res.stderr)
		res = run(t, "", "verify", "--key", k, "--allow-open", retired, path)
		t.Logf("whole key %s: %d\n%s\n%s", filepath.Base(k), res.code, res.stdout, res.stderr)
	}
	r := run(t, "", "verify", "--key", newPub, "--alone", filepath.Dir(retired)+"/"+"x")
	_ = r
}
