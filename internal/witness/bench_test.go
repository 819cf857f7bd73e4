package witness_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/sandboxaudit/sandboxaudit/internal/witness"
	"github.com/sandboxaudit/sandboxaudit/internal/witness/witnesstest"
)

// BenchmarkCosign measures one checkpoint submitted to every witness of a
// pool (loopback fake witnesses), and reports the add-checkpoint round
// trips each checkpoint took: 1 per witness in the steady state, 2 after a
// restart (the 409 that tells the witness's size, then the retry).
func BenchmarkCosign(b *testing.B) {
	// The peer: what a checkpoint costs without witnesses (signing it).
	b.Run("peer=sign-only", func(b *testing.B) {
		log := newTestLog(b, "example.com/log")
		for range b.N {
			b.StopTimer()
			log.add(10, "l")
			b.StartTimer()
			_ = log.checkpoint()
		}
	})
	for _, n := range []int{1, 3} {
		b.Run(fmt.Sprintf("witnesses=%d", n), func(b *testing.B) {
			log := newTestLog(b, "example.com/log")
			var fakes []*witnesstest.Fake
			for i := range n {
				fakes = append(fakes, witnesstest.Start(b, fmt.Sprintf("w%d.example/w", i), log.verifier))
			}
			p, err := witness.NewPool(witnesstest.Witnesses(b, fakes...), n, nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				log.add(10, "l")
				signed := log.checkpoint()
				b.StartTimer()
				if _, ok := p.Cosign(context.Background(), "f", log.origin, log.n, signed, log.prover()); !ok {
					b.Fatal("not cosigned")
				}
			}
			b.ReportMetric(float64(fakes[0].Requests())/float64(b.N), "roundtrips/checkpoint")
		})
	}
	b.Run("after-restart", func(b *testing.B) {
		log := newTestLog(b, "example.com/log")
		fake := witnesstest.Start(b, "w.example/w", log.verifier)
		b.ResetTimer()
		for range b.N {
			b.StopTimer()
			p, err := witness.NewPool(witnesstest.Witnesses(b, fake), 1, nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			log.add(10, "l")
			signed := log.checkpoint()
			b.StartTimer()
			if _, ok := p.Cosign(context.Background(), "f", log.origin, log.n, signed, log.prover()); !ok {
				b.Fatal("not cosigned")
			}
		}
		b.ReportMetric(float64(fake.Requests())/float64(b.N), "roundtrips/checkpoint")
	})
}

// BenchmarkCosignPausedAmongRewritten measures a round's Cosign of logs a
// witness refused as rewritten (a 422 each: a cause per log, the witness
// paused for each), the case where the pool's bookkeeping, not the
// network, is the cost: a templated path's sessions after a witness lost
// its state. One op is one log's Cosign.
func BenchmarkCosignPausedAmongRewritten(b *testing.B) {
	const logs = 2048
	key := newTestLog(b, "example.com/key")
	fake := witnesstest.Start(b, "w.example/w", key.verifier)
	fake.SetStatus(http.StatusUnprocessableEntity)
	p, err := witness.NewPool(witnesstest.Witnesses(b, fake), 1, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	ls := make([]*testLog, logs)
	for k := range ls {
		ls[k] = &testLog{t: b, origin: fmt.Sprintf("example.com/session-%d", k), signer: key.signer, verifier: key.verifier}
		ls[k].add(2, "x")
	}
	cosign := func(l *testLog, signed []byte) {
		if _, ok := p.Cosign(context.Background(), l.origin+".jsonl", l.origin, l.n, signed, l.prover()); ok {
			b.Fatal("cosigned by a witness that refuses")
		}
	}
	signed := make([][]byte, logs)
	for k, l := range ls {
		signed[k] = l.checkpoint()
		cosign(l, signed[k])
	}
	b.ResetTimer()
	for i := range b.N {
		cosign(ls[i%logs], signed[i%logs])
	}
}
