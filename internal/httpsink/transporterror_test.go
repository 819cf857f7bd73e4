package httpsink

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sandboxaudit/sandboxaudit/internal/secretlog"
)

// rawEndpoint answers each connection on 127.0.0.1 with answer(request
// line, Authorization value), whatever bytes that is; closed at cleanup.
func rawEndpoint(t *testing.T, answer func(line, auth string) string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for { // ends when the listener closes
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = c.Close() }()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				r := bufio.NewReader(c)
				line, _ := r.ReadString('\n')
				auth := ""
				for range 100 {
					h, err := r.ReadString('\n')
					if err != nil || h == "\r\n" {
						break
					}
					if k, v, ok := strings.Cut(h, ":"); ok && strings.EqualFold(k, "Authorization") {
						auth = strings.TrimSpace(v)
					}
				}
				_, _ = c.Write([]byte(answer(line, auth)))
			}()
		}
	}()
	return ln.Addr().String()
}

// A response net/http cannot parse is quoted in its error, and an endpoint
// (or a service that is not one) may echo the request there: neither the
// error a push returns nor any log line shows the token, the password or
// the query, with or without response bodies shown.
func TestTransportErrorsQuoteNothingTheEndpointSent(t *testing.T) {
	answers := map[string]func(line, auth string) string{
		"header line without a colon": func(_, auth string) string { return "HTTP/1.1 200 OK\r\nAuthorization " + auth + "\r\n\r\n" },
		"the request line echoed":     func(line, _ string) string { return line },
		"a Location it cannot parse": func(_, auth string) string {
			return "HTTP/1.1 307 X\r\nLocation: http://[::1%" + auth + "\r\nContent-Length: 0\r\n\r\n"
		},
		"a status line with the token": func(_, auth string) string { return "HTTP/1.1 2x0 " + auth + "\r\n\r\n" },
	}
	for name, answer := range answers {
		t.Run(name, func(t *testing.T) {
			addr := rawEndpoint(t, answer)
			core, logs := observer.New(zapcore.DebugLevel)
			retry := fastRetry()
			retry.MaxElapsedTime = 100 * time.Millisecond
			sk, err := New(Settings{
				Client:   &http.Client{Timeout: 2 * time.Second, Transport: bearer{http.DefaultTransport, "TOKENSECRET"}}, // unknown to the configuration, as an auth extension's
				Endpoint: "http://u:PASSSECRET@" + addr + "/v1?api_key=QUERYSECRET",
				Format:   FormatNDJSON, Retry: retry, Logger: zap.New(core), ShowResponseBody: true,
			})
			require.NoError(t, err)
			err = sk.Send(context.Background(), []byte(`{"event_id":"a"}`+"\n"), 1)
			require.Error(t, err)
			var te *secretlog.TransportFailure
			require.ErrorAs(t, err, &te, "the cause stays reachable")
			assert.Contains(t, err.Error(), "withheld")
			texts := []string{err.Error()}
			for _, e := range logs.All() {
				texts = append(texts, e.Message)
				for k, v := range e.ContextMap() {
					texts = append(texts, k+"="+toString(v))
				}
			}
			require.NoError(t, sk.Shutdown(context.Background()))
			for _, s := range texts {
				for _, secret := range []string{"TOKENSECRET", "QUERYSECRET", "PASSSECRET"} {
					assert.NotContains(t, s, secret)
				}
			}
		})
	}
}

// A 2xx whose gzip body does not decode arrived whole: it acknowledges
// the lines once rather than being resent every round. A 2xx cut off
// mid-body still is not trusted.
func TestTwoHundredWithAnUndecodableBodyIsAnAcknowledgement(t *testing.T) {
	f := newFixture(t, FormatNDJSON, false)
	f.srv.setDefault(func(w http.ResponseWriter, _ *http.Request, _ []byte) bool {
		w.Header().Set("Content-Encoding", "gzip")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("this is not gzip"))
		return true
	})
	require.NoError(t, f.sink.Send(sendCtx(t), []byte(`{"event_id":"a"}`+"\n"), 1))
	assert.Len(t, f.srv.all(), 1)

	f.srv.setDefault(cut("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial"))
	require.Error(t, f.sink.Send(sendCtx(t), []byte(`{"event_id":"b"}`+"\n"), 1))
}
