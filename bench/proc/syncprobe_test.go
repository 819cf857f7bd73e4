package proc

import (
	"os"
	"testing"
	"time"
)

func TestSyncProbe(t *testing.T) {
	dir := t.TempDir()
	d, err := SyncProbe(dir, 5, 4096+17)
	if err != nil {
		t.Fatal(err)
	}
	if d <= 0 {
		t.Errorf("median sync time %v, want > 0", d)
	}
	left, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("the probe left %d files in %s", len(left), dir)
	}
	if d, err := SyncProbeAfter(dir, 3, 100, time.Millisecond); err != nil || d <= 0 {
		t.Errorf("after a pause: %v, %v; want a time > 0", d, err)
	}
	if _, err := SyncProbeAfter(dir, 1, 1, -time.Millisecond); err == nil {
		t.Error("a negative gap: want an error")
	}
	if _, err := SyncProbe(dir, 0, 1); err == nil {
		t.Error("no writes: want an error")
	}
	if _, err := SyncProbe(dir+"/missing", 1, 1); err == nil {
		t.Error("a missing directory: want an error")
	}
}
