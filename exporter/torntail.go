package sandboxauditexporter // import "github.com/sandboxaudit/sandboxaudit/exporter"

import (
	"go.uber.org/zap"

	"github.com/sandboxaudit/sandboxaudit/internal/filesink"
	"github.com/sandboxaudit/sandboxaudit/internal/fsutil"
)

// logTornTail reports a torn last line the file sink cut off a file (a
// writer killed mid-write), naming the file and when it was cut: never its
// bytes, which are an event's and may hold what the payload policy let
// through.
func (e *auditExporter) logTornTail(path string, torn fsutil.TornTail, site filesink.TornSite) {
	where, why := "the audit file "+path+", before writing to it", "a writer killed mid-write, never acknowledged"
	switch site {
	case filesink.TornInSegment:
		where = "the closed segment " + path + ", before compressing it"
	case filesink.TornAfterCutBack:
		why = "left by the cut below acknowledged lines reported above"
	}
	if torn.KeptIn == "" {
		e.logger.Warn("A torn last line ("+why+") of "+where+" was not cut off and kept aside (not_kept says why), "+
			"so it was closed with a newline where it is; verify will report it",
			zap.String("path", path), zap.Int64("bytes", torn.Bytes), zap.NamedError("not_kept", torn.NotKept))
		return
	}
	e.logger.Warn("Cut a torn last line ("+why+") off "+where,
		zap.String("path", path), zap.Int64("bytes", torn.Bytes), zap.String("kept_in", torn.KeptIn))
}
