//go:build unix

package sandboxtrace

import (
	"crypto/tls"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// hasInput reports whether the socket under c has a byte to read or was
// closed by the peer, without reading or waiting: MSG_PEEK on a socket the
// runtime keeps non-blocking (MSG_DONTWAIT is not on every unix: aix).
func hasInput(c net.Conn) bool {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var b [1]byte
	input := false
	_ = rc.Read(func(fd uintptr) bool {
		n, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK)
		input = n > 0 || (n == 0 && err == nil) // a byte, or the peer's FIN
		return true                             // never wait
	})
	return input
}
