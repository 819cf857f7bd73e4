package sandboxauditexporter // import "github.com/sandboxaudit/sandboxaudit/exporter"

import "go.uber.org/zap"

// logCutBack is the file sink's OnCutBack hook: the audit file was cut back
// under the collector, below lines it had acknowledged. No writer of the
// path does that, so it is an ERROR; with integrity on, the sealer stops
// sealing the file, so that what is left does not pass for the log.
func (e *auditExporter) logCutBack(path string, from, to int64) {
	e.logger.Error("The audit file was cut back by another process below lines the collector had acknowledged: "+
		"those lines are gone; the collector goes on at the file's new end",
		zap.String("path", path), zap.Int64("bytes_before", from), zap.Int64("bytes_now", to))
	if e.sealer != nil {
		e.sealer.CutBack(path, from, to)
	}
}
