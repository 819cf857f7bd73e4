package sandboxauditexporter

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/payloadpolicy"
	"github.com/sandboxaudit/sandboxaudit/internal/redact"
)

// TestLargeEventIsRedactedOnce: an event too large for the cheap bound on
// its line, whose redacted line is measured against max_line_bytes, is
// redacted once: the push allocates about what one redaction of it does,
// not twice that. Each of its 20,000 secrets makes at least one allocation
// per redaction, so the push's own few hundred are far below the margin.
func TestLargeEventIsRedactedOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	cfg.MaxLineBytes = 4 << 20
	te := startExporters(t, cfg)

	const secrets = 20_000
	var members strings.Builder
	for i := range secrets {
		fmt.Fprintf(&members, `,"k%05d":"password=hunter2"`, i)
	}
	body := strings.Replace(execStartJSON(), `"cwd":"/w"`, `"cwd":"/w"`+members.String(), 1)
	e, err := auditevent.DecodeString(body)
	require.NoError(t, err)
	require.Greater(t, auditevent.LineBound(&e)*redact.MaxMarkerLen(), cfg.MaxLineBytes, "the cheap bound must not pass the event")

	table, err := payloadpolicy.NewTable(auditevent.PolicySet{Default: cfg.PayloadPolicy})
	require.NoError(t, err)
	var cuts redact.Counts
	once := mallocs(func() { table.Get("exec").Apply(&e, &cuts) })
	require.Equal(t, secrets, cuts.Total())

	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetEventName("sandbox.session.start")
	lr.Body().SetStr(body)
	push := mallocs(func() { require.NoError(t, te.logs.ConsumeLogs(context.Background(), ld)) })
	assert.Less(t, push, once*3/2, "one redaction allocates %d times; the push %d", once, push)

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, secrets, strings.Count(string(b), `":"password=[REDACTED:password]"`))
	assert.NotContains(t, string(b), "hunter2")
	assert.Equal(t, int64(secrets), te.counter(t, "otelcol_sandboxaudit_exporter_secrets_redacted", "kind", "password"), "the cuts are counted once")
}

// TestMeasuredCopiesPastTheBudget: the copies kept are bounded by
// max_line_bytes; an event past that is redacted again when written, to
// the same line, its cuts counted alike.
func TestMeasuredCopiesPastTheBudget(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	const secrets = 5_000
	cfg.MaxLineBytes = secrets * 60 // one line of some 40 bytes a secret, not two
	te := startExporters(t, cfg)

	ld := plog.NewLogs()
	records := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for _, id := range []string{"0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e", "1b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e"} {
		var members strings.Builder
		for i := range secrets {
			fmt.Fprintf(&members, `,"k%05d":"password=hunter2"`, i)
		}
		body := strings.Replace(execStartJSON(), `"cwd":"/w"`, `"cwd":"/w"`+members.String(), 1)
		lr := records.AppendEmpty()
		lr.SetEventName("sandbox.session.start")
		lr.Body().SetStr(strings.Replace(body, "0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e", id, 1))
	}
	require.NoError(t, te.logs.ConsumeLogs(context.Background(), ld))

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	require.Len(t, lines, 2)
	assert.Equal(t, strings.Replace(lines[0], "0b9d8c7e", "1b9d8c7e", 1), lines[1])
	assert.Equal(t, secrets, strings.Count(lines[1], `":"password=[REDACTED:password]"`))
	assert.Equal(t, int64(2*secrets), te.counter(t, "otelcol_sandboxaudit_exporter_secrets_redacted", "kind", "password"))
}

// mallocs is how many heap allocations f makes.
func mallocs(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs
}
