package idwindow

import (
	"crypto/rand"
	"testing"
)

// BenchmarkAddNewFull is the exporter's use: a full window of 100,000
// random 16-byte ids, each batch of 1,000 new ids checked and added under
// one lock. ns/op is per id.
func BenchmarkAddNewFull(b *testing.B) {
	const size, batch = 100_000, 1000
	w, err := New[[16]byte](size)
	if err != nil {
		b.Fatal(err)
	}
	keys := make([][16]byte, 4*size) // cycles so old ids come back after leaving
	for i := range keys {
		_, _ = rand.Read(keys[i][:])
	}
	fresh := make([]bool, batch)
	for i := 0; i < size; i += batch {
		w.AddNew(keys[i:i+batch], fresh)
	}
	next := size
	b.ReportAllocs()
	for b.Loop() {
		if next+batch > len(keys) {
			next = 0
		}
		w.AddNew(keys[next:next+batch], fresh)
		next += batch
	}
	b.SetBytes(0)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/id")
}

// BenchmarkReserveCommitFull is the exporter's start-event path: the same
// window and batches, each batch reserved, then committed once written.
func BenchmarkReserveCommitFull(b *testing.B) {
	const size, batch = 100_000, 1000
	w, err := New[[16]byte](size)
	if err != nil {
		b.Fatal(err)
	}
	keys := make([][16]byte, 4*size)
	for i := range keys {
		_, _ = rand.Read(keys[i][:])
	}
	dup := make([]bool, batch)
	for i := 0; i < size; i += batch {
		w.Commit(keys[i : i+batch]...)
	}
	next := size
	b.ReportAllocs()
	for b.Loop() {
		if next+batch > len(keys) {
			next = 0
		}
		clear(dup)
		if !w.Reserve(keys[next:next+batch], dup) {
			b.Fatal("reserved by nobody else, yet refused")
		}
		w.Commit(keys[next : next+batch]...)
		next += batch
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/id")
}
