//go:build !unix

package sandboxtrace

import "net"

// hasInput cannot look into the socket here: only bytes already buffered
// are seen (see DirectLogExporter.idleInput).
func hasInput(net.Conn) bool { return false }
