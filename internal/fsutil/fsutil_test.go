package fsutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestMkdirAllCreatesPrivateDirsOutermostFirst(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "a", "b", "c")

	created, err := MkdirAll(dir)
	require.NoError(t, err)
	require.Equal(t, []string{
		filepath.Join(base, "a"),
		filepath.Join(base, "a", "b"),
		filepath.Join(base, "a", "b", "c"),
	}, created)
	for _, d := range created {
		fi, err := os.Stat(d)
		require.NoError(t, err)
		require.True(t, fi.IsDir())
		require.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), d)
	}
	require.NoError(t, SyncParents(created))

	// Existing directories are not reported again.
	created, err = MkdirAll(dir)
	require.NoError(t, err)
	require.Empty(t, created)
}

func TestMkdirAllRefusesAFileInTheWay(t *testing.T) {
	base := t.TempDir()
	blocker := filepath.Join(base, "blocker")
	require.NoError(t, os.WriteFile(blocker, nil, 0o600))

	_, err := MkdirAll(blocker)
	require.ErrorContains(t, err, "blocker exists and is not a directory")
	require.ErrorIs(t, err, ErrNotDir)
	_, err = MkdirAll(filepath.Join(blocker, "sub"))
	require.ErrorContains(t, err, "blocker exists and is not a directory")
	require.ErrorIs(t, err, ErrNotDir)
}

func TestSyncDirAndFdatasync(t *testing.T) {
	dir := t.TempDir()
	f, err := os.OpenFile(filepath.Join(dir, "x"), os.O_RDWR|os.O_CREATE, 0o600)
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	_, err = f.WriteString("line\n")
	require.NoError(t, err)
	require.NoError(t, Fdatasync(f))
	require.NoError(t, SyncDir(dir))

	require.Error(t, SyncDir(filepath.Join(dir, "missing")))
	require.NoError(t, f.Close())
	require.Error(t, Fdatasync(f), "a closed file cannot be synced")
}

// OpenRegular opens a regular file and refuses a FIFO at once instead of
// waiting for a writer, or a directory.
func TestOpenRegular(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o600))
	f, fi, err := OpenRegular(file, os.O_RDONLY, 0)
	require.NoError(t, err)
	assert.Equal(t, int64(1), fi.Size())
	require.NoError(t, f.Close())

	fifo := filepath.Join(dir, "p")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	for _, p := range []string{fifo, dir} {
		_, _, err := OpenRegular(p, os.O_RDONLY, 0)
		require.ErrorIs(t, err, ErrNotRegular, p)
	}
}

// TestCheckFiles: a FIFO or a directory named as a file is refused with
// its key; a regular file, a symlink to one and a missing path are not.
func TestCheckFiles(t *testing.T) {
	dir := t.TempDir()
	fifo, regular, link := filepath.Join(dir, "fifo"), filepath.Join(dir, "ca.pem"), filepath.Join(dir, "link.pem")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	require.NoError(t, os.WriteFile(regular, []byte("x"), 0o600))
	require.NoError(t, os.Symlink(regular, link))

	err := CheckFiles(map[string]string{"tls::ca_file": fifo, "tls::cert_file": dir, "tls::key_file": regular, "x": link, "y": filepath.Join(dir, "missing"), "z": ""})
	require.ErrorIs(t, err, ErrNotRegular)
	require.ErrorContains(t, err, "tls::ca_file: "+fifo+" is not a regular file (p")
	require.ErrorContains(t, err, "tls::cert_file: "+dir+" is not a regular file (d")
	require.NotContains(t, err.Error(), "tls::key_file")
	require.NotContains(t, err.Error(), "x:")
	require.NoError(t, CheckFiles(map[string]string{"tls::key_file": regular}))
}

// TestOpenRegularSaysTildeIsNotExpanded: a key or TLS file written as
// "~/keys/audit.key" (a config, or --key=~/… past the shell) was refused
// only as missing, while the operator's home holds it.
func TestOpenRegularSaysTildeIsNotExpanded(t *testing.T) {
	t.Chdir(t.TempDir())
	_, _, err := OpenRegular("~/keys/audit.key", os.O_RDONLY, 0)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.ErrorContains(t, err, `"~/" is not expanded; write the home directory's path`)
}

// TestOpenFileLimitIsTheSoftLimit: OpenFileLimit reports the soft limit
// setrlimit sets, checked in a child process so this one's limit stays.
func TestOpenFileLimitIsTheSoftLimit(t *testing.T) {
	if os.Getenv("FSUTIL_NOFILE_CHILD") == "1" {
		var lim unix.Rlimit
		require.NoError(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &lim))
		require.NoError(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: 100, Max: lim.Max}))
		n, err := OpenFileLimit()
		require.NoError(t, err)
		require.Equal(t, uint64(100), n)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestOpenFileLimitIsTheSoftLimit$", "-test.count=1")
	cmd.Env = append(os.Environ(), "FSUTIL_NOFILE_CHILD=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "PASS")
}
