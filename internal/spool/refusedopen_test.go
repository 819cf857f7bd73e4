package spool

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRefusedOpenLeavesNoLockFile: an Open refused because another Spool
// holds the path must not leave a .lock file it made behind (a cleaner
// removed the owner's), and must never remove the owner's own.
func TestRefusedOpenLeavesNoLockFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	s := openSpool(t, Options{Path: path})
	require.NoError(t, s.Append(context.Background(), []byte("{}\n")))

	before, err := os.Lstat(path + ".lock")
	require.NoError(t, err)
	_, err = Open(context.Background(), Options{Path: path})
	require.ErrorIs(t, err, ErrLocked)
	after, err := os.Lstat(path + ".lock")
	require.NoError(t, err, "the owner's lock file is kept")
	require.True(t, os.SameFile(before, after), "the owner's lock file is the one at the path")

	require.NoError(t, os.Remove(path+".lock"))
	_, err = Open(context.Background(), Options{Path: path})
	require.ErrorIs(t, err, ErrLocked, "refused by the owner socket")
	_, err = os.Lstat(path + ".lock")
	require.ErrorIs(t, err, os.ErrNotExist, "a refused Open leaves no lock file of its own")

	// Without the owner socket, the lock on the spool file itself refuses.
	_, err = openWith(context.Background(), Options{Path: path}, failingListen(syscall.EACCES))
	require.ErrorIs(t, err, ErrLocked, "refused by the lock on the spool file")
	_, err = os.Lstat(path + ".lock")
	require.ErrorIs(t, err, os.ErrNotExist, "a refused Open leaves no lock file of its own")

	require.NoError(t, s.Close())
	again, err := Open(context.Background(), Options{Path: path})
	require.NoError(t, err, "Close lets the next owner in")
	require.NoError(t, again.Close())
}

// TestOwnerSocketSkipIsReported: a host where the owner socket cannot be
// bound opens the spool (the flocks still hold) and says why in Recovery,
// for the caller to log.
func TestOwnerSocketSkipIsReported(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.jsonl")
	s, err := openWith(context.Background(), Options{Path: path}, failingListen(syscall.EACCES))
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	skipped := s.Recovery().OwnerSocketSkipped
	if !ownerSocketSupported {
		require.NoError(t, skipped)
		return
	}
	require.ErrorIs(t, skipped, syscall.EACCES)
	require.Contains(t, skipped.Error(), path)

	// The flocks still keep a second owner out.
	_, err = openWith(context.Background(), Options{Path: path}, failingListen(syscall.EACCES))
	require.ErrorIs(t, err, ErrLocked)

	plain := openSpool(t, Options{Path: filepath.Join(t.TempDir(), "spool.jsonl")})
	require.NoError(t, plain.Recovery().OwnerSocketSkipped, "bound, so nothing to report")
}

func failingListen(errno syscall.Errno) ownerListen {
	return func(addr *net.UnixAddr) (*net.UnixListener, error) {
		return nil, &net.OpError{Op: "listen", Net: "unix", Addr: addr, Err: os.NewSyscallError("bind", errno)}
	}
}
