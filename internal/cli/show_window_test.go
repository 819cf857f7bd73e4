package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
