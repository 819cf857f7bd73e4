package httpsink

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumererror"
)

func TestRetryableAnswersAreRetriedUntilAccepted(t *testing.T) {
	cases := map[string]behaviour{
		"500":                  status(500, nil, "oops"),
		"503":                  status(503, nil, ""),
		"429 without header":   status(429, nil, ""),
		"reset before headers": cut("HTTP/1.1 200 OK\r\nContent-Le"),
		"reset mid-body":       cut("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"partial\":"),
		"garbage":              cut("NOT HTTP\r\n\r\n"),
	}
	for name, first := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, FormatNDJSON, false)
			f.srv.then(first, first)
			lines := makeLines(t, uuid.New(), 1, 2, 10)

			require.NoError(t, f.sink.Send(sendCtx(t), lines, 2))

			got := f.srv.all()
			require.Len(t, got, 3, "two failures, then the accepted retry")
			for _, a := range got {
				require.Equal(t, string(lines), string(a.body))
			}
			require.True(t, got[2].accepted)
			require.Equal(t, 2, f.obs.stats().sent)
		})
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	cases := map[string]func() string{
		"seconds": func() string { return "1" },
		// HTTP-date has second resolution: 2s ahead is at least 1s ahead.
		"http-date": func() string { return time.Now().Add(2 * time.Second).UTC().Format(http.TimeFormat) },
	}
	for name, value := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, FormatEvent, false, func(s *Settings) {
				s.Retry.MaxElapsedTime = 10 * time.Second
			})
			f.srv.then(func(w http.ResponseWriter, r *http.Request, b []byte) bool {
				return status(429, map[string]string{"Retry-After": value()}, "slow down")(w, r, b)
			})
			lines := makeLines(t, uuid.New(), 1, 1, 10)

			require.NoError(t, f.sink.Send(sendCtx(t), lines, 1))

			got := f.srv.all()
			require.Len(t, got, 2)
			require.True(t, got[1].accepted)
			// Without the header the backoff would have waited ~5ms.
			require.GreaterOrEqual(t, got[1].at.Sub(got[0].at), time.Second)
		})
	}
}

func TestRetryAfterBeyondBudgetSpoolsAtOnce(t *testing.T) {
	f := newFixture(t, FormatNDJSON, true, func(s *Settings) {
		s.Retry.MaxElapsedTime = time.Second
		s.Retry.MaxInterval = time.Minute
	})
	f.srv.setDefault(status(503, map[string]string{"Retry-After": "3600"}, ""))
	lines := makeLines(t, uuid.New(), 1, 3, 10)

	start := time.Now()
	require.NoError(t, f.sink.Send(sendCtx(t), lines, 3))
	// Waiting an hour cannot fit in a 1s budget: no second attempt, and
	// Send did not sit out the hour (the bound is loose on purpose: this
	// checks behaviour, not speed).
	require.Less(t, time.Since(start), 10*time.Second)
	require.Len(t, f.srv.all(), 1)
	require.Equal(t, string(lines), string(spoolFileBytes(t, f.spoolPath)))
	// The replayer honours the server's hour up to its longest pause
	// (max_interval, a minute here), not beyond.
	next := f.sink.nextRoundIn(1, time.Now())
	require.Greater(t, next, 59*time.Second)
	require.LessOrEqual(t, next, time.Minute)
}

func TestHangPastClientTimeoutIsRetryable(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	f := newFixture(t, FormatEvent, false, func(s *Settings) {
		s.Client = &http.Client{Timeout: 100 * time.Millisecond}
		s.Retry.MaxElapsedTime = 150 * time.Millisecond
	})
	f.srv.setDefault(hang(release))
	lines := makeLines(t, uuid.New(), 1, 2, 10)

	err := f.sink.Send(sendCtx(t), lines, 2)

	var re *RefusedError
	require.ErrorAs(t, err, &re)
	require.Equal(t, ReasonNoSpool, re.Reason)
	require.Equal(t, 2, re.Remaining)
	require.Equal(t, 0, re.Done)
	require.False(t, consumererror.IsPermanent(err))
	var ne interface{ Timeout() bool }
	require.ErrorAs(t, err, &ne)
	require.True(t, ne.Timeout())
	require.Equal(t, 2, f.obs.stats().refused[ReasonNoSpool])
}

func TestConnectionRefusedWithoutSpoolIsRetryable(t *testing.T) {
	f := newFixture(t, FormatNDJSON, false, giveUpSoon)
	f.srv.down()
	lines := makeLines(t, uuid.New(), 1, 4, 10)

	err := f.sink.Send(sendCtx(t), lines, 4)

	var re *RefusedError
	require.ErrorAs(t, err, &re)
	require.Equal(t, 4, re.Remaining)
	require.False(t, consumererror.IsPermanent(err))
	require.Contains(t, err.Error(), "connection refused")
	require.Empty(t, f.srv.all())
}

// secretHeader adds credentials the way confighttp's auth/headers would.
type secretHeader struct{ next http.RoundTripper }

func (s secretHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer s3cr3t-t0ken")
	return s.next.RoundTrip(r)
}

func TestPermanent4xxIsDroppedVisiblyNotRetriedNotSpooled(t *testing.T) {
	f := newFixture(t, FormatNDJSON, true, func(s *Settings) {
		s.Client = &http.Client{Timeout: 2 * time.Second, Transport: secretHeader{http.DefaultTransport}}
		s.Endpoint = strings.Replace(s.Endpoint, "http://", "http://user:hunter2@", 1) + "?api_key=sekrit"
	})
	f.start(t)
	respBody := "invalid event:\n\x00 field \"op\"\xff " + strings.Repeat("y", 500)
	f.srv.setDefault(status(400, nil, respBody))
	lines := makeLines(t, uuid.New(), 1, 3, 10)

	err := f.sink.Send(sendCtx(t), lines, 3)

	require.Error(t, err)
	require.True(t, consumererror.IsPermanent(err))
	var se *StatusError
	require.ErrorAs(t, err, &se)
	require.Equal(t, 400, se.Code)
	msg := err.Error()
	require.Contains(t, msg, "400")
	require.Contains(t, msg, fmt.Sprintf("(response body: %d bytes)", len(respBody)))
	require.NotContains(t, msg, "invalid event", "response bodies are never quoted")
	require.Len(t, f.srv.all(), 1, "not retried")
	require.False(t, f.spool.Pending(), "not spooled")
	require.Empty(t, spoolFileBytes(t, f.spoolPath))
	st := f.obs.stats()
	require.Equal(t, 3, st.dropped[ReasonHTTP4xx])
	require.Equal(t, 0, st.spooled)
	require.NotZero(t, f.logs.FilterMessageSnippet("dropped").FilterField(zapInt("status", 400)).Len())

	// Secrets appear nowhere: not in the error, not in any log entry.
	for _, secret := range []string{"s3cr3t", "hunter2", "sekrit"} {
		require.NotContains(t, msg, secret)
		for _, e := range f.logs.All() {
			require.NotContains(t, e.Message, secret)
			for k, v := range e.ContextMap() {
				require.NotContains(t, k+"="+toString(v), secret)
			}
		}
	}
}

func TestEventFormat4xxDropsOnlyThatEvent(t *testing.T) {
	f := newFixture(t, FormatEvent, true)
	f.srv.then(ok, status(422, nil, "no"), ok)
	lines := makeLines(t, uuid.New(), 1, 3, 10)

	err := f.sink.Send(sendCtx(t), lines, 3)

	require.True(t, consumererror.IsPermanent(err))
	require.Contains(t, err.Error(), "422")
	require.Equal(t, []int64{1, 3}, seqs(f.srv.acceptedEvents(t)))
	require.Len(t, f.srv.all(), 3)
	require.False(t, f.spool.Pending())
	st := f.obs.stats()
	require.Equal(t, 2, st.sent)
	require.Equal(t, 1, st.dropped[ReasonHTTP4xx])
}

func TestEventFormatFailureSpoolsOnlyTheRest(t *testing.T) {
	f := newFixture(t, FormatEvent, true, giveUpSoon)
	f.srv.then(ok, ok)
	f.srv.setDefault(status(503, nil, "maintenance"))
	lines := makeLines(t, uuid.New(), 1, 5, 10)

	require.NoError(t, f.sink.Send(sendCtx(t), lines, 5))

	require.Equal(t, seqRange(1, 2), seqs(f.srv.acceptedEvents(t)))
	ls := splitLines(lines)
	require.Equal(t, string(ls[2])+string(ls[3])+string(ls[4]), string(spoolFileBytes(t, f.spoolPath)),
		"the acknowledged events are not spooled again")
	st := f.obs.stats()
	require.Equal(t, 2, st.sent)
	require.Equal(t, 3, st.spooled)

	// When the endpoint is back the replayer sends the rest, in order.
	f.srv.setDefault(ok)
	f.start(t)
	f.waitSpoolEmpty(t)
	require.Equal(t, seqRange(1, 5), seqs(f.srv.acceptedEvents(t)))
}

func TestCallerDeadlineMidDeliverySpoolsTheRest(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	f := newFixture(t, FormatEvent, true, func(s *Settings) { s.Retry.MaxElapsedTime = time.Minute })
	f.srv.then(ok)
	f.srv.setDefault(hang(release))
	lines := makeLines(t, uuid.New(), 1, 3, 10)

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	require.NoError(t, f.sink.Send(ctx, lines, 3))

	require.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
	ls := splitLines(lines)
	require.Equal(t, string(ls[1])+string(ls[2]), string(spoolFileBytes(t, f.spoolPath)))
	require.False(t, f.sink.isDown(), "a caller's deadline says nothing about the endpoint")
}

// Shutdown ends what a Send waits for: a live backoff (no spool; the lines
// go back to the caller) or a request that hangs (spool; they are kept).
func TestShutdownInterruptsSends(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	for name, spooled := range map[string]bool{"backoff without spool": false, "hang with spool": true} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, FormatNDJSON, spooled, func(s *Settings) {
				s.Retry.InitialInterval = time.Minute
				s.Retry.MaxInterval = time.Minute
				s.Retry.MaxElapsedTime = time.Hour
				s.Client = &http.Client{Timeout: time.Hour}
			})
			arrived := make(chan struct{}, 1)
			answer := status(500, nil, "")
			if spooled {
				answer = hang(release)
			}
			f.srv.setDefault(func(w http.ResponseWriter, r *http.Request, b []byte) bool {
				select {
				case arrived <- struct{}{}:
				default:
				}
				return answer(w, r, b)
			})
			lines := makeLines(t, uuid.New(), 1, 3, 10)

			errc := make(chan error, 1)
			go func() { errc <- f.sink.Send(context.Background(), lines, 3) }()
			select {
			case <-arrived:
			case <-time.After(5 * time.Second):
				t.Fatal("the request never arrived")
			}

			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			require.NoError(t, f.sink.Shutdown(ctx))
			var err error
			select {
			case err = <-errc:
			case <-ctx.Done():
				t.Fatal("Send still blocked after Shutdown")
			}
			if spooled {
				require.NoError(t, err)
				// The spool is closed now; its file holds the lines for the next run.
				require.Equal(t, string(lines), string(spoolFileBytes(t, f.spoolPath)))
			} else {
				var re *RefusedError
				require.ErrorAs(t, err, &re)
				require.Equal(t, 3, re.Remaining)
				require.ErrorIs(t, err, context.Canceled)
			}

			err = f.sink.Send(context.Background(), lines, 3)
			var re *RefusedError
			require.ErrorAs(t, err, &re)
			require.ErrorIs(t, err, ErrShutdown)
			require.Equal(t, ReasonShutdown, re.Reason)
		})
	}
}

func TestFullSpoolRefusesVisibly(t *testing.T) {
	path := t.TempDir() + "/small.jsonl"
	lines := makeLines(t, uuid.New(), 1, 3, 10)
	first := splitLines(lines)[0]
	sp := openSpool(t, path, int64(len(first))+10) // room for one line only
	f := newFixture(t, FormatNDJSON, false, giveUpSoon, func(s *Settings) { s.Spool = sp })
	f.srv.down()

	require.NoError(t, f.sink.Send(sendCtx(t), first, 1), "the first line fits")
	err := f.sink.Send(sendCtx(t), lines[len(first):], 2)

	var re *RefusedError
	require.ErrorAs(t, err, &re)
	require.Equal(t, ReasonSpoolFull, re.Reason)
	require.Equal(t, 2, re.Remaining)
	require.False(t, consumererror.IsPermanent(err), "a later attempt may succeed once the spool drains")
	st := f.obs.stats()
	require.Equal(t, 1, st.spooled)
	require.Equal(t, 2, st.refused[ReasonSpoolFull])
	require.Equal(t, int64(len(first)), st.lastSpoolSize)
	require.NotZero(t, f.logs.FilterMessageSnippet("spool refused").FilterField(zapString("reason", ReasonSpoolFull)).Len())
	require.Equal(t, string(first), string(spoolFileBytes(t, path)))
}

func TestErrorsNameNoRequestSecretsOnTransportFailure(t *testing.T) {
	f := newFixture(t, FormatEvent, false, giveUpSoon, func(s *Settings) {
		s.Endpoint = strings.Replace(s.Endpoint, "http://", "http://user:hunter2@", 1) + "?api_key=sekrit"
	})
	f.srv.down()
	err := f.sink.Send(sendCtx(t), makeLines(t, uuid.New(), 1, 1, 1), 1)
	require.Error(t, err)
	require.NotContains(t, err.Error(), "hunter2")
	require.NotContains(t, err.Error(), "sekrit")
	require.Contains(t, err.Error(), "/v1/sandbox/events")
}

func TestRedirects(t *testing.T) {
	other := newTestServer(t) // a different host:port
	// Only the configured path redirects; the target path accepts
	// whatever reaches it.
	redirect := func(code int, to string) behaviour {
		return func(w http.ResponseWriter, r *http.Request, b []byte) bool {
			if r.URL.Path != "/v1/sandbox/events" {
				return ok(w, r, b)
			}
			return status(code, map[string]string{"Location": to}, "")(w, r, b)
		}
	}
	t.Run("308 same host is followed with the body", func(t *testing.T) {
		f := newFixture(t, FormatNDJSON, false)
		f.srv.then(redirect(308, "/v2/events"))
		lines := makeLines(t, uuid.New(), 1, 2, 10)
		require.NoError(t, f.sink.Send(sendCtx(t), lines, 2))
		got := f.srv.all()
		require.Len(t, got, 2)
		require.Equal(t, string(lines), string(got[1].body))
		require.True(t, got[1].accepted)
	})
	for name, b := range map[string]behaviour{
		"302 would turn the POST into a GET": redirect(302, "/v2/events"),
		"307 to another host":                redirect(307, other.URL),
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, FormatNDJSON, true, giveUpSoon)
			f.srv.setDefault(b)
			lines := makeLines(t, uuid.New(), 1, 2, 10)
			require.NoError(t, f.sink.Send(sendCtx(t), lines, 2))
			for _, a := range f.srv.all() {
				require.False(t, a.accepted)
			}
			require.Empty(t, other.all(), "never followed")
			// Kept, not dropped: a misdirected endpoint is a configuration
			// problem an operator can fix.
			require.Equal(t, string(lines), string(spoolFileBytes(t, f.spoolPath)))
			require.Empty(t, f.obs.stats().dropped)
		})
	}
}

// A Retry-After beyond the longest pause is cut, and said once per outage:
// the replayer meets it every round, and a line per round would fill the
// log for as long as the outage lasts.
func TestRetryAfterCutLoggedOncePerOutage(t *testing.T) {
	f := newFixture(t, FormatNDJSON, true, func(s *Settings) { s.Retry.MaxInterval = 20 * time.Millisecond })
	f.srv.setDefault(status(503, map[string]string{"Retry-After": "3600"}, ""))
	f.start(t)
	cuts := func() int {
		return f.logs.FilterMessageSnippet("asked to wait longer than the replayer's longest pause").Len()
	}
	waitRequests := func(n int) {
		t.Helper()
		for i := 0; i < 500 && len(f.srv.all()) < n; i++ {
			time.Sleep(10 * time.Millisecond)
		}
		require.GreaterOrEqual(t, len(f.srv.all()), n)
	}

	require.NoError(t, f.sink.Send(sendCtx(t), makeLines(t, uuid.New(), 1, 2, 10), 2))
	waitRequests(6)
	require.Equal(t, 1, cuts())

	f.srv.setDefault(ok)
	f.waitSpoolEmpty(t)
	f.srv.setDefault(status(503, map[string]string{"Retry-After": "3600"}, ""))
	require.NoError(t, f.sink.Send(sendCtx(t), makeLines(t, uuid.New(), 1, 2, 10), 2))
	waitRequests(len(f.srv.all()) + 4)
	require.Equal(t, 2, cuts(), "a new outage says it again")
}
