package sandboxauditreceiver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/sandboxaudit/sandboxaudit/receiver/internal/admission"
)

// The events intake decodes a large event only through the gate: six
// large bodies decoding at once each built a tree of up to 15 times their
// size before the exact count could refuse them. So does a large ndjson
// batch (decoded a line at a time) for a large line.
func TestLargeEventWaitsForTheDecodeGate(t *testing.T) {
	big := strings.Replace(startJSON(0), `"data":{`, `"data":{"x":"`+strings.Repeat("a", admission.LargeDecodeBytes)+`",`, 1)
	var batch strings.Builder
	batch.WriteString(big + "\n")
	for i := 1; i <= deliverPiece; i++ {
		batch.WriteString(startJSON(i) + "\n")
	}
	for name, tc := range map[string]struct {
		ct, body string
		records  int
	}{
		"json":                  {contentTypeJSON, big, 1},
		"ndjson of 4,097 lines": {contentTypeNDJSON, batch.String(), deliverPiece + 1},
	} {
		t.Run(name, func(t *testing.T) { waitsForTheGate(t, tc.ct, tc.body, tc.records) })
	}
}

func waitsForTheGate(t *testing.T, ct, body string, records int) {
	sink := new(consumertest.LogsSink)
	tr := startReceiver(t, sink, nil)
	leave, err := tr.r.decoding.Enter(context.Background(), netip.Addr{}, admission.LargeDecodeBytes)
	require.NoError(t, err) // a large decode in progress
	done := make(chan int, 1)
	go func() {
		status, _, _ := post(t, tr.eventsURL(), ct, []byte(body))
		done <- status
	}()
	select {
	case status := <-done:
		t.Fatalf("decoded while the gate was held (status %d)", status)
	case <-time.After(300 * time.Millisecond):
	}
	leave()
	select {
	case status := <-done:
		assert.Equal(t, http.StatusOK, status)
	case <-time.After(10 * time.Second):
		t.Fatal("still waiting after the gate was freed")
	}
	assert.Equal(t, records, sink.LogRecordCount())
}

// TestHalfClosedClientGetsItsAnswer: a client that half-closes its side
// once its request is sent (as nc -N does) gets its events delivered and
// its 200, large body or not.
func TestHalfClosedClientGetsItsAnswer(t *testing.T) {
	logs := new(consumertest.LogsSink)
	tr := startReceiver(t, logs, nil)
	for i := range 20 {
		event := startJSON(i)
		body := event[:len(event)-1] + strings.Repeat(" ", admission.LargeDecodeBytes) + "}"
		conn, err := net.Dial("tcp", tr.r.addr.String())
		require.NoError(t, err)
		_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
			tr.r.cfg.EventsPath, len(body), body)
		require.NoError(t, err)
		require.NoError(t, conn.(*net.TCPConn).CloseWrite())
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		answer, _ := io.ReadAll(resp.Body)
		_ = conn.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "request %d: %s", i, answer)
	}
	assert.Equal(t, 20, logs.LogRecordCount())
}
