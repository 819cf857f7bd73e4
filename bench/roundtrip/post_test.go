package roundtrip

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestPostReportsACutAnswer: a 200 whose body the server cuts short is an
// error, not a round trip counted as done.
func TestPostReportsACutAnswer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer func() { _ = conn.Close() }()
		_, _ = http.ReadRequest(bufio.NewReader(conn))
		_, _ = io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
	}()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	err = post(client, "http://"+ln.Addr().String()+"/", "application/json", []byte("{}"))
	if err == nil || !strings.Contains(err.Error(), "answer") {
		t.Fatalf("post of a cut answer = %v, want an error about the answer", err)
	}
}
