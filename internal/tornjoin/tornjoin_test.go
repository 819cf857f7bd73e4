package tornjoin

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
)

var session = uuid.MustParse("6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b")

// event builds a finish event as a writer would record it; data is the
// data object's JSON.
func event(seq int64, data string) auditevent.Event {
	return auditevent.Event{
		Version:    1,
		EventID:    uuid.NewSHA1(session, []byte{byte(seq)}),
		TS:         auditevent.TimestampFromTime(time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC)),
		SessionID:  session,
		Seq:        seq,
		Op:         "exec",
		Phase:      auditevent.PhaseFinish,
		SpanID:     "sandbox_op_5c1d",
		Data:       auditevent.MustParseData(data),
		OK:         true,
		DurationMS: 1.5,
		Stdout:     auditevent.Ptr(`{"data":{"nested":true},"event_id":"x"}`),
	}
}

// line is the event's canonical line without its newline, as the encoder
// writes it.
func line(ev auditevent.Event) []byte { return auditevent.AppendJSON(nil, &ev) }

// Every cut of a real line (the torn piece), joined to a whole real line,
// gives back the whole line and the piece's length, even where the piece
// holds objects of its own and JSON text in a string.
func TestFindRecoversTheWholeLineAfterEveryCut(t *testing.T) {
	torn := line(event(4, `{"command":["sh","-c","echo {\"data\":{}}"],"data":{"data":{"x":1}},"exit_code":0}`))
	whole := line(event(5, `{"command":["true"],"exit_code":0}`))
	require.Positive(t, bytes.Index(torn[1:], []byte(lineStart)), "the piece holds a decoy start")
	require.Contains(t, string(torn), `"stdout":"{\"data\":{`, "and JSON text in a string")
	for cut := 1; cut < len(torn); cut++ {
		joined := append(append([]byte(nil), torn[:cut]...), whole...)
		j, ok := Find(joined)
		require.True(t, ok, "cut at %d", cut)
		require.Equal(t, cut, j.Piece, "cut at %d", cut)
		require.Equal(t, whole, joined[j.Piece:])
		require.Equal(t, whole, line(j.Event), "the event decoded is the line's")
		require.Nil(t, j.PieceEvent, "cut at %d", cut)
	}
}

// A piece that is a whole line but for its newline (its writer killed
// after the event's bytes) is read as an event too, before the line
// after it; a piece that only looks like one (starts and ends as a line
// does) is not.
func TestFindReadsAPieceThatLostOnlyItsNewline(t *testing.T) {
	first := event(4, `{"command":["sh","-c","echo {\"data\":{}}"],"data":{"data":{"x":1}}}`)
	second := event(5, `{"exit_code":0}`)
	joined := append(line(first), line(second)...)
	j, ok := Find(joined)
	require.True(t, ok)
	require.Equal(t, len(line(first)), j.Piece)
	require.NotNil(t, j.PieceEvent)
	assert.Equal(t, line(first), line(*j.PieceEvent))
	assert.Equal(t, line(second), line(j.Event))

	var got [][]byte
	for text, ev := range j.Events(joined) {
		assert.Equal(t, text, line(*ev))
		got = append(got, text)
	}
	assert.Equal(t, [][]byte{line(first), line(second)}, got, "in the order written")
	assert.False(t, j.Repeats(joined), "two events")

	twice := append(line(second), line(second)...)
	j, ok = Find(twice)
	require.True(t, ok)
	assert.True(t, j.Repeats(twice), "one event written twice")

	lookalike := append([]byte(`{"data":{"x":1}}`), line(second)...)
	j, ok = Find(lookalike)
	require.True(t, ok)
	assert.Nil(t, j.PieceEvent)
	assert.Equal(t, len(`{"data":{"x":1}}`), j.Piece)
	assert.False(t, j.Repeats(lookalike))
}

// A line that is one event yields it, whole.
func TestEventsOfALineThatIsOneEvent(t *testing.T) {
	ev := event(5, `{"exit_code":0}`)
	j := Join{Event: ev}
	n := 0
	for text, got := range j.Events(line(ev)) {
		assert.Equal(t, line(ev), text)
		assert.Equal(t, ev, *got)
		n++
	}
	assert.Equal(t, 1, n)
}

// A line that is an event by itself, or nothing like one, hides no line.
func TestFindLeavesOtherLinesAlone(t *testing.T) {
	whole := line(event(5, `{"exit_code":0}`))
	nested := line(event(6, `{"event":`+string(whole)+`}`))
	for name, text := range map[string][]byte{
		"a whole line":               whole,
		"a line holding one":         nested,
		"junk with braces":           []byte(`not json {"a":1} {oops}`),
		"a piece then a broken line": append([]byte(`{"data":{"com`), whole[:len(whole)-2]...),
		"a piece then a line cut":    append([]byte(`{"data":{"com`), append(whole[:40:40], '}')...),
		"a piece then a changed line": append([]byte(`{"data":{"com`),
			bytes.Replace(whole, []byte(`"op":"exec"`), []byte(`"op": "exec"`), 1)...),
		"empty":        nil,
		"a lone brace": []byte("}"),
	} {
		_, ok := Find(text)
		assert.False(t, ok, name)
	}
}

// A line of nothing but braces, or of nothing but the start of a line,
// costs at most one check; any line at most two (the line, its piece).
func TestFindIsBounded(t *testing.T) {
	checks := 0
	count := func(b []byte, ev *auditevent.Event) bool { checks++; return canonicalEvent(b, ev) }

	braces := bytes.Repeat([]byte("{"), 1<<20)
	_, ok := find(append(braces, '}'), count)
	assert.False(t, ok)
	assert.Zero(t, checks, "a brace alone starts no line")

	starts := append(bytes.Repeat([]byte(lineStart), 1<<20/len(lineStart)), '}')
	_, ok = find(starts, count)
	assert.False(t, ok)
	assert.LessOrEqual(t, checks, 1)

	// However many starts the piece holds, the line after it is found.
	whole := line(event(5, `{"exit_code":0}`))
	j, ok := Find(append(bytes.Repeat([]byte(lineStart), 1000), whole...))
	assert.True(t, ok)
	assert.Equal(t, 1000*len(lineStart), j.Piece)

	// A piece that starts and ends as a line does is checked once more.
	checks = 0
	_, ok = find(append(starts, whole...), count)
	assert.True(t, ok)
	assert.Equal(t, 2, checks)
}

// A torn piece of a line whose data holds many objects that each begin
// like a line (a list of {"data":{…}} items) still gives back the whole
// line after it.
func TestFindRecoversAfterAPieceWithManyStarts(t *testing.T) {
	items := make([]string, 200)
	for i := range items {
		items[i] = fmt.Sprintf(`{"data":{"k":%d}}`, i)
	}
	torn := line(event(4, `{"items":[`+strings.Join(items, ",")+`]}`))
	whole := line(event(5, `{"exit_code":0}`))
	cut := len(torn) - 200
	require.Greater(t, bytes.Count(torn[1:cut], []byte(lineStart)), 100)
	j, ok := Find(append(torn[:cut:cut], whole...))
	require.True(t, ok)
	require.Equal(t, cut, j.Piece)
}
