package httpsink

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configretry"
)

func TestBackoffSchedule(t *testing.T) {
	cfg := configretry.BackOffConfig{Enabled: true, InitialInterval: 100 * time.Millisecond,
		MaxInterval: 400 * time.Millisecond, MaxElapsedTime: 2 * time.Second, Multiplier: 2}
	t0 := time.Unix(1000, 0)
	b := newBackoff(cfg, t0)
	var got []time.Duration
	now := t0
	for {
		w, ok := b.next(now, 0)
		if !ok {
			break
		}
		got = append(got, w)
		now = now.Add(w)
	}
	ms := time.Millisecond
	// 100+200+400+400+400 = 1500; the next 400 would end at 1900 (fits),
	// the one after at 2300 (does not).
	require.Equal(t, []time.Duration{100 * ms, 200 * ms, 400 * ms, 400 * ms, 400 * ms, 400 * ms}, got)
}

func TestBackoffRandomizationStaysInBounds(t *testing.T) {
	cfg := configretry.BackOffConfig{Enabled: true, InitialInterval: time.Second,
		MaxInterval: time.Minute, Multiplier: 1, RandomizationFactor: 0.5}
	b := newBackoff(cfg, time.Unix(0, 0))
	seen := map[time.Duration]bool{}
	for range 200 {
		w, ok := b.next(time.Unix(0, 0), 0)
		require.True(t, ok)
		require.GreaterOrEqual(t, w, 500*time.Millisecond)
		require.LessOrEqual(t, w, 1500*time.Millisecond)
		seen[w] = true
	}
	require.Greater(t, len(seen), 1, "jitter actually varies")
}

func TestBackoffRetryAfter(t *testing.T) {
	cfg := configretry.BackOffConfig{Enabled: true, InitialInterval: 10 * time.Millisecond,
		MaxInterval: time.Second, MaxElapsedTime: time.Minute, Multiplier: 2}
	t0 := time.Unix(1000, 0)

	// Longer than max_interval: still honoured (a minimum, never shortened).
	w, ok := newBackoff(cfg, t0).next(t0, 30*time.Second)
	require.True(t, ok)
	require.Equal(t, 30*time.Second, w)

	// Past the max_elapsed_time budget: give up now instead of waiting.
	_, ok = newBackoff(cfg, t0).next(t0.Add(50*time.Second), 30*time.Second)
	require.False(t, ok)

	// Shorter than the backoff: the backoff wins.
	w, ok = newBackoff(cfg, t0).next(t0, time.Millisecond)
	require.True(t, ok)
	require.Equal(t, 10*time.Millisecond, w)

	// Retry disabled: no retry at all.
	cfg.Enabled = false
	_, ok = newBackoff(cfg, t0).next(t0, 0)
	require.False(t, ok)
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	cases := map[string]time.Duration{
		"":               0,
		"7":              7 * time.Second,
		" 7 ":            7 * time.Second,
		"0":              0,
		"-3":             0,
		"1.5":            0,
		"soon":           0,
		"99999999999999": 365 * 24 * time.Hour,
		now.Add(90 * time.Second).Format(http.TimeFormat):  90 * time.Second,
		now.Add(-90 * time.Second).Format(http.TimeFormat): 0,
		"Wednesday, 02-Dec-26 12:00:30 GMT":                30 * time.Second, // RFC 850
		"Wed Dec  2 12:01:00 2026":                         time.Minute,      // asctime
	}
	for in, want := range cases {
		require.Equal(t, want, parseRetryAfter(in, now), "%q", in)
	}
}

func TestExcerpt(t *testing.T) {
	require.Equal(t, "", excerpt(nil))
	require.Equal(t, "bad request: field op", excerpt([]byte("  bad request:\r\n\tfield\x00op \n")))
	require.Equal(t, "a\ufffdb", excerpt([]byte("a\xffb")))
	long := excerpt([]byte(strings.Repeat("é", 500)))
	require.Equal(t, strings.Repeat("é", excerptRunes)+"…", long)
	require.Equal(t, "x", excerpt([]byte("x"+strings.Repeat(" ", 300))), "trailing space is not 'more'")
}

func TestNextRoundBackoffIsCapped(t *testing.T) {
	sk, err := New(Settings{Endpoint: "http://127.0.0.1:1/", Format: FormatNDJSON,
		ReplayInterval: time.Second, Retry: configretry.BackOffConfig{MaxInterval: 10 * time.Second}})
	require.NoError(t, err)
	now := time.Now()
	var got []time.Duration
	for f := 0; f <= 6; f++ {
		got = append(got, sk.nextRoundIn(f, now))
	}
	s := time.Second
	require.Equal(t, []time.Duration{s, s, 2 * s, 4 * s, 8 * s, 10 * s, 10 * s}, got)
}
