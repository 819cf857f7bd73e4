package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// result is one in-process run of the tool.
type result struct {
	code           int
	stdout, stderr string
}

func run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	code := Run(ctx, args, Streams{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errOut})
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

var (
	sessionA = uuid.MustParse("6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b")
	sessionB = uuid.MustParse("11111111-2222-4333-8444-555555555555")
)

// op builds the start and finish events of one operation, as the exporter
// writes them, with deterministic ids.
func op(session uuid.UUID, name, spanID string, startSeq, finishSeq int64) (start, finish auditevent.Event) {
	ts := auditevent.TimestampFromTime(time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC))
	start = auditevent.Event{
		Version:   1,
		EventID:   uuid.NewSHA1(session, []byte(spanID+"/start")),
		TS:        ts,
		SessionID: session,
		Seq:       startSeq,
		Op:        name,
		Phase:     auditevent.PhaseStart,
		SpanID:    spanID,
		TraceID:   auditevent.Ptr("4bf92f3577b34da6a3ce929d0e0e4736"),
	}
	finish = start
	finish.EventID = uuid.NewSHA1(session, []byte(spanID+"/finish"))
	finish.Seq = finishSeq
	finish.Phase = auditevent.PhaseFinish
	finish.OK = true
	finish.DurationMS = 1.5
	return start, finish
}

// canonLines renders events as canonical lines (the encoder is checked against
// the reference vectors in auditevent; here it only builds fixtures).
func canonLines(evs ...auditevent.Event) string {
	var b []byte
	for i := range evs {
		b = auditevent.AppendLine(b, &evs[i])
	}
	return string(b)
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}
