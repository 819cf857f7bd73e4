// Package loopback picks free loopback addresses for tests and benchmarks
// that start collectors listening on them.
package loopback // import "github.com/sandboxaudit/sandboxaudit/internal/testutil/loopback"

import "net"

// FreeAddrs returns n distinct 127.0.0.1 addresses nothing listened on a
// moment ago. Their listeners are all open before any is closed: the kernel
// may hand the port it has just freed to the very next listener (about once
// in 20,000 pairs here), and two collectors of one run would then collide.
// Another process can still take a port before it is bound again.
func FreeAddrs(n int) ([]string, error) {
	addrs := make([]string, n)
	for i := range addrs {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer func() { _ = l.Close() }() // only frees the port
		addrs[i] = l.Addr().String()
	}
	return addrs, nil
}
