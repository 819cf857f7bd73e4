//go:build !linux

package spool

import "net"

// ownerSocketSupported: the owner socket exists on Linux only.
const ownerSocketSupported = false

// ownerName is the spool's owner socket, on Linux only (owner_linux.go);
// elsewhere the flocks alone keep a second owner out.
type ownerName struct{}

func holdOwnerName(string, ownerListen) (*ownerName, error, error) { return nil, nil, nil }

func listenOwner(*net.UnixAddr) (*net.UnixListener, error) { return nil, nil }

func (o *ownerName) release() error { return nil }
