package httpsink

import (
	"context"

	"go.uber.org/zap"

	"github.com/sandboxaudit/sandboxaudit/internal/spool"
)

// watchDamage makes the sink log and count the damage sp finds while
// running.
func (s *Sink) watchDamage(sp *spool.Spool) {
	path := sp.Path()
	sp.SetDamageHandler(func(d spool.Damage) { s.spoolDamaged(path, d) })
}

// spoolDamaged logs and counts damage the spool at path found. It runs
// with the spool locked, so it only logs and counts. No field holds the
// damaged bytes: they may be anything, a secret included.
func (s *Sink) spoolDamaged(path string, d spool.Damage) {
	fields := []zap.Field{zap.String("spool", path), zap.String("damage", string(d.Kind)),
		zap.Int64("offset", d.Offset), zap.Int64("bytes", d.Bytes), zap.String("problem", d.Reason)}
	switch d.Kind {
	case spool.DamageLine:
		s.set.Observer.Quarantined(context.Background(), 1)
		if u, ok := s.set.Observer.(UnkeptObserver); ok && d.Kept == "" {
			u.NotKept(context.Background(), 1)
		}
		s.set.Logger.Error("spool line is not a valid audit event (torn, overwritten or with bytes inserted); "+
			keptOrNot(d.Kept)+", never sent; replay goes on with the next line",
			append(fields, zap.String("kept_in", d.Kept))...)
	case spool.DamageResized:
		s.set.Logger.Warn("spool file was changed by something else (cut, or bytes inserted); "+
			"a torn last line is closed before the next append and damaged lines are quarantined on replay", fields...)
	case spool.DamageRemoved:
		s.set.Logger.Warn("spool file was removed or renamed; its pending lines were written to a new file at its path", fields...)
	default:
		s.set.Logger.Warn("spool's .offset sidecar was missing; written again so a restart finds the spool", fields...)
	}
}

// keptOrNot says where a damaged line went: the quarantine file, or
// nowhere when that could not take it (problem says why).
func keptOrNot(kept string) string {
	if kept == "" {
		return "not kept (the quarantine file could not take it: see problem)"
	}
	return "set aside in the quarantine file"
}
