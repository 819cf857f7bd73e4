package sandboxauditexporter // import "github.com/sandboxaudit/sandboxaudit/exporter"

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"

	"github.com/sandboxaudit/sandboxaudit/internal/httpsink"
	"github.com/sandboxaudit/sandboxaudit/internal/secretlog"
	"github.com/sandboxaudit/sandboxaudit/internal/witness"
)

// witnessPool builds the witnesses' clients.
func (e *auditExporter) witnessPool(ctx context.Context, host component.Host, ic *IntegrityConfig) (*witness.Pool, error) {
	ws := make([]*witness.Witness, 0, len(ic.Witnesses))
	for i := range ic.Witnesses {
		wc := ic.Witnesses[i].ClientConfig
		if wc.Timeout == 0 {
			wc.Timeout = witness.DefaultTimeout
		}
		client, err := wc.ToClient(ctx, host.GetExtensions(), e.set.TelemetrySettings)
		if err != nil {
			return nil, fmt.Errorf("file: integrity: witnesses::%d: %w", i, err)
		}
		// A witness's headers and auth go to its own host only.
		client = httpsink.SafeRedirects(client)
		secrets := secretlog.Secrets(wc.Endpoint, clientSecretValues(&wc))
		redact := func(err error) error { return secretlog.TransportError(err, secrets) }
		w, err := witness.NewWitness(wc.Endpoint, ic.Witnesses[i].PublicKey, client, redact)
		if err != nil {
			return nil, fmt.Errorf("file: integrity: witnesses::%d::public_key: %w", i, err)
		}
		ws = append(ws, w)
	}
	pool, err := witness.NewPool(ws, ic.quorum(), e.logger, witnessObserver{t: e.telemetry})
	if err != nil {
		return nil, fmt.Errorf("file: integrity: %w", err)
	}
	// A witness that keeps failing is asked again from the next round
	// on, then less and less often: not once per waiting file and round.
	pool.SetBackoff(witness.Backoff{First: ic.interval(), Limit: witness.MaxBackoff, Round: ic.interval()})
	return pool, nil
}

// witnessObserver feeds the witnesses' answers into the metrics.
type witnessObserver struct{ t *telemetry }

func (o witnessObserver) Cosigned(ctx context.Context, w string) {
	o.t.witnessCosigned(ctx, w)
}

func (o witnessObserver) Failed(ctx context.Context, w, reason string) {
	o.t.witnessFailed(ctx, w, reason)
}

var _ witness.Observer = witnessObserver{}
