package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// OTel trace and span ids are hex, whatever the case they are typed in;
// a span id that is not hex (the Python SDK's own) is matched as written.
func TestShowTraceAndSpanFiltersIgnoreTheCaseOfHex(t *testing.T) {
	s1, f1 := op(sessionA, "exec", "00f067aa0ba902b7", 1, 2)
	s2, f2 := op(sessionA, "write", "span-B", 3, 4)
	s2.TraceID, f2.TraceID = auditevent.Ptr("0af7651916cd43dd8448eb211c80319c"), auditevent.Ptr("0af7651916cd43dd8448eb211c80319c")
	p := writeFile(t, "events.jsonl", canonLines(s1, f1, s2, f2))

	for _, tc := range []struct {
		flag, id string
		want     []string // the ops shown
	}{
		{"--trace", "4BF92F3577B34DA6A3CE929D0E0E4736", []string{"exec"}},
		{"--trace", "4bf92f3577b34da6a3ce929d0e0e4736", []string{"exec"}},
		{"--trace", "0AF7651916cd43dd8448EB211C80319C", []string{"write"}},
		{"--span", "00F067AA0BA902B7", []string{"exec"}},
		{"--span", "span-B", []string{"write"}},
		{"--span", "SPAN-B", nil},
		{"--span", "span-b", nil},
	} {
		r := run(t, "", "show", "--output", "json", tc.flag, tc.id, p)
		require.Equal(t, exitOK, r.code, r.stderr)
		var ops []string
		for _, name := range []string{"exec", "write"} {
			if strings.Contains(r.stdout, `"op":"`+name+`"`) || strings.Contains(r.stdout, `"op": "`+name+`"`) {
				ops = append(ops, name)
			}
		}
		assert.Equal(t, tc.want, ops, "%s %s: %s", tc.flag, tc.id, r.stdout)
	}
}

// An operation whose start and finish name different traces is one
// operation: --trace keeps it whole when either line is of the trace.
func TestShowTraceKeepsAnOperationWhenEitherLineMatches(t *testing.T) {
	s, f := op(sessionA, "exec", "00f067aa0ba902b7", 1, 2)
	f.TraceID = auditevent.Ptr("0af7651916cd43dd8448eb211c80319c")
	p := writeFile(t, "events.jsonl", canonLines(s, f))
	for _, id := range []string{"4bf92f3577b34da6a3ce929d0e0e4736", "0af7651916cd43dd8448eb211c80319c"} {
		r := run(t, "", "show", "--output", "jsonl", "--trace", id, p)
		require.Equal(t, exitOK, r.code, r.stderr)
		assert.Equal(t, canonLines(s, f), r.stdout, "--trace %s", id)
	}
	r := run(t, "", "show", "--output", "jsonl", "--trace", "11111111111111111111111111111111", p)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Empty(t, r.stdout)
}
