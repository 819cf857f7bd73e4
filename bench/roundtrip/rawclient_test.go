package roundtrip

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
)

// rawClient posts over one kept-alive connection from the caller's
// goroutine, as sandboxtrace's DirectLogExporter does: no transport
// goroutines between the caller and the socket.
type rawClient struct {
	host, path, contentType string
	conn                    net.Conn
	br                      *bufio.Reader
	buf                     []byte
}

func newRawClient(rawURL, contentType string) (*rawClient, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		return nil, err
	}
	return &rawClient{host: u.Host, path: u.Path, contentType: contentType, conn: conn, br: bufio.NewReader(conn)}, nil
}

func (c *rawClient) post(body []byte) error {
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
	reply, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %s: %s", c.path, resp.Status, reply)
	}
	return nil
}

func (c *rawClient) close() { _ = c.conn.Close() }
