package witness_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zapcore"
	"golang.org/x/mod/sumdb/note"

	"github.com/sandboxaudit/sandboxaudit/internal/witness"
	"github.com/sandboxaudit/sandboxaudit/internal/witness/witnesstest"
)

// A cosignature dated far after the clock (a witness whose clock is
// wrong, or whose key signs what it likes) is a bad answer: refused,
// counted and logged as one, and not returned to be stored. One dated
// within the clock skew allowed is taken.
func TestPoolRefusesACosignatureDatedInTheFuture(t *testing.T) {
	log := newTestLog(t, "example.com/log")
	w1 := witnesstest.Start(t, "witness.example/w1", log.verifier)
	p, obs, logs := newPool(t, 1, w1)
	log.add(3, "a")

	w1.SetClockSkew(time.Hour)
	cosigs, quorum := p.Cosign(context.Background(), "f", log.origin, log.n, log.checkpoint(), log.prover())
	require.False(t, quorum)
	require.Empty(t, cosigs)
	require.Equal(t, map[string]int{"witness.example/w1/dated_ahead": 1}, obs.failed)
	errs := logs.FilterLevelExact(zapcore.ErrorLevel).All()
	require.Len(t, errs, 1)
	require.Contains(t, errs[0].ContextMap()["error"], "dated more than 10m0s after this host's clock")

	w1.SetClockSkew(witness.MaxClockSkew / 2)
	p, _, _ = newPool(t, 1, w1) // the one before pauses the witness
	cosigs, quorum = p.Cosign(context.Background(), "f", log.origin, log.n, log.checkpoint(), log.prover())
	require.True(t, quorum)
	require.Len(t, cosigs, 1)
}

// A record the witnessed sidecar holds with a future-dated cosignature
// does not count toward the quorum at the collector's next start either.
func TestCountCosignaturesLeavesOutAFutureOne(t *testing.T) {
	log := newTestLog(t, "example.com/log")
	w1 := witnesstest.Start(t, "witness.example/w1", log.verifier)
	log.add(2, "a")
	signed := log.checkpoint()
	text, _, _ := strings.Cut(string(signed), "\n\n")
	w1.SetClockSkew(time.Hour)
	line, err := w1.CosignatureLine(text + "\n")
	require.NoError(t, err)
	v := witnesstest.Witnesses(t, w1)[0].Verifier()
	require.Equal(t, 0, witness.CountCosignatures(append(signed, line...), []note.Verifier{v}))
	w1.SetClockSkew(0)
	line, err = w1.CosignatureLine(text + "\n")
	require.NoError(t, err)
	require.Equal(t, 1, witness.CountCosignatures(append(signed, line...), []note.Verifier{v}))
}
