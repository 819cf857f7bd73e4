package kafkaguardreceiver

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/config/configretry"
)

// minBackOffInterval is the shortest error_backoff interval taken: a
// shorter one retries a refused message in a loop as zero does (the
// spool's replay_interval has the same floor).
const minBackOffInterval = 10 * time.Millisecond

// checkBackOff refuses an error_backoff that is enabled but never waits:
// the receiver's defaults for its intervals and multiplier are zero, and
// with any of them at zero (or a multiplier below 1, which shrinks the
// delay towards zero) a message the pipeline refuses, say on a full disk,
// is retried at once, over and over, each failure logged.
func checkBackOff(b configretry.BackOffConfig) error {
	if !b.Enabled {
		return nil
	}
	switch {
	case b.InitialInterval <= 0:
		return errors.New("kafka receiver: error_backoff::initial_interval: must be positive when error_backoff is enabled (zero retries a refused message at once, in a loop)")
	case b.MaxInterval <= 0:
		return errors.New("kafka receiver: error_backoff::max_interval: must be positive when error_backoff is enabled (zero retries a refused message at once, in a loop)")
	case b.Multiplier < 1:
		return errors.New("kafka receiver: error_backoff::multiplier: must be at least 1 when error_backoff is enabled (below 1 the delay shrinks to zero)")
	case b.InitialInterval < minBackOffInterval:
		return fmt.Errorf("kafka receiver: error_backoff::initial_interval: must be at least %s, got %s", minBackOffInterval, b.InitialInterval)
	case b.MaxInterval < minBackOffInterval:
		return fmt.Errorf("kafka receiver: error_backoff::max_interval: must be at least %s, got %s", minBackOffInterval, b.MaxInterval)
	}
	return nil
}
