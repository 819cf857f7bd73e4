package sandboxtrace

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// halving sends items in one request and, when the collector refuses it
// whole (refusedWhole: it wrote none of it), sends each half the same way,
// down to single items: an item the collector cannot take (an event over
// the exporter's max_line_bytes) fails alone, not with the items of the
// other sessions that shared its request. n items take at most 2n-1
// requests. A retryable reply or a transport error is never split: it
// says nothing of the items.
type halving[T any] struct {
	// send makes one request of part.
	send func(part []T) error
	// settle takes the outcome of part, nil or why it was not written;
	// each item gets one. Its result joins export's.
	settle func(part []T, err error) error
	// next returns what of a refused part's half is still to go, or why
	// it is not sent (the export's time is up), refusal included.
	next func(half []T, refusal error) ([]T, error)
}

func (h halving[T]) export(items []T) error {
	err := h.send(items)
	if err == nil || len(items) < 2 || !refusedWhole(err) {
		return h.settle(items, err)
	}
	mid := len(items) / 2
	var errs []error
	for _, half := range [][]T{items[:mid], items[mid:]} {
		half, late := h.next(half, err)
		switch {
		case late != nil:
			errs = append(errs, h.settle(half, late))
		case len(half) > 0:
			errs = append(errs, h.export(half))
		}
	}
	return errors.Join(errs...)
}

// retryingHalving is the halving of an export bounded by ctx whose every
// request goes again while it gets no reply (exportRetrying), until
// giveUp: the span and log processors share it.
func retryingHalving[T any](ctx context.Context, giveUp time.Time, export func(context.Context, []T) error, settle func([]T, error) error) halving[T] {
	return halving[T]{
		send: func(part []T) error {
			return exportRetrying(ctx, giveUp, func(ctx context.Context) error { return export(ctx, part) })
		},
		settle: settle,
		next:   untilDone[T](ctx),
	}
}

// untilDone is a halving's next for an export bounded by ctx: halves go
// while ctx lasts.
func untilDone[T any](ctx context.Context) func(half []T, refusal error) ([]T, error) {
	return func(half []T, refusal error) ([]T, error) {
		if ctx.Err() != nil {
			return half, errors.Join(context.Cause(ctx), refusal)
		}
		return half, nil
	}
}

// refusedWhole reports whether err is a request the collector refused
// whole for its content, a 400 or 413: DirectLogExporter's refusedError,
// otlptracehttp's or otlploghttp's error for that reply, or the gRPC
// exporters' status for it (grpcRefused). The HTTP exporters give the
// status only in their text ("failed to send to URL: 400 Bad Request
// (body: …)"), so it is read from the error in the chain that begins so:
// a reply body quoted in another error cannot pass for one.
func refusedWhole(err error) bool {
	var refused *refusedError
	return errors.As(err, &refused) || grpcRefused(err) || anyInChain(err, func(e error) bool {
		code := otlpHTTPStatus(e.Error())
		return code == http.StatusBadRequest || code == http.StatusRequestEntityTooLarge
	})
}

// grpcRefused reports whether err carries the gRPC status of a request
// refused for its content, which otlptracegrpc and otlploggrpc do not
// retry: InvalidArgument, the collector's answer to an exporter's refusal
// (its 400), or ResourceExhausted without RetryInfo, a message over the
// server's max_recv_msg_size_mib (its 413). Every other code is left
// whole: the exporters retry Unavailable, ResourceExhausted with
// RetryInfo and the like themselves, and Internal, FailedPrecondition or
// PermissionDenied say nothing of the items.
func grpcRefused(err error) bool {
	s, ok := status.FromError(err)
	if !ok || s == nil {
		return false
	}
	switch s.Code() {
	case codes.InvalidArgument:
		return true
	case codes.ResourceExhausted:
		return !hasRetryInfo(s)
	}
	return false
}

// hasRetryInfo reports whether s asks to be sent again later.
func hasRetryInfo(s *status.Status) bool {
	for _, d := range s.Details() {
		if _, ok := d.(*errdetails.RetryInfo); ok {
			return true
		}
	}
	return false
}

// otlpHTTPStatus is the reply status of an otlptracehttp or otlploghttp
// error message for a non-retryable reply, or 0.
func otlpHTTPStatus(msg string) int {
	rest, ok := strings.CutPrefix(msg, "failed to send to ")
	if !ok {
		rest, ok = strings.CutPrefix(msg, "failed to send logs to ")
	}
	if !ok {
		return 0
	}
	// The URL, escaped, holds no ": ".
	_, status, _ := strings.Cut(rest, ": ")
	code, _, _ := strings.Cut(status, " ")
	n, err := strconv.Atoi(code)
	if err != nil || len(code) != 3 {
		return 0
	}
	return n
}

// anyInChain reports whether f holds for err or an error it wraps,
// through errors.Join's too.
func anyInChain(err error, f func(error) bool) bool {
	for err != nil {
		if f(err) {
			return true
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if anyInChain(e, f) {
					return true
				}
			}
			return false
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		default:
			return false
		}
	}
	return false
}
