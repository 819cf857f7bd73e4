package kafkaguardreceiver

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configtls"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/kafkareceiver"

	sandboxauditencoding "github.com/sandboxaudit/sandboxaudit/encoding"
)

// hostWith is a host whose extensions are ids: the sandboxaudit encoding
// extension (it unmarshals logs and traces) and, under any other type, a
// component that unmarshals nothing.
type hostWith struct {
	component.Host
	ids []component.ID
}

func (h hostWith) GetExtensions() map[component.ID]component.Component {
	m := map[component.ID]component.Component{}
	for _, id := range h.ids {
		m[id] = nopComponent{}
		if id.Type().String() == "sandboxaudit_encoding" {
			ext, err := sandboxauditencoding.NewFactory().Create(context.Background(), extensiontest.NewNopSettings(id.Type()), sandboxauditencoding.NewFactory().CreateDefaultConfig())
			if err != nil {
				panic(err)
			}
			m[id] = ext
		}
	}
	return m
}

// TestKafkaReceiverRefusesAnUnknownEncodingBeforeStarting: a mistyped
// encoding, or the extension left out of service::extensions, fails Start
// naming the key, and Shutdown returns at once; the contrib receiver alone
// logged the error and then held the collector's shutdown for ever.
func TestKafkaReceiverRefusesAnUnknownEncodingBeforeStarting(t *testing.T) {
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*kafkareceiver.Config)
	cfg.Logs.Encoding = "sandboxaudit_encodng"
	set := receivertest.NewNopSettings(f.Type())
	r, err := f.CreateLogs(context.Background(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)

	host := hostWith{Host: componenttest.NewNopHost(), ids: []component.ID{component.MustNewID("sandboxaudit_encoding")}}
	err = r.Start(context.Background(), host)
	require.ErrorContains(t, err, `kafka receiver: logs::encoding: "sandboxaudit_encodng" is neither one of its own encodings`)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, r.Shutdown(ctx), "a receiver that never started shuts down at once")
}

// nopComponent is an extension that unmarshals nothing.
type nopComponent struct{}

func (nopComponent) Start(context.Context, component.Host) error { return nil }
func (nopComponent) Shutdown(context.Context) error              { return nil }

func TestCheckKafkaEncoding(t *testing.T) {
	host := hostWith{Host: componenttest.NewNopHost(), ids: []component.ID{component.MustNewID("sandboxaudit_encoding"), component.MustNewID("bearertokenauth")}}
	for _, ok := range [][2]string{{"logs", "sandboxaudit_encoding"}, {"logs", "otlp_proto"}, {"logs", "text_utf-16"}, {"traces", "zipkin_json"}, {"metrics", "otlp_json"}} {
		assert.NoError(t, checkEncoding(ok[0], ok[1], host), "%v", ok)
	}
	for _, bad := range [][2]string{{"logs", "sandboxaudit_encoding/other"}, {"traces", "raw"}, {"metrics", "text"}, {"logs", ""},
		{"logs", "bearertokenauth"}, {"metrics", "sandboxaudit_encoding"}} {
		assert.Error(t, checkEncoding(bad[0], bad[1], host), "%v", bad)
	}
}

// TestKafkaReceiverThatFailsToStartShutsDownAtOnce: a receiver whose
// client cannot be built (a TLS file that is not there, autocommit without
// a group) fails Start, and Shutdown then returns at once, so the
// collector exits with the error instead of waiting for a consume loop
// that never ran.
func TestKafkaReceiverThatFailsToStartShutsDownAtOnce(t *testing.T) {
	for name, set := range map[string]func(*kafkareceiver.Config){
		"tls::ca_file missing": func(c *kafkareceiver.Config) {
			c.ClientConfig.TLS = &configtls.ClientConfig{Config: configtls.Config{CAFile: filepath.Join(t.TempDir(), "missing.pem")}}
		},
		"group_id empty": func(c *kafkareceiver.Config) { c.ConsumerConfig.GroupID = "" },
	} {
		t.Run(name, func(t *testing.T) {
			f := NewFactory()
			cfg := f.CreateDefaultConfig().(*kafkareceiver.Config)
			cfg.ClientConfig.Brokers = []string{"127.0.0.1:1"}
			set(cfg)
			r, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
			require.NoError(t, err)
			require.Error(t, r.Start(context.Background(), componenttest.NewNopHost()))

			// The collector shuts down with a context that has no deadline.
			done := make(chan error, 1)
			go func() { done <- r.Shutdown(context.Background()) }()
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(10 * time.Second):
				t.Fatal("Shutdown after a failed Start has not returned in 10s")
			}
		})
	}
}

// TestKafkaReceiverRefusesASignalWithoutTopics: `topics: []` (or an empty
// name) for a signal the pipelines use left the receiver running and
// consuming nothing, silently; it is refused naming the key.
func TestKafkaReceiverRefusesASignalWithoutTopics(t *testing.T) {
	f := NewFactory()
	for _, topics := range [][]string{{}, nil, {""}, {"sandbox-audit", " "}} {
		cfg := f.CreateDefaultConfig().(*kafkareceiver.Config)
		cfg.Logs.Topics = topics
		_, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
		require.ErrorContains(t, err, "kafka receiver: logs::topics", "%q", topics)
		cfg.Traces.Topics = topics
		cfg.Logs.Topics = []string{"sandbox-audit"}
		_, err = f.CreateTraces(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
		require.ErrorContains(t, err, "kafka receiver: traces::topics", "%q", topics)
	}
	cfg := f.CreateDefaultConfig().(*kafkareceiver.Config)
	cfg.Traces.Topics = nil // a signal no pipeline uses is not checked
	r, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, r.Shutdown(context.Background()))
}
