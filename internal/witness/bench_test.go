package witness_test

import (
	"context"
	"fmt"
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
