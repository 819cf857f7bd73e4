package kafkaguardreceiver

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/kafkareceiver"
)

// TestKafkaReceiverRefusesAnErrorBackoffWithoutADelay: error_backoff
// enabled with a zero initial_interval, max_interval or a multiplier
// below 1 (the receiver's defaults for all three are zero) retries a
// failed message with no pause, logging every try; it is refused when the
// receiver is created, naming the key.
func TestKafkaReceiverRefusesAnErrorBackoffWithoutADelay(t *testing.T) {
	good := configretry.BackOffConfig{Enabled: true, InitialInterval: time.Second, MaxInterval: 30 * time.Second, Multiplier: 2, RandomizationFactor: 0.5}
	for _, c := range []struct {
		name string
		set  func(*configretry.BackOffConfig)
		want string
	}{
		{"enabled alone", func(b *configretry.BackOffConfig) { *b = configretry.BackOffConfig{Enabled: true} }, "error_backoff::initial_interval: must be positive"},
		{"no initial_interval", func(b *configretry.BackOffConfig) { b.InitialInterval = 0 }, "error_backoff::initial_interval: must be positive"},
		{"no max_interval", func(b *configretry.BackOffConfig) { b.MaxInterval = 0 }, "error_backoff::max_interval: must be positive"},
		{"multiplier below 1", func(b *configretry.BackOffConfig) { b.Multiplier = 0.5 }, "error_backoff::multiplier: must be at least 1"},
		// A nanosecond is a tight loop too.
		{"initial_interval of 1ns", func(b *configretry.BackOffConfig) { b.InitialInterval = time.Nanosecond }, "error_backoff::initial_interval: must be at least 10ms, got 1ns"},
		{"max_interval of 1ms", func(b *configretry.BackOffConfig) { b.MaxInterval = time.Millisecond }, "error_backoff::max_interval: must be at least 10ms, got 1ms"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := good
			c.set(&b)
			_, err := createLogs(b)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "kafka receiver: "+c.want)
		})
	}
	for _, ok := range []configretry.BackOffConfig{good, {}, {Enabled: false, Multiplier: 0}} {
		r, err := createLogs(ok)
		require.NoError(t, err, "%+v", ok)
		require.NoError(t, r.Shutdown(context.Background()))
	}
}

func createLogs(b configretry.BackOffConfig) (interface {
	Shutdown(context.Context) error
}, error,
) {
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*kafkareceiver.Config)
	cfg.ErrorBackOff = b
	return f.CreateLogs(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
}
