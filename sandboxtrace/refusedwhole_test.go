package sandboxtrace

import (
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// The status is read from otlptracehttp's and otlploghttp's own message,
// wherever it sits in the chain; a reply body that quotes one is no
// refusal.
func TestRefusedWhole(t *testing.T) {
	for msg, want := range map[error]bool{
		errors.New("failed to send to http://127.0.0.1:4318/v1/traces: 400 Bad Request (body: x)"):                                      true,
		errors.New("failed to send logs to http://127.0.0.1:4318/v1/logs: 413 Request Entity Too Large (body: x)"):                      true,
		errors.New("failed to send to http://127.0.0.1:4318/v1/traces: 401 Unauthorized (body: x)"):                                     false,
		errors.New("retry-able request failure: body: failed to send to http://x: 400 Bad Request"):                                     false,
		errors.New("log endpoint: 400 Bad Request"):                                                                                     false,
		&refusedError{errors.New("log endpoint: 413 Request Entity Too Large")}:                                                         true,
		fmt.Errorf("traces export: %w", errors.Join(nil, errors.New("failed to send to http://h/v1/traces: 400 Bad Request (body: )"))): true,
	} {
		assert.Equal(t, want, refusedWhole(msg), "%v", msg)
	}
}

// Over gRPC, InvalidArgument and ResourceExhausted without RetryInfo are
// the refusals; what otlptracegrpc retries, or a status that says nothing
// of the items, is not.
func TestRefusedWholeGRPC(t *testing.T) {
	throttled, err := status.New(codes.ResourceExhausted, "slow down").
		WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	exported := func(err error) error { return fmt.Errorf("traces export: %w", errors.Join(nil, err)) }
	for err, want := range map[error]bool{
		exported(status.Error(codes.InvalidArgument, "refused")):                   true,
		exported(status.Error(codes.ResourceExhausted, "message larger than max")): true,
		exported(throttled.Err()): false,
		exported(fmt.Errorf("max retry time elapsed: %w", status.Error(codes.Unavailable, "down"))):    false,
		exported(status.Error(codes.OutOfRange, "x")):                                                  false,
		exported(status.Error(codes.FailedPrecondition, "x")):                                          false,
		exported(status.Error(codes.Internal, "x")):                                                    false,
		exported(errors.New("rpc error: code = InvalidArgument desc = a reply quoting another error")): false,
	} {
		assert.Equal(t, want, refusedWhole(err), "%v", err)
	}
}

// Only an error made of partial successes counts their rejected items;
// anything else loses the whole part.
func TestLostOf(t *testing.T) {
	partial := func(n int) error {
		return errors.New("OTLP partial success: a (b) c (" + strconv.Itoa(n) + " spans rejected)")
	}
	for err, want := range map[error]int{
		fmt.Errorf("traces export: %w", errors.Join(nil, partial(3))): 3,
		scrubReply(partial(0)):              0,
		errors.Join(partial(1), partial(2)): 3,
		partial(99):                         10,
		partial(-1):                         0,
		errors.Join(partial(1), errors.New("timeout")):             10,
		fmt.Errorf("body: %w", errors.New("x")):                    10,
		errors.New("OTLP partial success: x (one spans rejected)"): 10,
	} {
		assert.Equal(t, want, lostOf(10, err), "%v", err)
	}
}
