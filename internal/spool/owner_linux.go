//go:build linux

package spool

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// ownerSocketSupported: the owner socket exists on Linux only.
const ownerSocketSupported = true

// ownerName is an abstract unix socket named after the spool's path,
// bound while the spool is open. The
// flocks are on files at the spool's path, and a cleaner that removes both
// the spool file and its .lock file lets a second owner make and lock new
// ones; nothing in the file system can remove the socket, and it goes with
// the process. It covers the processes of one network namespace; the
// flocks still cover the others.
type ownerName struct {
	l *net.UnixListener
}

// holdOwnerName binds the spool's owner socket. It fails with ErrLocked
// when a process of this user holds it. A socket of that name another user
// bound is no spool's (anyone may bind an abstract name), so it is passed
// over, as is a host where no socket can be bound: the flocks still hold,
// and skipped says why, for the caller to log.
func holdOwnerName(path string, listen ownerListen) (o *ownerName, skipped, err error) {
	// Named after the path with its directory's links resolved, so that a
	// directory removed and made again (a cleaner, then the spool writing
	// its lines back) keeps the name, and a path through a link to it has
	// it too.
	dir, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return nil, nil, fmt.Errorf("spool %s: resolve its directory: %w", path, err)
	}
	sum := sha256.Sum256([]byte(filepath.Join(dir, filepath.Base(path))))
	name := "@sandboxaudit-spool-" + hex.EncodeToString(sum[:16])
	l, err := listen(&net.UnixAddr{Name: name, Net: "unix"})
	if err == nil {
		go drain(l)
		return &ownerName{l: l}, nil, nil
	}
	if !errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("spool %s: owner socket not bound, so only the locks on its files keep a second owner out: %w", path, err), nil
	}
	if !boundByThisUser(name) {
		return nil, fmt.Errorf("spool %s: owner socket %s is bound by another user, so only the locks on its files keep a second owner out: %w", path, name, err), nil
	}
	return nil, nil, fmt.Errorf("spool %s: %w: another process holds it open (its file and .lock file at the path are not the ones that process locked: they were removed or replaced)", path, ErrLocked)
}

// listenOwner binds the owner socket.
func listenOwner(addr *net.UnixAddr) (*net.UnixListener, error) {
	return net.ListenUnix("unix", addr)
}

// drain accepts and closes what boundByThisUser connects, so the backlog
// never fills; it ends when the listener is closed.
func drain(l *net.UnixListener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		_ = c.Close()
	}
}

// boundByThisUser reports whether the abstract socket name is bound by a
// process of this process's user (SO_PEERCRED of a connection to it).
func boundByThisUser(name string) bool {
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: name, Net: "unix"})
	if err != nil {
		return false
	}
	defer func() { _ = c.Close() }()
	raw, err := c.SyscallConn()
	if err != nil {
		return false
	}
	var cred *unix.Ucred
	cerr := raw.Control(func(fd uintptr) {
		cred, err = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	})
	return cerr == nil && err == nil && cred.Uid == uint32(os.Getuid())
}

// release unbinds the socket; safe on nil.
func (o *ownerName) release() error {
	if o == nil {
		return nil
	}
	return o.l.Close()
}
