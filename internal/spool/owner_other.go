//go:build !linux

package spool

// ownerName is the spool's owner socket, on Linux only (owner_linux.go);
// elsewhere the flocks alone keep a second owner out.
type ownerName struct{}

func holdOwnerName(string) (*ownerName, error) { return nil, nil }

func (o *ownerName) release() error { return nil }
