package httpsink

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.uber.org/zap"

	"github.com/sandboxaudit/sandboxaudit/internal/plural"
	"github.com/sandboxaudit/sandboxaudit/internal/spool"
)

// ErrShutdown is returned by Send after Shutdown began.
var ErrShutdown = errors.New("the HTTP sink is shut down")

// RefusedError says that lines could be neither delivered nor spooled and
// are handed back to the caller. It is retryable (not
// consumererror.Permanent) because a later attempt may succeed once the
// spool drains; whether anything retries is the caller's choice. (The
// sandboxaudit exporter does not: its file sink has already written the
// batch, so it returns the error upstream, or with its queue on the queue
// logs and drops the batch; both are counted.)
type RefusedError struct {
	// Reason is ReasonSpoolFull, ReasonSpoolError, ReasonNoSpool,
	// ReasonEndpointRefused or ReasonShutdown.
	Reason string
	// Done is how many leading lines of the batch are settled (delivered,
	// or dropped with a permanent error); Remaining is how many trailing
	// lines were refused. A caller that resends may resend only the last
	// Remaining lines.
	Done, Remaining int
	// Err is the delivery or spool error behind the refusal.
	Err error
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s neither delivered nor spooled (%s): %v", plural.Count(e.Remaining, "line"), e.Reason, e.Err)
}

func (e *RefusedError) Unwrap() error { return e.Err }

// Sink delivers canonical JSONL lines over HTTP, spooling what cannot be
// delivered. Send is safe for concurrent use.
type Sink struct {
	set    Settings
	poster poster
	spool  *spool.Spool // nil: no spool

	// stopCtx is cancelled by Shutdown: it ends retry waits, in-flight
	// requests and the replayer, so shutdown never waits for a backoff.
	stopCtx context.Context
	stop    context.CancelFunc
	// abortCtx is cancelled when Shutdown's ctx ends first: it also ends
	// the replay posts still in their grace (replayStopGrace).
	abortCtx context.Context
	abort    context.CancelFunc
	wake     chan struct{} // cap 1: "the spool grew"

	mu           sync.Mutex
	closed       bool
	started      bool
	inflight     sync.WaitGroup
	replayerDone chan struct{}

	stateMu   sync.Mutex
	down      bool      // the last delivery attempt failed
	notBefore time.Time // the server's Retry-After, for the replayer
	// retryCut: this outage already logged a Retry-After cut to the
	// longest pause; the replayer meets one every round.
	retryCut bool

	// ahead holds event-format lines the endpoint answered past the first
	// one it did not, with their outcome (see replayEvents); Start loads it
	// before the replayer starts, and after that only the replayer uses it.
	ahead map[lineKey]outcome
	// probe: the last replay round failed without settling a line, so the
	// next starts with one post, not a window (replayer only).
	probe bool
}

// New validates set and returns a Sink. On success the Sink owns set.Spool
// and closes it in Shutdown.
func New(set Settings) (*Sink, error) {
	set, err := set.withDefaults()
	if err != nil {
		return nil, err
	}
	stopCtx, stop := context.WithCancel(context.Background())
	abortCtx, abort := context.WithCancel(context.Background())
	return &Sink{
		set:      set,
		poster:   newPoster(set),
		spool:    set.Spool,
		stopCtx:  stopCtx,
		stop:     stop,
		abortCtx: abortCtx,
		abort:    abort,
		wake:     make(chan struct{}, 1),
	}, nil
}

// Start launches the background replayer when a spool is configured. The
// first round runs at once, so lines spooled by an earlier run go out
// first. ctx is only used for its values, not its cancellation (collector
// Start contexts end when Start returns).
func (s *Sink) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrShutdown
	}
	if s.started {
		return errors.New("the HTTP sink is already started")
	}
	s.started = true
	if s.spool == nil {
		return nil
	}
	s.logRecovery(s.spool.Path(), s.spool.Recovery())
	s.watchDamage(s.spool)
	s.observeSpoolSize()
	s.loadAhead()
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	context.AfterFunc(s.stopCtx, cancel)
	s.replayerDone = make(chan struct{})
	go s.runReplayer(rctx)
	return nil
}

// Shutdown stops the replayer and lets in-flight Sends finish (their
// undelivered lines go to the spool), then closes the spool. Requests in
// flight are cancelled, but for replay posts in event format, which may
// land within replayStopGrace. If ctx ends first those are cancelled too,
// and Shutdown returns ctx's error: a post cut short may be sent again by
// the next run. Either way it first waits for the cancelled requests to
// end (at once), so nothing reaches the endpoint after it returns; without
// a spool their lines are then back with the callers. With one, in-flight
// work may be held by the disk (an fsync that does not return), which
// nothing can cancel, so Shutdown does not wait for it: a Send still
// reports its lines taken only once the spool holds them durably, and the
// spool is closed when the last of that work ends.
func (s *Sink) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	done := s.replayerDone
	s.mu.Unlock()

	s.stop()
	finished := make(chan struct{})
	go func() {
		s.inflight.Wait()
		if done != nil {
			<-done
		}
		close(finished)
	}()
	select {
	case <-finished:
		s.abort() // nothing is left to end; releases abortCtx
		if s.spool != nil {
			return s.spool.Close() // names the spool
		}
		return nil
	case <-ctx.Done():
	}
	s.abort() // ends the posts still in their grace, if any
	err := fmt.Errorf("in-flight deliveries cut short: %w", ctx.Err())
	if s.spool == nil {
		<-finished
		return err
	}
	go s.closeSpoolAfter(finished)
	s.poster.inFlight.wait()
	return err
}

// closeSpoolAfter closes the spool once the work still using it, which
// Shutdown stopped waiting for, has ended.
func (s *Sink) closeSpoolAfter(finished <-chan struct{}) {
	<-finished
	if err := s.spool.Close(); err != nil {
		s.set.Logger.Error("closing the spool after shutdown failed", zap.String("spool", s.spool.Path()), zap.Error(err))
	}
}

// enter registers an in-flight Send; false after Shutdown began.
func (s *Sink) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.inflight.Add(1)
	return true
}

// Send delivers lines (whole canonical lines, each ending in "\n"; n is
// their number, 0 to let the sink count them).
//
//   - While the spool holds lines (or the endpoint is known to be down) the
//     lines are appended to the spool, so nothing overtakes spooled lines,
//     and Send returns nil; the replayer delivers them.
//   - Otherwise they are POSTed, without live retries (the replayer is
//     the retry). What cannot be delivered (a failed request, ctx done,
//     Shutdown) is appended to the spool and Send returns nil.
//   - Without a spool, failed requests are retried per Settings.Retry.
//   - When the endpoint refuses us (StatusError.EndpointRefused) the
//     lines are spooled at
//     once, without retries, the endpoint is marked down and an ERROR log
//     names the status; Send returns nil.
//   - Lines whose content the endpoint refuses (any other 4xx but 429)
//     are dropped, counted and logged; Send returns a
//     consumererror.Permanent naming the status and the response's
//     length.
//   - Lines that can be neither delivered nor spooled (no spool, spool
//     full or failing) are returned as a retryable *RefusedError.
func (s *Sink) Send(ctx context.Context, lines []byte, n int) error {
	if len(lines) == 0 {
		return nil
	}
	if n <= 0 {
		n = countLines(lines)
	}
	if !s.enter() {
		s.set.Observer.Refused(ctx, n, ReasonShutdown)
		return &RefusedError{Reason: ReasonShutdown, Remaining: n, Err: ErrShutdown}
	}
	defer s.inflight.Done()

	if s.spool != nil && (s.isDown() || s.spool.Pending()) {
		if err := s.spoolLines(ctx, lines, n, nil); err != nil {
			return &RefusedError{Reason: spoolReason(err), Remaining: n, Err: err}
		}
		return nil
	}

	sendCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.stopCtx, cancel)()
	d := s.deliver(sendCtx, lines)
	if d.acked > 0 {
		s.set.Observer.Sent(ctx, d.acked)
	}
	var permErr error
	if d.permErr != nil {
		permErr = consumererror.NewPermanent(d.permErr)
	}
	if d.rest == nil {
		return permErr
	}
	if s.spool == nil {
		return s.handBack(ctx, &d, n)
	}
	return s.spoolRest(ctx, &d, n, permErr)
}

// handBack refuses the lines d did not deliver, without a spool to keep
// them: the caller gets them back in a *RefusedError.
func (s *Sink) handBack(ctx context.Context, d *delivery, n int) error {
	reason := ReasonNoSpool
	if refusal := endpointRefusal(d.err); refusal != nil {
		reason = ReasonEndpointRefused
		s.logEndpointRefused(refusal, "live", zap.Int("lines", d.restN),
			zap.String("outcome", "no spool: handed back to the caller"))
	} else {
		s.set.Logger.Warn("HTTP delivery failed and no spool is configured; lines handed back to the caller",
			zap.String("endpoint", s.poster.safeURL), zap.Int("lines", d.restN), zap.Error(d.err))
	}
	s.set.Observer.Refused(ctx, d.restN, reason)
	// permErr is not wrapped: wrapping would make the whole error
	// permanent and the refused lines would be dropped upstream.
	return &RefusedError{Reason: reason, Done: n - d.restN, Remaining: d.restN, Err: joinText(d.err, d.permErr)}
}

// spoolRest spools the lines d did not deliver, marking the endpoint
// down when it said so; permErr is what Send returns once they are kept.
func (s *Sink) spoolRest(ctx context.Context, d *delivery, n int, permErr error) error {
	refusal := endpointRefusal(d.err)
	if refusal != nil {
		s.logEndpointRefused(refusal, "live", zap.Int("lines", d.restN),
			zap.String("outcome", "spooled; replayed with backoff until the endpoint accepts them"))
	}
	if ctx.Err() == nil && s.stopCtx.Err() == nil && (refusal != nil || !d.notBefore.IsZero()) {
		// The endpoint refused us or named when it will be back: the
		// replayer waits as told. After any other failure it tries again
		// at once (one lost connection is no outage) and marks the
		// endpoint down if that fails too. Either way later Sends go to
		// the spool while it holds lines, so order is kept.
		s.markDown(d.err, d.notBefore)
	}
	if err := s.spoolLines(ctx, d.rest, d.restN, d.err); err != nil {
		return &RefusedError{Reason: spoolReason(err), Done: n - d.restN, Remaining: d.restN, Err: joinText(err, d.permErr)}
	}
	return permErr
}

// spoolLines appends lines to the spool. The write uses a context that
// ctx's cancellation cannot end: a caller giving up is exactly when the
// lines must be kept. cause is the delivery error, for the log.
func (s *Sink) spoolLines(ctx context.Context, lines []byte, n int, cause error) error {
	err := s.spool.Append(context.WithoutCancel(ctx), lines)
	s.observeSpoolSize()
	if err != nil {
		reason := spoolReason(err)
		s.set.Observer.Refused(ctx, n, reason)
		s.set.Logger.Error("HTTP delivery failed and the spool refused the lines; handed back to the queue",
			zap.String("reason", reason), zap.Int("lines", n), zap.Int64("spool_bytes", s.spool.Size()),
			zap.NamedError("spool_error", err), zap.NamedError("delivery_error", cause))
		return fmt.Errorf("spool %s: %w", plural.Count(n, "line"), err)
	}
	s.set.Observer.Spooled(ctx, n)
	s.set.Logger.Debug("lines spooled", zap.Int("lines", n), zap.NamedError("delivery_error", cause))
	s.kick()
	return nil
}

func spoolReason(err error) string {
	if errors.Is(err, spool.ErrFull) {
		return ReasonSpoolFull
	}
	return ReasonSpoolError
}

// joinText adds other's text to err without wrapping it (see Send).
func joinText(err, other error) error {
	if other == nil {
		return err
	}
	return fmt.Errorf("%w (also: %v)", err, other)
}

// endpointRefusal returns err's *StatusError when it says the endpoint
// refuses us (StatusError.EndpointRefused), else nil.
func endpointRefusal(err error) *StatusError {
	var se *StatusError
	if errors.As(err, &se) && se.EndpointRefused() {
		return se
	}
	return nil
}

// logEndpointRefused says, at ERROR, that the endpoint refuses us: the
// operator has to act (token, path, proxy). It names the status and the
// response's length, never the request's headers or body, nor the
// response body (unless Settings.ShowResponseBody).
func (s *Sink) logEndpointRefused(se *StatusError, path string, fields ...zap.Field) {
	s.set.Logger.Error(refusedMessage(se),
		append(statusFields(se, zap.String("reason", ReasonEndpointRefused), zap.String("path", path)), fields...)...)
}

// refusedMessage says what to fix when the endpoint refuses us: the
// status alone (a 400, a 413) would point at the lines.
func refusedMessage(se *StatusError) string {
	switch {
	case se.WantsTLS:
		return "HTTP endpoint answers that it is a TLS port: write it https://"
	case se.LimitBelowEvents:
		return "HTTP endpoint's body limit is below a single small line (413): raise it; the line is kept and retried"
	}
	return "HTTP endpoint refuses the requests whatever they hold (check credentials, path and proxy)"
}

// statusFields describe an error answer for a log line.
func statusFields(se *StatusError, more ...zap.Field) []zap.Field {
	f := append(make([]zap.Field, 0, 5+len(more)), zap.String("endpoint", se.URL), zap.Int("status", se.Code),
		zap.Int64("response_bytes", se.BodyBytes))
	if se.Excerpt != "" {
		f = append(f, zap.String("response_redacted", se.Excerpt))
	}
	return append(f, more...)
}

// dropped records lines whose content the endpoint refused.
func (s *Sink) dropped(ctx context.Context, n int, se *StatusError, path string) {
	reason := ReasonHTTP4xx
	s.set.Observer.Dropped(ctx, n, reason)
	s.set.Logger.Error("HTTP endpoint refused lines permanently; dropped (not retried, not spooled)",
		statusFields(se, zap.Int("lines", n), zap.String("reason", reason), zap.String("path", path))...)
}

func (s *Sink) observeSpoolSize() {
	s.set.Observer.SpoolSize(s.spool.Size())
}

// kick wakes the replayer without blocking.
func (s *Sink) kick() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *Sink) isDown() bool {
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	return s.down
}

func (s *Sink) markDown(cause error, notBefore time.Time) {
	// A Retry-After is honoured up to the replayer's longest pause: one
	// answer asking for a year (parseRetryAfter allows that much) must not
	// hold every later event in the spool that long.
	asked := notBefore
	limit := time.Now().Add(s.longestPause())
	cut := notBefore.After(limit)
	if cut {
		notBefore = limit
	}
	s.stateMu.Lock()
	was := s.down
	s.down = true
	if notBefore.After(s.notBefore) {
		s.notBefore = notBefore
	}
	firstCut := cut && !s.retryCut
	s.retryCut = s.retryCut || cut
	s.stateMu.Unlock()
	if firstCut {
		s.set.Logger.Warn("HTTP endpoint asked to wait longer than the replayer's longest pause (retry_on_failure.max_interval); retrying after that",
			zap.String("endpoint", s.poster.safeURL), zap.Duration("asked", time.Until(asked).Round(time.Second)),
			zap.Duration("retrying_in", s.longestPause()))
	}
	// An endpoint refusal has its own ERROR line.
	if !was && endpointRefusal(cause) == nil {
		s.set.Logger.Warn("HTTP endpoint unavailable; spooling until it answers again",
			zap.String("endpoint", s.poster.safeURL), zap.Error(cause))
	}
}

func (s *Sink) markUp() {
	s.stateMu.Lock()
	was := s.down
	s.down = false
	s.notBefore = time.Time{}
	s.retryCut = false
	s.stateMu.Unlock()
	if was {
		s.set.Logger.Info("HTTP endpoint answers again; spool replayed",
			zap.String("endpoint", s.poster.safeURL))
	}
}

func (s *Sink) waitUntil() time.Time {
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	return s.notBefore
}

// logAdopted says that opening the spool adopted a file without a
// sidecar, and, as an ERROR that is counted, when the file as found was not
// kept: replay then trims its lines once sent, and no copy is left.
func (s *Sink) logAdopted(path string, r spool.Recovery) {
	if !r.Adopted {
		return
	}
	why := "every line is a valid audit event, so it is taken as this exporter's spool"
	if r.AdoptAsked {
		why = "it is taken as a spool, as --adopt asks"
	}
	adopted := "spool had lines but no .offset sidecar; " + why + " and replayed from its start (duplicates possible). "
	switch {
	case r.AdoptedKeptErr != nil && r.AdoptedKept == "":
		s.set.Logger.Error(adopted+"The file as found could not be kept under a second name: replay trims its lines once sent, and no copy is left. "+
			"Delete the .adopted- copies you know were the spool to make room",
			zap.String("spool", path), zap.NamedError("not_kept", r.AdoptedKeptErr))
		s.set.Observer.AdoptedNotKept(context.Background(), 1)
	default:
		s.set.Logger.Warn(adopted+"The file as found is kept under a second name; delete it once you know it was the spool",
			zap.String("spool", path), zap.String("kept_as", r.AdoptedKept), zap.NamedError("not_kept", r.AdoptedKeptErr))
	}
}

// logRecovery says what opening the spool repaired, if anything.
func (s *Sink) logRecovery(path string, r spool.Recovery) {
	switch {
	case r.TornBytes > 0 && r.TornNotKept != nil:
		s.set.Logger.Warn("spool had an incomplete last line (crash mid-write) that could not be set aside; closed with a newline, so replay quarantines it, never sends it",
			zap.String("spool", path), zap.Int64("bytes", r.TornBytes), zap.NamedError("not_kept", r.TornNotKept))
	case r.TornBytes > 0:
		s.set.Logger.Warn("spool had an incomplete last line (crash mid-write); set aside, not replayed",
			zap.String("spool", path), zap.Int64("bytes", r.TornBytes), zap.String("kept_in", r.TornPath))
	}
	s.logAdopted(path, r)
	if r.OffsetProblem != "" {
		s.set.Logger.Warn("spool offset not usable as stored; replay resumes from a safe offset (duplicates possible)",
			zap.String("spool", path), zap.String("problem", r.OffsetProblem), zap.Int64("resume_offset", r.ResumeOffset))
	}
	for _, changed := range r.MadePrivate {
		s.set.Logger.Warn("spool file was readable by others or owned by another user; made 0600 and this user's where the file system allows",
			zap.String("spool", path), zap.String("changed", changed))
	}
	if r.OwnerSocketSkipped != nil {
		s.set.Logger.Warn("spool owner socket not bound; the locks on the spool's files still keep a second collector out",
			zap.String("spool", path), zap.Error(r.OwnerSocketSkipped))
	}
}
