package cli

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configretry"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
	"github.com/sandboxaudit/sandboxaudit/internal/httpsink"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/plural"
	"github.com/sandboxaudit/sandboxaudit/internal/spool"
)

// replay sends the spool file through the same client stack the exporter
// uses (confighttp: headers, TLS, timeout), so a by-hand replay behaves like
// the collector's own.
func replay(ctx context.Context, o replayOptions, s Streams) int {
	set, err := o.settings(ctx)
	if err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "replay: %v\n", err)
		return exitUsage
	}
	if side := integrity.SidecarBeside(o.spool); side != "" {
		_, _ = fmt.Fprintf(s.Stderr, "replay: %s is an audit file (it has %s), not a spool; nothing was sent\n", o.spool, side)
		return exitProblems
	}
	damaged := &damageCount{}
	set.Observer = damaged
	set.Logger = stderrLogger(s.Stderr)
	sent, err := httpsink.ReplayFile(ctx, o.spool, set, o.adopt)
	if errors.Is(err, spool.ErrLocked) {
		_, _ = fmt.Fprintf(s.Stderr, "replay: %v; a running collector (its http.spool) or another replay holds it: stop that first, "+
			"or let it deliver the lines\n", err)
		return exitProblems
	}
	if err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "replay: %v%s\n", err, timeoutHint(err, o.timeout))
		return exitProblems
	}
	_, _ = fmt.Fprintf(s.Stdout, "replay: sent %s from %s to %s\n", plural.Count(sent, "line"), o.spool, redactURL(o.endpoint))
	if n := damaged.n.Load(); n > 0 {
		_, _ = fmt.Fprintf(s.Stderr, "replay: %s %s; %s\n", plural.Count(n, "damaged line"),
			plural.Pick(n, "was not a valid audit event and was not sent", "were not valid audit events and were not sent"),
			whereKept(n, damaged.unkept.Load(), o.spool))
		return exitProblems
	}
	return exitOK
}

// timeoutHint names --timeout when err is a request that took longer: the
// client's own words ("context deadline exceeded") do not.
func timeoutHint(err error, timeout time.Duration) string {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return fmt.Sprintf(" (no answer within --timeout %s; raise it for a slow endpoint)", timeout)
	}
	return ""
}

// whereKept says where n damaged lines went, unkept of them nowhere.
func whereKept(n, unkept int64, spool string) string {
	switch unkept {
	case 0:
		return fmt.Sprintf("%s in %s.quarantine", plural.Pick(n, "it is", "they are"), spool)
	case n:
		return plural.Pick(n, "it", "they") + " could not be kept (the messages above say why)"
	}
	return fmt.Sprintf("%d of them could not be kept (the messages above say why), the others are in %s.quarantine", unkept, spool)
}

// stderrLogger logs the sink's warnings and errors to w, a line each: a
// replay by hand has no other log, and what opening the spool mended (a
// torn line cut off, a file adopted, an offset moved back) must be seen.
func stderrLogger(w io.Writer) *zap.Logger {
	enc := zapcore.NewConsoleEncoder(zapcore.EncoderConfig{
		LevelKey: "level", MessageKey: "msg", EncodeLevel: zapcore.CapitalLevelEncoder, ConsoleSeparator: " ",
	})
	return zap.New(zapcore.NewCore(enc, zapcore.Lock(zapcore.AddSync(w)), zapcore.WarnLevel))
}

// damageCount counts the spool lines found damaged, and those of them the
// quarantine file could not take.
type damageCount struct {
	httpsink.NopObserver
	n, unkept atomic.Int64
}

func (d *damageCount) Quarantined(_ context.Context, n int) { d.n.Add(int64(n)) }
func (d *damageCount) NotKept(_ context.Context, n int)     { d.unkept.Add(int64(n)) }

// settings builds the HTTP sink settings from the command line.
func (o replayOptions) settings(ctx context.Context) (httpsink.Settings, error) {
	format := httpsink.Format(o.format)
	if err := format.Validate(); err != nil {
		return httpsink.Settings{}, fmt.Errorf("--format: %w", err)
	}
	// The sink's own check; its error never repeats userinfo or query.
	if err := httpsink.ValidateEndpoint(o.endpoint); err != nil {
		return httpsink.Settings{}, fmt.Errorf("--endpoint: %w", err)
	}
	if o.timeout <= 0 {
		return httpsink.Settings{}, fmt.Errorf("--timeout: must be positive, got %s", o.timeout)
	}
	if err := fsutil.CheckFiles(map[string]string{"--ca-file": o.caFile}); err != nil {
		return httpsink.Settings{}, err
	}
	if err := checkCAFile(o.caFile); err != nil {
		return httpsink.Settings{}, err
	}
	cc := confighttp.NewDefaultClientConfig()
	cc.Endpoint = o.endpoint
	cc.Timeout = o.timeout
	cc.TLS.CAFile = o.caFile
	cc.TLS.InsecureSkipVerify = o.insecureSkipVerify
	for _, k := range o.headers.keys {
		cc.Headers.Set(k, configopaque.String(o.headers.values[k]))
	}
	if err := cc.Validate(); err != nil {
		return httpsink.Settings{}, err
	}
	// Refused here, not after --retry-for of failed requests.
	for name, value := range cc.Headers.Iter {
		if err := httpsink.CheckHeader(name, string(value)); err != nil {
			return httpsink.Settings{}, fmt.Errorf("--header: %w", err)
		}
	}
	client, err := cc.ToClient(ctx, map[component.ID]component.Component{}, component.TelemetrySettings{
		Logger:         zap.NewNop(),
		TracerProvider: tracenoop.NewTracerProvider(),
		MeterProvider:  metricnoop.NewMeterProvider(),
	})
	if err != nil {
		return httpsink.Settings{}, fmt.Errorf("http client: %w", err)
	}
	retry := configretry.NewDefaultBackOffConfig()
	retry.Enabled = o.retryFor > 0
	retry.InitialInterval = min(retry.InitialInterval, time.Second)
	retry.MaxElapsedTime = o.retryFor
	return httpsink.Settings{
		Client:   client,
		Endpoint: o.endpoint,
		Format:   format,
		Retry:    retry,
	}, nil
}

// checkCAFile reads --ca-file as the client will, so that a missing file
// or one without a certificate is named by its flag, not as the HTTP
// client's failure.
func checkCAFile(name string) error {
	if name == "" {
		return nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is named once, below
		}
		return fmt.Errorf("--ca-file %s: %w", name, err)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(b) {
		return fmt.Errorf("--ca-file %s: no PEM certificate in it", name)
	}
	return nil
}

// redactURL shows scheme, host and path: userinfo and query may hold
// credentials.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}
