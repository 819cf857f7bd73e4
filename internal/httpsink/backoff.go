package httpsink

import (
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/collector/config/configretry"
)

// backoff is the exponential schedule of configretry.BackOffConfig for one
// request: wait InitialInterval·(1±RandomizationFactor), multiply the
// interval by Multiplier up to MaxInterval, give up once the next wait
// would end past MaxElapsedTime (0: never give up).
type backoff struct {
	cfg      configretry.BackOffConfig
	start    time.Time
	interval time.Duration
}

func newBackoff(cfg configretry.BackOffConfig, now time.Time) *backoff {
	return &backoff{cfg: cfg, start: now, interval: cfg.InitialInterval}
}

// next returns how long to wait before the next attempt, and false when
// retrying is over. retryAfter is the server's Retry-After (0: none).
//
// Retry-After is honoured as a minimum: the wait is never shorter than what
// the server asked for, even beyond MaxInterval (the server knows when it
// will be back; hammering it earlier only earns more 429s). It is bounded by
// MaxElapsedTime instead: when the requested wait would end past the budget
// we stop now rather than sleep for nothing, and the caller spools.
func (b *backoff) next(now time.Time, retryAfter time.Duration) (time.Duration, bool) {
	if !b.cfg.Enabled {
		return 0, false
	}
	wait := b.randomized()
	if mult := b.cfg.Multiplier; mult > 1 {
		grown := time.Duration(float64(b.interval) * mult)
		if b.cfg.MaxInterval > 0 && grown > b.cfg.MaxInterval {
			grown = b.cfg.MaxInterval
		}
		b.interval = grown
	}
	if b.cfg.MaxInterval > 0 && wait > b.cfg.MaxInterval {
		wait = b.cfg.MaxInterval
	}
	wait = max(wait, retryAfter)
	if b.cfg.MaxElapsedTime > 0 && now.Add(wait).Sub(b.start) > b.cfg.MaxElapsedTime {
		return 0, false
	}
	return wait, true
}

func (b *backoff) randomized() time.Duration {
	f := b.cfg.RandomizationFactor
	if f <= 0 || b.interval <= 0 {
		return b.interval
	}
	delta := f * float64(b.interval)
	lo := float64(b.interval) - delta
	return time.Duration(lo + rand.Float64()*(2*delta)) //nolint:gosec // jitter, not security
}
