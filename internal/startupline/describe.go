package startupline

import (
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configtelemetry"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"

	sandboxauditexporter "github.com/sandboxaudit/sandboxaudit/exporter"
	"github.com/sandboxaudit/sandboxaudit/internal/safetext"
	sandboxauditreceiver "github.com/sandboxaudit/sandboxaudit/receiver"
)

// Describe returns the line for a resolved collector configuration, for
// instance
//
//	sandboxaudit: audit lines to /srv/audit/events.jsonl; intake OTLP/gRPC 127.0.0.1:4317, OTLP/HTTP http://127.0.0.1:4318, events http://127.0.0.1:8088/v1/sandbox/events; self-metrics http://127.0.0.1:8888/metrics
//
// Only components listed in a pipeline count: the others do not start. A
// component whose configuration does not load is left out; the collector
// reports that error itself.
func Describe(conf *confmap.Conf) string {
	receivers, exporters := inPipelines(conf)
	var parts []string
	if out := auditOutputs(conf, exporters); len(out) > 0 {
		parts = append(parts, "audit lines to "+strings.Join(out, ", "))
	}
	if in := intakes(conf, receivers); len(in) > 0 {
		parts = append(parts, "intake "+strings.Join(in, ", "))
	}
	parts = append(parts, selfMetrics(conf))
	// Escaped as the CLI's output is: a path or topic holds what the
	// configuration wrote, a bidirectional override included.
	return safetext.Escape("sandboxaudit: " + strings.Join(parts, "; "))
}

// uses maps each receiver or exporter the pipelines list to the signals
// of those pipelines.
type uses map[component.ID]map[string]bool

func (u uses) add(ids []component.ID, signal string) {
	for _, id := range ids {
		if u[id] == nil {
			u[id] = map[string]bool{}
		}
		u[id][signal] = true
	}
}

// ids returns the components, sorted.
func (u uses) ids() []component.ID {
	ids := make([]component.ID, 0, len(u))
	for id := range u {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b component.ID) int { return strings.Compare(a.String(), b.String()) })
	return ids
}

// inPipelines returns the receivers and exporters the pipelines list.
func inPipelines(conf *confmap.Conf) (receivers, exporters uses) {
	receivers, exporters = uses{}, uses{}
	var pipelines map[string]struct {
		Receivers []component.ID `mapstructure:"receivers"`
		Exporters []component.ID `mapstructure:"exporters"`
	}
	sub, err := conf.Sub("service::pipelines")
	if err != nil || sub.Unmarshal(&pipelines, confmap.WithIgnoreUnused()) != nil {
		return receivers, exporters
	}
	for name, p := range pipelines {
		signal, _, _ := strings.Cut(name, "/")
		receivers.add(p.Receivers, signal)
		exporters.add(p.Exporters, signal)
	}
	return receivers, exporters
}

// load unmarshals the section of id under kind onto cfg, a factory's
// default configuration.
func load(conf *confmap.Conf, kind string, id component.ID, cfg component.Config) bool {
	sub, err := conf.Sub(kind + "::" + id.String())
	return err == nil && sub.Unmarshal(cfg) == nil
}

// named appends id's name, when it has one, to a label.
func named(label string, id component.ID) string {
	if id.Name() == "" {
		return label
	}
	return label + " (" + id.String() + ")"
}

// auditOutputs names where each sandboxaudit exporter writes (the file as
// an absolute path, the HTTP endpoint without credentials or query) and
// the topic of each kafka exporter that writes audit lines.
func auditOutputs(conf *confmap.Conf, exporters uses) []string {
	f := sandboxauditexporter.NewFactory()
	var out []string
	for _, id := range exporters.ids() {
		if kafka := kafkaOutput(conf, id, exporters[id]); kafka != "" {
			out = append(out, kafka)
			continue
		}
		cfg := f.CreateDefaultConfig().(*sandboxauditexporter.Config)
		if id.Type() != f.Type() || !load(conf, "exporters", id, cfg) {
			continue
		}
		if cfg.File.HasValue() {
			path := cfg.File.Get().Path
			if abs, err := filepath.Abs(path); err == nil {
				path = abs
			}
			out = append(out, path)
		}
		if cfg.HTTP.HasValue() {
			out = append(out, withoutSecrets(cfg.HTTP.Get().ClientConfig.Endpoint))
		}
	}
	return out
}

// withoutSecrets drops the user info, query and fragment of an endpoint:
// they may hold credentials.
func withoutSecrets(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "an HTTP endpoint"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// intakes names each OTLP and sandboxaudit receiver's listening address and
// the topics each kafka receiver consumes.
func intakes(conf *confmap.Conf, receivers uses) []string {
	otlp, sandbox := otlpreceiver.NewFactory(), sandboxauditreceiver.NewFactory()
	var out []string
	for _, id := range receivers.ids() {
		switch id.Type() {
		case otlp.Type():
			cfg := otlp.CreateDefaultConfig().(*otlpreceiver.Config)
			if !load(conf, "receivers", id, cfg) {
				continue
			}
			if cfg.Protocols.GRPC.HasValue() {
				out = append(out, named("OTLP/gRPC", id)+" "+cfg.Protocols.GRPC.Get().NetAddr.Endpoint)
			}
			if cfg.Protocols.HTTP.HasValue() {
				s := cfg.Protocols.HTTP.Get().ServerConfig
				out = append(out, named("OTLP/HTTP", id)+" "+scheme(s.TLS.HasValue())+s.NetAddr.Endpoint)
			}
		case sandbox.Type():
			cfg := sandbox.CreateDefaultConfig().(*sandboxauditreceiver.Config)
			if load(conf, "receivers", id, cfg) {
				s := cfg.ServerConfig
				out = append(out, named("events", id)+" "+scheme(s.TLS.HasValue())+s.NetAddr.Endpoint+cfg.EventsPath)
			}
		default:
			if in := kafkaIntake(conf, id, receivers[id]); in != "" {
				out = append(out, in)
			}
		}
	}
	return out
}

func scheme(tls bool) string {
	if tls {
		return "https://"
	}
	return "http://"
}

// selfMetrics names where the collector serves its own metrics.
func selfMetrics(conf *confmap.Conf) string {
	cfg := otelconftelemetry.NewFactory().CreateDefaultConfig().(*otelconftelemetry.Config)
	if sub, err := conf.Sub("service::telemetry"); err != nil || sub.Unmarshal(cfg) != nil {
		return "self-metrics unknown"
	}
	if cfg.Metrics.Level == configtelemetry.LevelNone {
		return "self-metrics off"
	}
	var urls []string
	pushed := false
	for _, r := range cfg.Metrics.Readers {
		if r.Periodic != nil {
			pushed = true
		}
		if r.Pull == nil || r.Pull.Exporter.Prometheus == nil {
			continue
		}
		p := r.Pull.Exporter.Prometheus
		if p.Host != nil && p.Port != nil {
			urls = append(urls, "http://"+net.JoinHostPort(*p.Host, strconv.Itoa(*p.Port))+"/metrics")
		}
	}
	if pushed {
		urls = append(urls, "pushed by a periodic reader")
	}
	if len(urls) == 0 {
		return "self-metrics off"
	}
	return "self-metrics " + strings.Join(urls, ", ")
}
