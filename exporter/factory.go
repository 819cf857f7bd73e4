package sandboxauditexporter // import "github.com/sandboxaudit/sandboxaudit/exporter"

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/sandboxaudit/sandboxaudit/exporter/internal/metadata"
	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/httpsink"
	"github.com/sandboxaudit/sandboxaudit/internal/sharedcomponent"
)

// Defaults of the configuration keys.
const (
	defaultTimeout        = 30 * time.Second
	defaultHTTPTimeout    = 30 * time.Second
	defaultSpoolMaxSize   = 1 << 30 // 1 GiB
	defaultReplayInterval = 5 * time.Second
	// defaultCheckpointInterval bounds how long a line stays unsealed.
	defaultCheckpointInterval = time.Second
	// minCheckpointInterval keeps an idle sealer from spinning.
	minCheckpointInterval = 10 * time.Millisecond
	// maxCheckpointInterval refuses a unit slip (years): lines would stay
	// unsealed that long.
	maxCheckpointInterval = 24 * time.Hour
	// defaultQueueConsumers applies once a user enables sending_queue
	// (it is off by default, see createDefaultConfig). It is 1 so batches
	// reach the sinks in the order they were queued: the audit file then
	// reads in arrival order, and seqs the span mapper assigns appear in
	// the file in increasing order. Users who prefer throughput over order
	// can raise num_consumers.
	defaultQueueConsumers = 1
	// The file.rotation defaults are the contrib fileexporter's.
	defaultRotationMaxMegabytes = 100
	defaultRotationMaxBackups   = 100
)

// NewFactory creates a factory for the sandboxaudit exporter.
func NewFactory() exporter.Factory {
	// The traces and logs exporters of one configured component share one
	// set of sinks: the HTTP spool is owned by a single process-wide writer
	// (it holds a lock file), and one file writer per path keeps the LRU of
	// open files meaningful. The map lives in the factory, not the package.
	// The map counts users: exporterhelper drains a signal's queue before
	// calling our shutdown, so the sinks stay open until the last signal
	// has drained.
	// files holds what the started exporters, whatever their ids, hold of
	// the file sink, so each start is checked against the others'.
	shared := sharedcomponent.NewMap[*Config, *auditExporter]()
	files := newFileClaims()
	return exporter.NewFactory(
		metadata.Type,
		createDefaultConfig,
		exporter.WithTraces(createTraces(shared, files), metadata.TracesStability),
		exporter.WithLogs(createLogs(shared, files), metadata.LogsStability),
	)
}

func createDefaultConfig() component.Config {
	clientConfig := confighttp.NewDefaultClientConfig()
	clientConfig.Timeout = defaultHTTPTimeout

	// sending_queue is off by default: a push is synchronous, so when
	// ConsumeTraces/ConsumeLogs returns nil the file holds the lines (synced
	// per fsync) or the spool does, and a failure (a full spool) reaches the
	// caller, e.g. the receiver's client as a 503. An in-memory queue would
	// lose its batches on a crash and turn that error into a log line.
	// Default (not None) keeps the queue's defaults for a user who enables
	// it by writing the section.
	queue := exporterhelper.NewDefaultQueueConfig()
	queue.NumConsumers = defaultQueueConsumers

	return &Config{
		// Default, not None, for every section: a section written with
		// nothing under it (its keys commented out) is then on and
		// validated ("must be set"), not silently off, so tamper evidence
		// cannot be switched off by accident.
		File: configoptional.Default(FileConfig{
			Fsync:        filesink.FsyncBatch,
			MaxOpenFiles: filesink.DefaultMaxOpenFiles,
			Integrity:    configoptional.Default(IntegrityConfig{}),
			Rotation: configoptional.Default(RotationConfig{
				MaxMegabytes: defaultRotationMaxMegabytes,
				MaxBackups:   defaultRotationMaxBackups,
				Compression:  compressionNone,
			}),
		}),
		HTTP: configoptional.Default(HTTPConfig{
			ClientConfig: clientConfig,
			Format:       httpsink.FormatNDJSON,
			Spool: configoptional.Default(SpoolConfig{
				MaxSize:        defaultSpoolMaxSize,
				ReplayInterval: defaultReplayInterval,
			}),
		}),
		TimeoutConfig: exporterhelper.TimeoutConfig{Timeout: defaultTimeout},
		QueueConfig:   configoptional.Default(queue),
		RetryConfig:   configretry.NewDefaultBackOffConfig(),
		MaxLineBytes:  defaultMaxLineBytes,
	}
}

const (
	// defaultMaxLineBytes is the receiver's body limit (20 MiB) with room
	// for the escapes of a few fields: a line of 19 MiB of DEL bytes, each
	// written \u007f, would be 114 MiB.
	defaultMaxLineBytes = 24 << 20
	// minLineBytes holds any event's fixed fields with small data.
	minLineBytes = 1 << 10
)

// helperOptions are the exporterhelper options for both signals.
//
// exporterhelper's own retry is disabled on purpose. A failed push is not
// safe to repeat as a whole: by the time the HTTP sink gives up, the file
// sink has already appended the batch, so a whole-batch retry would write
// its lines to the file again. Instead the user's retry_on_failure goes to
// the HTTP sink, which retries only the requests that failed and, when its
// retries are exhausted, keeps the lines in its spool for the replayer.
// The queue (off unless configured) and the timeout (which bounds one push,
// HTTP retries included; what is not delivered by then is spooled) still
// come from exporterhelper.
func helperOptions(cfg *Config, h component.Component) []exporterhelper.Option {
	return []exporterhelper.Option{
		exporterhelper.WithStart(h.Start),
		exporterhelper.WithShutdown(h.Shutdown),
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		exporterhelper.WithTimeout(cfg.TimeoutConfig),
		exporterhelper.WithRetry(configretry.BackOffConfig{Enabled: false}),
		exporterhelper.WithQueue(cfg.QueueConfig),
	}
}

// sharedExporters hands the traces and logs exporters of one configured
// component the same auditExporter.
type sharedExporters = sharedcomponent.Map[*Config, *auditExporter]

func acquire(shared *sharedExporters, files *fileClaims, cfg component.Config, set exporter.Settings) (*sharedcomponent.Handle[*Config, *auditExporter], error) {
	oCfg := cfg.(*Config)
	return shared.Acquire(oCfg, func() (*auditExporter, error) { return newAuditExporter(oCfg, set, files) })
}

func createTraces(shared *sharedExporters, files *fileClaims) exporter.CreateTracesFunc {
	return func(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Traces, error) {
		h, err := acquire(shared, files, cfg, set)
		if err != nil {
			return nil, err
		}
		exp, err := exporterhelper.NewTraces(ctx, set, cfg, h.Unwrap().pushTraces, helperOptions(cfg.(*Config), h)...)
		if err != nil {
			return nil, errors.Join(err, h.Shutdown(ctx))
		}
		return exp, nil
	}
}

func createLogs(shared *sharedExporters, files *fileClaims) exporter.CreateLogsFunc {
	return func(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Logs, error) {
		h, err := acquire(shared, files, cfg, set)
		if err != nil {
			return nil, err
		}
		exp, err := exporterhelper.NewLogs(ctx, set, cfg, h.Unwrap().pushLogs, helperOptions(cfg.(*Config), h)...)
		if err != nil {
			return nil, errors.Join(err, h.Shutdown(ctx))
		}
		return exp, nil
	}
}
