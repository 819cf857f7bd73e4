package sandboxauditexporter // import "github.com/sandboxaudit/sandboxaudit/exporter"

import (
	"context"
	"errors"
	"fmt"
	"os"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configtls"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/exporter/internal/metadata"
	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
	"github.com/sandboxaudit/sandboxaudit/internal/httpsink"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/payloadpolicy"
	"github.com/sandboxaudit/sandboxaudit/internal/redact"
	"github.com/sandboxaudit/sandboxaudit/internal/spanmap"
	"github.com/sandboxaudit/sandboxaudit/internal/spool"
)

// auditExporter turns spans and log records into audit events and writes
// every event to every configured sink, each under its own payload policy.
type auditExporter struct {
	cfg       *Config
	set       exporter.Settings
	logger    *zap.Logger
	telemetry *telemetry
	mapper    *spanmap.Mapper
	eventBufs eventPool
	// starts drops the second copy of a start event (write-ahead), whichever
	// signal brings it.
	starts *startIDs

	// Each sink's policies are resolved once: the config never changes.
	filePolicy *payloadpolicy.Table
	httpPolicy *payloadpolicy.Table

	// Created in start; nil when the sink is not configured.
	file *fileTarget
	http *httpTarget
	// sealer keeps the file sink's Merkle trees; nil without integrity.
	sealer *integrity.Sealer
	// files is the file sinks of the collector's other exporters.
	files *fileClaims
}

func newAuditExporter(cfg *Config, set exporter.Settings, files *fileClaims) (*auditExporter, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, fmt.Errorf("sandboxaudit exporter: telemetry: %w", err)
	}
	e := &auditExporter{
		cfg:       cfg,
		set:       set,
		logger:    set.Logger,
		telemetry: newTelemetry(tb, set.ID),
		// One Mapper per component: it holds the per-session seq
		// counters for spans that do not carry their seqs.
		mapper: spanmap.NewMapper(0).WithMaxLineBytes(cfg.MaxLineBytes),
		starts: newStartIDs(),
		files:  files,
	}
	e.starts.waiting = func() {
		e.logger.Debug("Waiting for another request's write of the same events")
	}
	if fc := cfg.File.Get(); fc != nil {
		if e.filePolicy, err = newSinkPolicies(cfg, fc.PayloadPolicy); err != nil {
			return nil, fmt.Errorf("sandboxaudit exporter: file: %w", err)
		}
		warnRedactionOff(e.logger, sinkFile, e.filePolicy)
	}
	if hc := cfg.HTTP.Get(); hc != nil {
		if e.httpPolicy, err = newSinkPolicies(cfg, hc.PayloadPolicy); err != nil {
			return nil, fmt.Errorf("sandboxaudit exporter: http: %w", err)
		}
		warnRedactionOff(e.logger, sinkHTTP, e.httpPolicy)
	}
	return e, nil
}

// Start opens the sinks. On error everything opened so far is closed again.
func (e *auditExporter) Start(ctx context.Context, host component.Host) (err error) {
	defer func() {
		if err != nil {
			err = errors.Join(err, e.closeSinks(ctx))
		}
	}()
	if err := e.loadTLS(ctx); err != nil {
		return err
	}
	if err := e.checkQueueStorage(host); err != nil {
		return err
	}
	if fc := e.cfg.File.Get(); fc != nil {
		if err := e.startFile(ctx, host, fc); err != nil {
			return err
		}
	}
	if hc := e.cfg.HTTP.Get(); hc != nil {
		if err := e.startHTTPSink(ctx, host, hc); err != nil {
			return err
		}
	}
	if fc := e.cfg.File.Get(); fc != nil {
		// Again, for this exporter's own spool reached through a link.
		if err := checkFileIsNoSpool(fc); err != nil {
			return err
		}
	}
	return nil
}

// startFile checks the audit file's path, starts its sealer when it has
// integrity, and opens the file sink.
func (e *auditExporter) startFile(ctx context.Context, host component.Host, fc *FileConfig) error {
	// First, so that a value the process cannot honour, or a path
	// another exporter rotates otherwise, makes nothing.
	maxOpen, err := e.claimFile(fc)
	if err != nil {
		return err
	}
	// Before the sealer, which would sign another exporter's spool
	// and leave its sidecars there.
	if err := checkFileIsNoSpool(fc); err != nil {
		return err
	}
	// Here, not in Validate: `validate` may run as another user, or on
	// a machine without the directory.
	if err := filesink.CheckWritable(fc.Path, fc.Rotation.HasValue()); err != nil {
		return fmt.Errorf("file::path: %w", err)
	}
	opts := filesink.Options{Path: fc.Path, Fsync: fc.Fsync, MaxOpenFiles: maxOpen, Rotation: e.rotation(fc), OnTornTail: e.logTornTail,
		OnCutBack: e.logCutBack}
	if ic := fc.Integrity.Get(); ic != nil {
		if e.sealer, err = e.startIntegrity(ctx, host, fc, ic); err != nil {
			return err
		}
		e.hookSealer(&opts)
	}
	sink, err := filesink.New(opts)
	if err != nil {
		return fmt.Errorf("file: %w", err)
	}
	e.file = newFileTarget(sink, fc.Path, e.filePolicy)
	e.warnLooseMode(fc.Path)
	return nil
}

// hookSealer has the file sink tell e.sealer of each write, new file,
// rotation and retired segment.
func (e *auditExporter) hookSealer(opts *filesink.Options) {
	// A new file's first checkpoint, of 0 lines, is signed before
	// its first line: a collector killed before the next round
	// leaves history that the file extends.
	opts.OnWrite, opts.BeforeCreate = e.sealer.Wrote, e.sealer.SealNew
	// A file moved away under the sink took acknowledged lines with it.
	opts.OnReplaced = e.sealer.Replaced
	// A file another collector's sink rotated is a segment of the log.
	opts.OnRotatedByOther, opts.OnOpened = e.sealer.RotatedByOther, e.sealer.Opened
	if opts.Rotation == nil {
		return
	}
	// Retention signs what it removes before it removes it, and
	// counts only the log's own segments.
	opts.Rotation.BeforeRemove, opts.Rotation.Holds = e.sealer.Retire, e.sealer.Holds
	// A rotation on time, with no batch, is sealed too.
	logRotation, sealer := opts.Rotation.OnRotate, e.sealer
	opts.Rotation.OnRotate = func(path, segment string) {
		logRotation(path, segment)
		sealer.Rotated(path, segment)
	}
}

// startHTTPSink checks the HTTP sink's spool and starts the sink.
func (e *auditExporter) startHTTPSink(ctx context.Context, host component.Host, hc *HTTPConfig) error {
	if sc := hc.Spool.Get(); sc != nil {
		if err := checkSpoolIsNoSealedFile(sc); err != nil {
			return err
		}
	}
	target, err := e.startHTTP(ctx, host, hc)
	if err != nil {
		return err
	}
	e.http = target
	if e.file != nil {
		e.file.ids, e.http.ids = newSinkIDs(), newSinkIDs()
	}
	return nil
}

// loadTLS loads the TLS files of the HTTP sink and of each witness before
// a sink opens, so that a file that cannot load refuses the start with
// nothing made on disk (the audit file's directories, locks, a spool),
// and names its key; ToClient's error does not.
func (e *auditExporter) loadTLS(ctx context.Context) error {
	var errs []error
	if hc := e.cfg.HTTP.Get(); hc != nil {
		errs = append(errs, loadClientTLS(ctx, "http::", &hc.ClientConfig.TLS))
	}
	if fc := e.cfg.File.Get(); fc != nil {
		if ic := fc.Integrity.Get(); ic != nil {
			for i := range ic.Witnesses {
				errs = append(errs, loadClientTLS(ctx, fmt.Sprintf("file: integrity: witnesses::%d::", i), &ic.Witnesses[i].ClientConfig.TLS))
			}
		}
	}
	return errors.Join(errs...)
}

// loadClientTLS loads one client's TLS files, each error naming its key
// after prefix. Each file is read first, as the receiver does: the
// loader's error names neither the key nor, once, the path. With insecure
// and no CA the loader reads none, and neither does this.
func loadClientTLS(ctx context.Context, prefix string, tls *configtls.ClientConfig) error {
	if tls.Insecure && tls.CAFile == "" && tls.CAPem == "" {
		return nil
	}
	if err := fsutil.CheckReadable(clientTLSFiles(prefix, tls)); err != nil {
		return err
	}
	if _, err := tls.LoadTLSConfig(ctx); err != nil {
		return fmt.Errorf("%stls: %w", prefix, err)
	}
	return nil
}

// checkQueueStorage refuses a sending_queue storage extension that does
// not run, naming the key. exporterhelper finds out only after this
// exporter's Start, once the sinks had made their files.
func (e *auditExporter) checkQueueStorage(host component.Host) error {
	qc := e.cfg.QueueConfig.Get()
	if qc == nil || qc.StorageID == nil {
		return nil
	}
	if _, ok := host.GetExtensions()[*qc.StorageID]; !ok {
		return fmt.Errorf("sending_queue::storage: the extension %s is not running (list it under service::extensions)", qc.StorageID)
	}
	return nil
}

func (e *auditExporter) startHTTP(ctx context.Context, host component.Host, hc *HTTPConfig) (*httpTarget, error) {
	client, err := hc.ClientConfig.ToClient(ctx, host.GetExtensions(), e.set.TelemetrySettings)
	if err != nil {
		return nil, fmt.Errorf("http: %w", err)
	}
	set := httpsink.Settings{
		Client:   client,
		Endpoint: hc.ClientConfig.Endpoint,
		Format:   hc.Format,
		Retry:    e.cfg.RetryConfig,
		Logger:   e.logger,
		Observer: httpObserver{t: e.telemetry},

		ShowResponseBody: hc.DebugResponseBody,
		RedactValues:     clientSecretValues(&hc.ClientConfig),
	}
	if sc := hc.Spool.Get(); sc != nil {
		e.warnSpoolBelowLine(sc)
		// No line the sink spools is over max_line_bytes, so a longer one
		// is damage, passed over unread; never below the default, so that
		// lowering max_line_bytes does not quarantine lines spooled before.
		sp, err := spool.Open(ctx, spool.Options{Path: sc.Path, MaxSize: sc.MaxSize,
			MaxLineBytes: max(e.cfg.MaxLineBytes, defaultMaxLineBytes),
			Check:        spool.CanonicalEvent, AdoptValid: true})
		if err != nil {
			return nil, fmt.Errorf("http::spool::path: %w", err)
		}
		set.Spool = sp
		set.ReplayInterval = sc.ReplayInterval
	}
	sink, err := httpsink.New(set)
	if err != nil {
		if set.Spool != nil {
			err = errors.Join(err, set.Spool.Close())
		}
		return nil, fmt.Errorf("http: %w", err)
	}
	if err := sink.Start(ctx); err != nil {
		return nil, fmt.Errorf("http: %w", errors.Join(err, sink.Shutdown(ctx)))
	}
	return newHTTPTarget(sink, e.httpPolicy, e.telemetry), nil
}

// warnLooseMode warns once about an existing audit file others may read:
// the sink creates files 0600 but leaves the mode of one it finds alone
// (another writer, the Python sink, may share it on purpose).
func (e *auditExporter) warnLooseMode(path string) {
	fi, err := os.Lstat(path)
	if err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o077 != 0 {
		e.logger.Warn("The audit file can be read or written by users other than its owner; the file sink creates audit files 0600 but leaves an existing file's mode as it is",
			zap.String("path", path), zap.String("mode", fi.Mode().Perm().String()))
	}
}

// Shutdown closes the sinks; safe without Start. Both sinks' close is
// idempotent, so a start that failed and cleaned up may be shut down again.
func (e *auditExporter) Shutdown(ctx context.Context) error {
	err := e.closeSinks(ctx)
	e.telemetry.tb.Shutdown()
	return err
}

func (e *auditExporter) closeSinks(ctx context.Context) error {
	e.files.release(e.set.ID)
	var errs []error
	if e.file != nil {
		if err := e.file.sink.Close(); err != nil {
			errs = append(errs, fmt.Errorf("sandboxaudit exporter: file: %w", err))
		}
	}
	if e.sealer != nil {
		// After the sink: the final checkpoint covers every line written.
		errs = append(errs, closeSealer(ctx, e.sealer))
		e.sealer = nil
	}
	if e.http != nil {
		if err := e.http.sink.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("sandboxaudit exporter: shut down http sink: %w", err))
		}
	}
	return errors.Join(errs...)
}

// writeEvents hands the batch to every sink. A sink's error does not keep
// the other sink from getting the batch; the errors are returned joined.
//
// A start event whose id was written recently is left out
// (docs/guarantees.md, "Duplicates"), and one whose other copy is being
// written waits for that write; when the write fails, the ids it held are
// let go so a retry writes them.
func (e *auditExporter) writeEvents(ctx context.Context, events []auditevent.Event) error {
	m, err := e.checkLines(ctx, events)
	if err != nil {
		return err
	}
	events, flight, dups, err := e.starts.filter(ctx, events)
	if err != nil {
		return err
	}
	if dups > 0 {
		e.logger.Debug("Left out start events already written", zap.Int("events", dups))
	}
	// err stays errSinkPanicked if a sink panics: done then lets the ids
	// go, so the client's resend is written, and the panic goes on.
	err = errSinkPanicked
	defer func() { e.starts.done(flight, err) }()
	err = e.writeFiltered(ctx, events, m)
	return err
}

// errSinkPanicked ends the flight of a write a sink panicked in.
var errSinkPanicked = errors.New("a sink panicked")

func (e *auditExporter) writeFiltered(ctx context.Context, events []auditevent.Event, m *measured) error {
	if len(events) == 0 {
		return nil
	}
	// Events a sink already took (a client resending a batch whose first
	// attempt failed only in the other sink) are not given to it again.
	fileEvents, inFile := events, 0
	httpEvents, inHTTP := events, 0
	if e.file != nil && e.http != nil {
		ids := eventIDs(events, nil)
		fileEvents, inFile = e.file.ids.unwritten(events, ids)
		httpEvents, inHTTP = e.http.ids.unwritten(events, ids)
		if inFile+inHTTP > 0 {
			e.logger.Debug("Left out events a sink already holds", zap.Int("file", inFile), zap.Int("http", inHTTP))
		}
	}
	switch {
	case e.file != nil && e.http != nil && inFile == 0 && inHTTP == 0 && e.encodeOnce():
		return e.writeBothEncodedOnce(ctx, events, m)
	case e.file != nil && e.http != nil:
		// The sinks only read events (policies apply while encoding), so
		// they run side by side: the HTTP round trip overlaps the fdatasync.
		var httpErr error
		done := make(chan struct{})
		go func() {
			defer close(done)
			httpErr = e.http.write(ctx, httpEvents, m)
		}()
		fileErr := e.file.write(ctx, fileEvents, e.telemetry, m)
		<-done
		return errors.Join(fileErr, httpErr)
	case e.file != nil:
		return e.file.write(ctx, fileEvents, e.telemetry, m)
	case e.http != nil:
		return e.http.write(ctx, events, m)
	}
	return nil
}

// encodeOnce reports whether both sinks get the same bytes: their
// policies resolve the same for every op and the file path is not a
// template (which groups lines by session).
func (e *auditExporter) encodeOnce() bool {
	return !e.file.templated && e.filePolicy.Equal(e.httpPolicy)
}

// writeBothEncodedOnce encodes the batch once and hands the same read-only
// lines to both sinks, side by side.
func (e *auditExporter) writeBothEncodedOnce(ctx context.Context, events []auditevent.Event, m *measured) error {
	bp := e.file.bufs.get()
	defer e.file.bufs.put(bp)
	var cuts redact.Counts
	*bp = appendEvents((*bp)[:0], e.filePolicy, events, &cuts, m)
	e.telemetry.redacted(ctx, &cuts)
	lines := *bp
	var httpErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		httpErr = e.http.sendLines(ctx, events, lines)
	}()
	fileErr := e.file.writeLines(ctx, events, lines, e.telemetry)
	<-done
	return errors.Join(fileErr, httpErr)
}

// newSinkPolicies resolves one sink's effective policy per op.
func newSinkPolicies(cfg *Config, sink auditevent.PolicyOverride) (*payloadpolicy.Table, error) {
	return payloadpolicy.NewTable(auditevent.PolicySet{Default: cfg.PayloadPolicy, ByOp: cfg.PayloadPolicyByOp, Sink: sink})
}

// warnRedactionOff says, once at start, that a sink writes secrets in
// clear for the ops whose policy turns redaction off.
func warnRedactionOff(logger *zap.Logger, sink string, t *payloadpolicy.Table) {
	if off := t.RedactionOff(); len(off) > 0 {
		logger.Warn("payload_policy redact is off: credentials in commands, environment, errors and output are written to the audit trail in clear",
			zap.String("sink", sink), zap.Strings("ops", off))
	}
}

// allRefused is the error of a batch whose sandbox items were all refused:
// permanent, and InvalidArgument so that the OTLP receiver answers 400
// (a bare permanent error is a 500, the server's fault), so that the
// client (a DeliverySync write-ahead caller among them) learns that
// nothing was recorded, and does not resend it. A batch with anything
// written succeeds: an exporter cannot answer OTLP's partial success, and
// failing it would report the written events as dropped.
// The cause stays reachable by errors.As: a receiver upstream answers an
// event over max_line_bytes with a 413 naming it.
func allRefused(msg string, cause error) error {
	return consumererror.NewPermanent(&refusedError{msg: msg, cause: cause})
}

// refusedError is allRefused's error.
type refusedError struct {
	msg   string
	cause error
}

func (e *refusedError) Error() string { return e.msg }
func (e *refusedError) Unwrap() error { return e.cause }

// GRPCStatus makes the OTLP receiver answer 400 (InvalidArgument).
func (e *refusedError) GRPCStatus() *status.Status { return status.New(codes.InvalidArgument, e.msg) }

// checkLines refuses the whole push, writing nothing, when an event's line
// would pass max_line_bytes under a sink's policy: counted before any line
// is built, so such an event costs no more memory than it already holds.
// It returns the redacted copies it measured, for the sinks to encode.
func (e *auditExporter) checkLines(ctx context.Context, events []auditevent.Event) (*measured, error) {
	limit := e.cfg.MaxLineBytes
	growth := e.growth()
	var m *measured
	for i := range events {
		// A bound first, which costs no decoding of exec output: a policy
		// writes raw output as at most six bytes per byte, redaction
		// makes text at most growth times longer, and the policy adds no
		// more than lineSlack.
		raw := len(events[i].StdoutBytes) + len(events[i].StderrBytes)
		if (auditevent.LineBound(&events[i])+6*raw)*growth <= limit-lineSlack {
			continue
		}
		if m == nil {
			m = &measured{copies: map[copyKey]*measuredCopy{}, budget: limit}
		}
		n := e.lineLen(&events[i], m)
		if n <= limit {
			continue
		}
		tl := &auditevent.TooLongError{Field: auditevent.LargestField(&events[i]), Size: n, Limit: limit}
		e.telemetry.skipped(ctx, reasonLineTooLong, len(events))
		e.logger.Warn("Refused a push: an event's line would be over max_line_bytes",
			zap.String("field", tl.Field), zap.Int("line_bytes", n), zap.Int("max_line_bytes", limit),
			zap.Int("events", len(events)))
		return nil, allRefused("event "+events[i].EventID.String()+": "+tl.Error(), tl)
	}
	return m, nil
}

// lineSlack is more than a policy adds to a line: the newline and a
// truncation marker.
const lineSlack = 64

// growth is the most a sink's policy can multiply a line's length by.
func (e *auditExporter) growth() int {
	g := 1
	for _, pc := range []*payloadpolicy.Table{e.filePolicy, e.httpPolicy} {
		if pc != nil {
			g = max(g, pc.Growth())
		}
	}
	return g
}

// lineLen is the longest line ev makes in a sink, newline excluded; m
// keeps the redacted copies measured.
func (e *auditExporter) lineLen(ev *auditevent.Event, m *measured) int {
	n := 0
	for _, pc := range []*payloadpolicy.Table{e.filePolicy, e.httpPolicy} {
		if pc != nil {
			n = max(n, m.lineLen(pc, pc.Get(ev.Op), ev))
		}
	}
	return n
}
