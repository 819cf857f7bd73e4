package logfield

import (
	"go.uber.org/zap"

	"github.com/sandboxaudit/sandboxaudit/internal/logmap"
	"github.com/sandboxaudit/sandboxaudit/internal/spanmap"
)

// SpanStats logs what mapping one batch of spans skipped: one warning for
// the malformed sandbox spans and one debug line for the optional
// attributes left out, not a line per span, so a misbehaving producer
// cannot flood the log.
func SpanStats(logger *zap.Logger, st spanmap.Stats) {
	if st.Invalid > 0 {
		logger.Warn("Skipped malformed sandbox spans",
			zap.Int("spans", st.Invalid), SpanAttr("first", st.FirstInvalid), SpanAttr("last", st.LastInvalid))
	}
	if st.Ignored > 0 {
		logger.Debug("Left malformed optional attributes out of sandbox events",
			zap.Int("attributes", st.Ignored), SpanAttr("last", st.LastIgnored))
	}
}

// RecordStats logs what mapping one batch of log records skipped, as
// SpanStats does for spans.
func RecordStats(logger *zap.Logger, st logmap.Stats) {
	if st.Invalid > 0 {
		logger.Warn("Skipped log records that claim to be audit events but do not decode",
			zap.Int("records", st.Invalid), EventField("first", st.FirstInvalid), EventField("last", st.LastInvalid))
	}
	if st.Dropped > 0 {
		logger.Debug("Left malformed raw exec output out of audit events",
			zap.Int("records", st.Dropped), SpanAttr("last", st.LastDropped))
	}
}

// SeqEvictions logs that the span mapper dropped n sessions' seq counters;
// the sessions are counted, not named, so their ids stay out of the log.
func SeqEvictions(logger *zap.Logger, n int64) {
	if n > 0 {
		logger.Warn("Span mapper dropped the seq counters of least recently used sessions; "+
			"seqs assigned to their spans that lack seq attributes start again at 1 and may repeat",
			zap.Int64("sessions", n))
	}
}
