package integrity

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/heaptest"
)

// BenchmarkMemorySealerFiles shows the sealer's memory flat in the number
// of files it has sealed: 100 to 10,000 files of a templated path, 100 new
// ones per seal round, each sealed once with a signed checkpoint. Run with
// -benchtime 1x: one op is the whole run. remembered-files is what the
// sealer holds at the end (at most maxIdleLogs idle files plus the last
// round's).
func BenchmarkMemorySealerFiles(b *testing.B) {
	k, _ := testKeys(b, "bench")
	for _, files := range []int{100, 1000, 10_000} {
		b.Run(fmt.Sprintf("files=%d", files), func(b *testing.B) {
			m := heaptest.Start()
			var s *Sealer
			for b.Loop() {
				s = newSealer(b, k)
				sealRounds(b, s, b.TempDir(), files, 100)
			}
			m.Report(b)
			b.ReportMetric(float64(len(s.logs)), "remembered-files")
			runtime.KeepAlive(s)
		})
	}
}
