package sandboxauditencoding

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUnmarshalRefusesALineThatWouldDecodeDifferentlyEachTime: a message
// is read again after a rebalance or a crash, and a producer may write one
// twice; a line without event_id or ts would get a new id or the time of
// each read, so its copies could not be told apart from other events
// (verify finds its seq used twice). Such a line refuses the message,
// naming the field; every line MarshalLogs and MarshalTraces write has
// both.
func TestUnmarshalRefusesALineThatWouldDecodeDifferentlyEachTime(t *testing.T) {
	ext := newExt(t, &Config{}, nil)
	noID := strings.Replace(goodFinish, `"event_id":"1b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e",`, "", 1)
	noTS := strings.Replace(goodFinish, `"ts":"2026-03-14T15:09:26.538897Z",`, "", 1)
	require.NotEqual(t, goodFinish, noID)
	require.NotEqual(t, goodFinish, noTS)
	for field, line := range map[string]string{"event_id": noID, "ts": noTS} {
		msg := []byte(goodStart + "\n" + line + "\n")
		_, err := ext.UnmarshalLogs(msg)
		assert.EqualError(t, err, "sandboxaudit_encoding: invalid message: line 2: "+field+": missing", "logs")
		_, err = ext.UnmarshalTraces(msg)
		assert.EqualError(t, err, "sandboxaudit_encoding: invalid message: line 2: "+field+": missing", "traces")
	}
}
