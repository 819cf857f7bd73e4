package sandboxtrace

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// retryableShape is shaped as the exporters' error for a 429, 502, 503
// or 504.
type retryableShape struct{ err error }

func (e retryableShape) Error() string { return "retry-able request failure: " + e.err.Error() }
func (e retryableShape) Unwrap() error { return e.err }

// bodyOf is the exporters' error quoting a reply body.
func bodyOf(reply string) error { return errors.New("body: " + reply) }

// scrubReply shows the length of each body the exporters quote, in
// whatever wraps it, and keeps the chain.
func TestScrubReply(t *testing.T) {
	refused := fmt.Errorf("failed to send to http://h/v1/traces: 400 Bad Request (%w)", bodyOf("echo: secret"))
	for _, c := range []struct {
		err     error
		text    string
		is      error
		refusal bool
	}{
		{err: fmt.Errorf("traces export: %w", errors.Join(nil, refused)),
			text:    "traces export: failed to send to http://h/v1/traces: 400 Bad Request (body: 12 bytes, not shown)",
			is:      refused,
			refusal: true},
		{err: fmt.Errorf("%w: %w", context.DeadlineExceeded, retryableShape{bodyOf("secret\n\x1b[2J")}),
			text: "context deadline exceeded: retry-able request failure: body: 11 bytes, not shown",
			is:   context.DeadlineExceeded},
		{err: fmt.Errorf("failed to send logs to http://h/v1/logs: 413 Request\x1b[31m Entity Too Large (%w)", bodyOf("(empty)")),
			text:    `failed to send logs to http://h/v1/logs: 413 Request\x1b[31m Entity Too Large (body: (empty))`,
			refusal: true},
		// A body that quotes a refusal is no refusal.
		{err: retryableShape{bodyOf("failed to send to http://x: 400 Bad Request (body: x)")},
			text: "retry-able request failure: body: 53 bytes, not shown"},
		{err: errors.New("OTLP partial success: line\n\x1b[2J too long (1 spans rejected)"),
			text: `OTLP partial success: line\n\x1b[2J too long (1 spans rejected)`},
		{err: errors.New("OTLP partial success: " + strings.Repeat("x", 300) + " (3 log records rejected)"),
			text: "OTLP partial success: " + strings.Repeat("x", 199) + "… (3 log records rejected)"},
		// A gRPC status message is the collector's text: its length only.
		{err: fmt.Errorf("traces export: %w", errors.Join(nil, status.Error(codes.InvalidArgument, "echo: secret\x1b"))),
			text:    "traces export: rpc error: code = InvalidArgument desc = 13 bytes, not shown",
			refusal: true},
		{err: fmt.Errorf("max retry time elapsed: %w", status.Error(codes.Unavailable, "echo: secret")),
			text: "max retry time elapsed: rpc error: code = Unavailable desc = 12 bytes, not shown"},
	} {
		got := scrubReply(c.err)
		assert.Equal(t, c.text, got.Error())
		assert.ErrorIs(t, got, c.err, "the exporter's error is in the chain")
		if c.is != nil {
			assert.ErrorIs(t, got, c.is)
		}
		assert.Equal(t, c.refusal, refusedWhole(got), "%v", got)
		assert.Same(t, got, scrubReply(got), "scrubbed once")
	}
}

// An error that quotes no reply is handed on as it is.
func TestScrubReplyLeavesOtherErrors(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	for _, err := range []error{
		nil,
		fmt.Errorf("traces export: %w", refused),
		errors.New("body: not an exporter's"),
		fmt.Errorf("log endpoint: 400 Bad Request: %w", errors.New("body: x")),
		fmt.Errorf("traces export: %w", status.Error(codes.Unavailable, "")),
	} {
		assert.Equal(t, err, scrubReply(err))
	}
	require.ErrorIs(t, scrubReply(fmt.Errorf("x: %w", refused)), syscall.ECONNREFUSED)
}
