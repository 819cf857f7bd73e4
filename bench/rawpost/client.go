// Package rawpost is the floor of an acknowledged POST over loopback for
// the benchmarks: a client that writes and reads one kept-alive connection
// on the caller's goroutine (as sandboxtrace's DirectLogExporter does), and
// a bare net/http server, in this process or in a child process.
package rawpost

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
)

// maxAnswer bounds the answer ReadAnswer reads: the intakes answer in a
// few bytes.
const maxAnswer = 1 << 20

// Client posts to one URL over one kept-alive connection. It is not safe
// for concurrent use.
type Client struct {
	host, path, contentType string
	conn                    net.Conn
	br                      *bufio.Reader
	buf                     []byte
}

// Dial connects to rawURL's host; every Post goes to its path.
func Dial(rawURL, contentType string) (*Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		return nil, err
	}
	return &Client{host: u.Host, path: u.Path, contentType: contentType, conn: conn, br: bufio.NewReader(conn)}, nil
}

// Post sends body in one write and wants a 200.
func (c *Client) Post(body []byte) error {
	b := append(c.buf[:0], "POST "...)
	b = append(b, c.path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, c.host...)
	b = append(b, "\r\nContent-Type: "...)
	b = append(b, c.contentType...)
	b = append(b, "\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\n\r\n"...)
	b = append(b, body...)
	c.buf = b
	if _, err := c.conn.Write(b); err != nil {
		return err
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		return err
	}
	// Read whole, so the connection is ready for the next request; a cut
	// answer leaves it unusable.
	return ReadAnswer(resp, c.path)
}

// ReadAnswer reads resp's body whole, closes it, and wants a 200; target
// names the request in its errors. A cut answer is no acknowledged round
// trip.
func ReadAnswer(resp *http.Response, target string) error {
	reply, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	_ = resp.Body.Close()
	switch {
	case err != nil:
		return fmt.Errorf("POST %s: reading the answer: %w", target, err)
	case len(reply) > maxAnswer:
		return fmt.Errorf("POST %s: the answer is larger than %d bytes", target, maxAnswer)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("POST %s: %s: %s", target, resp.Status, reply)
	}
	return nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }
