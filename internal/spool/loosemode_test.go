package spool

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLooseSpoolFilesAreMadePrivateAtOpen: a spool and a quarantine file
// left readable by others (copied back with cp, restored from a backup,
// handed to another user) hold audit lines; Open makes them 0600 and the
// caller's own, and Recovery says what it changed, for the caller to log.
func TestLooseSpoolFilesAreMadePrivateAtOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	s := openSpool(t, Options{Path: path})
	require.NoError(t, s.Append(context.Background(), []byte("{}\n")))
	require.NoError(t, s.Close())
	require.NoError(t, os.WriteFile(path+".quarantine", []byte("bad\n"), 0o600))
	for _, p := range []string{path, path + ".quarantine"} {
		require.NoError(t, os.Chmod(p, 0o644))
	}
	asRoot := os.Geteuid() == 0
	if asRoot {
		require.NoError(t, os.Chown(path, 65534, 65534))
	}

	s = openSpool(t, Options{Path: path})
	defer func() { require.NoError(t, s.Close()) }()
	for _, p := range []string{path, path + ".quarantine"} {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), p)
		if asRoot {
			require.Equal(t, uint32(0), fi.Sys().(*syscall.Stat_t).Uid, p)
		}
	}
	require.Len(t, s.Recovery().MadePrivate, 2)
	require.Contains(t, s.Recovery().MadePrivate[0], "-rw-r--r--")
	require.Contains(t, s.Recovery().MadePrivate[1], path+".quarantine")
}

// TestQuarantineNotAFileDoesNotStopOpen: a directory at the quarantine's
// path is replay's to report, when it has a line to keep; Open goes on.
func TestQuarantineNotAFileDoesNotStopOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	require.NoError(t, os.Mkdir(path+".quarantine", 0o755))
	s := openSpool(t, Options{Path: path})
	require.Empty(t, s.Recovery().MadePrivate)
	require.NoError(t, s.Close())
}
