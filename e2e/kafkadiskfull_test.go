package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKafkaCentralOnAFullDiskWaitsAndLosesNothing: kafka-central.yaml
// writes to a 64 KiB tmpfs while its partition holds 10 messages of 50
// events each. Once the disk is full the receiver backs off and retries the
// message, never skipping it; given room again, every event arrives, once.
// Needs root to mount the tmpfs; skipped otherwise.
func TestKafkaCentralOnAFullDiskWaitsAndLosesNothing(t *testing.T) {
	requireE2E(t)
	k := newKafkaTier(t)
	mnt := filepath.Dir(k.centralAudit)
	require.NoError(t, os.MkdirAll(mnt, 0o700))
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", mnt).Run() })

	want := map[string]bool{}
	for b := range 10 {
		body, ids := crashBatch(b)
		for _, id := range ids {
			want[id] = true
		}
		produceRaw(t, k.brokers, 0, string(body))
	}
	central := k.startCentral(t)
	// The full disk makes the receiver back off.
	waitLogHas(t, central, "Backing off due to error from the next consumer.")
	full, _ := readEvents(t, k.centralAudit)
	require.Less(t, len(full), len(want), "the disk did not fill")

	out, err := exec.Command("mount", "-o", "remount,size=4m", mnt).CombinedOutput()
	require.NoError(t, err, "%s", out)
	waitLines(t, k.centralAudit, len(want))
	evs, _ := readEvents(t, k.centralAudit)
	got := map[string]int{}
	for _, e := range evs {
		got[e.EventID.String()]++
	}
	for id := range want {
		assert.Equal(t, 1, got[id], "event %s", id)
	}
	assert.Len(t, got, len(want))
	log := string(mustRead(t, central.log))
	assert.NotContains(t, log, "skipping due to message_marking config")
	assert.NotContains(t, log, "pausing partition")
	requireVerifies(t, k.centralAudit)
}
