package rawpost

import (
	"bufio"
	"io"
	"net"
	"net/http"
)

// StartCutAnswer starts a server on 127.0.0.1 that answers its first
// request with a 200 whose body is cut short, so clients' tests can check
// that a cut answer is an error. It returns the server's URL and a func
// that stops it.
func StartCutAnswer() (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer func() { _ = conn.Close() }()
		_, _ = http.ReadRequest(bufio.NewReader(conn))
		_, _ = io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
	}()
	return "http://" + ln.Addr().String() + "/", func() { _ = ln.Close() }, nil
}
