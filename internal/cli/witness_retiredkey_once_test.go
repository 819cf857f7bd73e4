package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// verify --alone given every segment of the new log reports a --witness
// key that signed the handover note beside the log once for the log, not
// once per segment: it is one problem of the run.
func TestVerifyAloneWitnessRetiredKeyReportedOncePerLog(t *testing.T) {
	path, _, oldPub, newKey := handOverRotated(t)
	segs := rotateNewLog(t, path, newKey, 30)
	newPub := strings.TrimSuffix(newKey, ".key") + ".pub"
	retiredKey := cosignatureKeyFile(t, oldPub, "witness.example/w3")
	args := []string{"verify", "--key", newPub, "--witness", retiredKey, "--quorum", "1", "--alone"}
	for _, s := range segs {
		args = append(args, s.Path)
	}
	res := run(t, "", args...)
	require.Equal(t, 1, res.code, res.stdout+res.stderr)
	refused := path + ": handover: --witness " + retiredKey + " holds a key the log was handed over from"
	require.Equal(t, 1, strings.Count(res.stdout, refused), res.stdout)
	// Each segment is a problem of its own (no cosigned checkpoint holds
	// it), and the refused key one more.
	require.Equal(t, len(segs), strings.Count(res.stdout, "witness: no checkpoint that 1/1 witnesses cosigned"), res.stdout)
	require.Contains(t, res.stdout, fmt.Sprintf(" problems=%d ", len(segs)+1))
}
