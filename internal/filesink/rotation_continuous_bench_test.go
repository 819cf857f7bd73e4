package filesink

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkRotationCostContinuous is what rotation and compression cost
// an encoding writer that goes on over many segments, with all of the
// compression counted. In each iteration each of three sinks (no
// rotation; a segment every 8 MB; the same, compressed) takes a turn, in
// an order that turns from one iteration to the next: a new sink writes
// 16 segments' worth of batches (20 batches of 1,000 lines each, encoded
// in the timed loop, fsync batch) back to back, and the turn ends when
// every closed segment is compressed. Nothing is left out of the timed
// turn, so compression that falls behind the writer is paid for where it
// lands. It reports none/off and zstd/off (the plain sink's turn over the
// rotating one's: 1.00 costs nothing) and zstd-tail, the part of the
// compressed turn spent waiting for the last compression after the last
// batch.
func BenchmarkRotationCostContinuous(b *testing.B) {
	const perSegment, segments = 20, 16
	segment := int64(0)
	for j := range perSegment {
		segment += int64(len(auditBatch(j, 1000)))
	}
	rots := []*Rotation{
		nil,
		{MaxBytes: segment, MaxBackups: 4},
		{MaxBytes: segment, MaxBackups: 4, Compress: true, grace: time.Nanosecond},
	}
	dir := b.TempDir()
	spent := make([]time.Duration, len(rots))
	var tail time.Duration
	turn := 0
	for b.Loop() {
		for k := range rots {
			i := (turn + k) % len(rots)
			took, waited := continuousTurn(b, filepath.Join(dir, fmt.Sprint(turn, "-", i)), rots[i], perSegment*segments, perSegment)
			spent[i] += took
			if i == 2 {
				tail += waited
			}
		}
		turn++
	}
	b.ReportMetric(float64(spent[0])/float64(spent[1]), "none/off")
	b.ReportMetric(float64(spent[0])/float64(spent[2]), "zstd/off")
	b.ReportMetric(float64(tail)/float64(spent[2]), "zstd-tail")
}

// continuousTurn writes batches encoded batches to a new sink in dir and,
// with compression on, waits for the last segment's compression; both are
// timed. The sink's setup and closing and the removal of dir are not.
func continuousTurn(b *testing.B, dir string, rot *Rotation, batches, perSegment int) (took, waited time.Duration) {
	b.StopTimer()
	var r *Rotation
	if rot != nil {
		c := *rot
		r = &c
	}
	path := filepath.Join(dir, "events.jsonl")
	s, err := New(Options{Path: path, Fsync: FsyncBatch, Rotation: r})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.StartTimer()
	start := time.Now()
	for j := range batches {
		// The same bytes for each segment, so each segment ends on a batch.
		if err := s.WriteBatch(ctx, testSession, auditBatch(j%perSegment, 1000)); err != nil {
			b.Fatal(err)
		}
	}
	if r != nil && r.Compress {
		waited = waitAllCompressed(b, path)
	}
	took = time.Since(start)
	b.StopTimer()
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		b.Fatal(err)
	}
	b.StartTimer()
	return took, waited
}
