package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

// A time window that ends before it starts (--since and --until swapped)
// matches nothing whatever the trail holds: it is refused as a mistake,
// naming both flags, rather than answered with an empty list that reads
// as "nothing happened then".
func TestShowRefusesAnEmptyTimeWindow(t *testing.T) {
	s, f := op(sessionA, "exec", "span-0", 1, 2)
	p := writeFile(t, "events.jsonl", canonLines(s, f))
	for _, w := range [][2]string{
		{"2026-03-15", "2026-03-14"},
		{"2026-03-14T15:09:26Z", "2026-03-14T15:09:26Z"},
		{"1h", "2h"}, // an hour ago, until two hours ago
	} {
		r := run(t, "", "show", "--since", w[0], "--until", w[1], p)
		assert.Equal(t, exitUsage, r.code, "%v: %s", w, r.stdout)
		assert.Contains(t, r.stderr, "--until", w)
		assert.Contains(t, r.stderr, "--since", w)
	}
	r := run(t, "", "show", "--since", "2026-03-14", "--until", "2026-03-15", p)
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "1 operation:")
}

// 0001-01-01T00:00:00Z is Go's zero time, and a time like another: a
// window that ends there keeps the operations that started before it (a
// ts with an offset can be earlier), and one that starts and ends there
// is refused as empty.
func TestShowWindowAtTheFirstInstantOfYearOne(t *testing.T) {
	s1, f1 := op(sessionA, "exec", "span-1", 1, 2)
	s2, f2 := op(sessionA, "exec", "span-2", 3, 4)
	var err error
	s1.TS, err = auditevent.ParseTimestamp("0001-01-01T00:00:00+00:01") // 0000-12-31T23:59:00Z
	require.NoError(t, err)
	p := writeFile(t, "events.jsonl", canonLines(s1, f1, s2, f2))
	for _, until := range []string{"0001-01-01", "0001-01-01T00:00:00Z"} {
		r := run(t, "", "show", "--output", "jsonl", "--until", until, p)
		assert.Equal(t, exitOK, r.code, r.stderr)
		assert.Equal(t, canonLines(s1, f1), r.stdout, "--until %s", until)
	}
	r := run(t, "", "show", "--output", "jsonl", "--since", "0001-01-01", p)
	assert.Equal(t, canonLines(s2, f2), r.stdout, "--since 0001-01-01")
	r = run(t, "", "show", "--since", "0001-01-01", "--until", "0001-01-01", p)
	assert.Equal(t, exitUsage, r.code, r.stdout)
}
