package httpsink

import "context"

// Drop and refusal reasons passed to Observer.
const (
	// ReasonHTTP4xx: the endpoint refused the content (a 4xx that is
	// neither 429 nor endpoint-level, see StatusError.Permanent); the lines
	// would fail forever, so they are dropped.
	ReasonHTTP4xx = "http_4xx"
	// ReasonEndpointRefused: the endpoint refuses us whatever we send
	// (StatusError.EndpointRefused) and no spool is configured to keep the
	// lines, so they are handed back. With a spool they are spooled
	// (Observer.Spooled) and never dropped.
	ReasonEndpointRefused = "http_endpoint_refused"
	// ReasonSpoolFull: delivery failed and the spool refused the lines
	// because it is at its size limit.
	ReasonSpoolFull = "spool_full"
	// ReasonSpoolError: delivery failed and writing the spool failed.
	ReasonSpoolError = "spool_error"
	// ReasonNoSpool: delivery failed and no spool is configured.
	ReasonNoSpool = "no_spool"
	// ReasonShutdown: Send was called after Shutdown.
	ReasonShutdown = "shutdown"
)

// Observer receives delivery counts; the exporter implements it with its
// metrics. Methods are called from several goroutines.
type Observer interface {
	// Sent counts lines the endpoint acknowledged on the live path.
	Sent(ctx context.Context, n int)
	// Spooled counts lines appended to the spool.
	Spooled(ctx context.Context, n int)
	// Replayed counts spooled lines the endpoint acknowledged.
	Replayed(ctx context.Context, n int)
	// Dropped counts lines that are gone for good (content refused by the
	// endpoint).
	Dropped(ctx context.Context, n int, reason string)
	// Refused counts lines handed back to the caller with an error because
	// they could be neither delivered nor spooled.
	Refused(ctx context.Context, n int, reason string)
	// SpoolSize reports the spool's pending (unacknowledged) bytes after
	// they may have changed.
	SpoolSize(bytes int64)
	// Quarantined counts spooled lines that were not valid events (torn,
	// garbage, bytes inserted) and were set aside instead of sent.
	Quarantined(ctx context.Context, n int)
	// AdoptedNotKept counts spool files adopted at start (lines, no
	// sidecar) whose file as found could not be kept under a second name:
	// replay trims their lines once sent, keeping no copy.
	AdoptedNotKept(ctx context.Context, n int)
}

// UnkeptObserver is an Observer that also counts, among the lines
// Quarantined counts, those the quarantine file could not take (full, or
// not a regular file): passed over and kept nowhere. A summary that says
// where damaged lines went needs it.
type UnkeptObserver interface {
	Observer
	NotKept(ctx context.Context, n int)
}

// NopObserver ignores everything.
type NopObserver struct{}

var _ Observer = NopObserver{}

func (NopObserver) Sent(context.Context, int)            {}
func (NopObserver) Spooled(context.Context, int)         {}
func (NopObserver) Replayed(context.Context, int)        {}
func (NopObserver) Dropped(context.Context, int, string) {}
func (NopObserver) Refused(context.Context, int, string) {}
func (NopObserver) SpoolSize(int64)                      {}
func (NopObserver) Quarantined(context.Context, int)     {}
func (NopObserver) AdoptedNotKept(context.Context, int)  {}
