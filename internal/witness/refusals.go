package witness

import (
	"errors"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// summaryEvery is how often, at most, the logs one witness refuses for
// one cause are summed up in a line: a templated path makes one log per
// session, and a witness that knows none of them refuses thousands.
const summaryEvery = time.Minute

// sweepEvery is how often, at most, summariesDue looks for summaries due:
// one is late by at most this much.
const sweepEvery = time.Second

// refusalKey is one witness's refusal of logs for one cause (the error's
// text). A refusal saying a log's history was rewritten (a 422, or a 409
// naming a tree this log's does not extend: forked, or cut back) is that
// log's alone (origin set): it is what an attack on the log looks like,
// so each log so refused is named at once, never only counted in a
// summary, even when its text is another log's (the same size).
type refusalKey struct {
	witness int
	cause   string
	origin  string
}

// refusalKeyOf is the cause witness i's refusal err of origin's log is
// summed up under.
func refusalKeyOf(i int, origin string, err error) refusalKey {
	ck := refusalKey{witness: i, cause: err.Error()}
	var ce *ConflictError
	if Reason(err) == "inconsistent" || errors.As(err, &ce) {
		ck.origin = origin
	}
	return ck
}

// refusals sums up what one witness refuses for one cause.
type refusals struct {
	logs     int       // logs it refuses now for this cause
	lastLine time.Time // when a line about them was last logged
	refused  int       // logs refused since that line
	back     int       // logs cosigned again since that line
	example  example   // the latest log refused
	backEx   example   // the latest log cosigned again
}

// example is one log a summary names.
type example struct{ path, origin string }

// entry is a line to log once the pool's lock is released.
type entry struct {
	level  zapcore.Level
	msg    string
	fields []zap.Field
}

func logEntries(logger *zap.Logger, es []entry) {
	for _, e := range es {
		logger.Log(e.level, e.msg, e.fields...)
	}
}

// record says what witness i's answer about the checkpoint (path, origin,
// size n) logs. A failure of the witness itself is logged once for every
// log; a refusal of one log, at once for the first log of its cause, then
// summed up (refusedLocked). A cosignature says that the witness, or the
// log, is back.
func (p *Pool) record(i int, name, path, origin string, n int64, err error) []entry {
	now := p.settings().now()
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case err == nil:
		return p.cosignedLocked(i, name, path, origin, now)
	case failsItself(err):
		if p.down[i] == err.Error() {
			return nil
		}
		p.down[i] = err.Error()
		return []entry{notCosigned(name, path, origin, n, err)}
	}
	return p.refusedLocked(i, name, path, origin, n, err, now)
}

// notCosigned is the line of a witness's failure, or of the first log it
// refuses for a cause.
func notCosigned(name, path, origin string, n int64, err error) entry {
	return entry{level: zapcore.ErrorLevel,
		msg: "integrity: witness did not cosign the checkpoint (it stays in the sidecar and is submitted again)",
		fields: []zap.Field{zap.String("path", path), zap.String("witness", name), zap.String("origin", origin),
			zap.Int64("size", n), zap.Error(err)}}
}

// refusedLocked records that witness i refused origin's log with err. A
// log refused again for the same cause logs nothing (the metric counts
// it); the first log of a cause is logged at once; more logs of that cause
// are summed up at most every summaryEvery. Called with mu held.
func (p *Pool) refusedLocked(i int, name, path, origin string, n int64, err error, now time.Time) []entry {
	ck := refusalKeyOf(i, origin, err)
	key := knownKey{witness: i, origin: origin}
	prev, had := p.refused[key]
	if had && prev == ck {
		return nil
	}
	var out []entry
	if had {
		out = p.leaveLocked(prev, name, now)
	}
	if len(p.refused) >= maxLogged {
		// Each cause is logged at once again, from the next log refused.
		clear(p.refused)
		clear(p.causes)
	}
	p.refused[key] = ck
	r := p.causes[ck]
	if r == nil {
		p.causes[ck] = &refusals{logs: 1, lastLine: now}
		return append(out, notCosigned(name, path, origin, n, err))
	}
	r.logs++
	r.refused++
	r.example = example{path: path, origin: origin}
	if now.Sub(r.lastLine) >= summaryEvery {
		out = append(out, r.summary(name, ck.cause, now)...)
	}
	return out
}

// cosignedLocked records a cosignature by witness i of origin's log: a
// witness that had failed itself, or had refused this log, is said to be
// back. Called with mu held.
func (p *Pool) cosignedLocked(i int, name, path, origin string, now time.Time) []entry {
	var out []entry
	if _, ok := p.down[i]; ok {
		delete(p.down, i)
		out = append(out, entry{level: zapcore.InfoLevel,
			msg:    "integrity: witness cosigns again (it had failed for every log)",
			fields: []zap.Field{zap.String("witness", name), zap.String("origin", origin), zap.String("path", path)}})
	}
	key := knownKey{witness: i, origin: origin}
	ck, ok := p.refused[key]
	if !ok {
		return out
	}
	delete(p.refused, key)
	if r := p.causes[ck]; r != nil {
		r.back++
		r.backEx = example{path: path, origin: origin}
	}
	return append(out, p.leaveLocked(ck, name, now)...)
}

// leaveLocked takes a log out of the logs ck's witness refuses for its
// cause: once none is left, what is not logged yet is, and the cause is
// forgotten (its next refusal is logged at once). Called with mu held.
func (p *Pool) leaveLocked(ck refusalKey, name string, now time.Time) []entry {
	r := p.causes[ck]
	if r == nil {
		return nil
	}
	r.logs--
	if r.logs > 0 {
		if now.Sub(r.lastLine) >= summaryEvery {
			return r.summary(name, ck.cause, now)
		}
		return nil
	}
	delete(p.causes, ck)
	return r.summary(name, ck.cause, now)
}

// summariesDue sums up each cause whose last line is summaryEvery old and
// that has news: logs refused or cosigned again since.
func (p *Pool) summariesDue() []entry {
	now := p.settings().now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if now.Sub(p.swept) < sweepEvery {
		return nil
	}
	p.swept = now
	var out []entry
	for ck, r := range p.causes {
		if now.Sub(r.lastLine) >= summaryEvery {
			out = append(out, r.summary(p.witnesses[ck.witness].Name, ck.cause, now)...)
		}
	}
	return out
}

// summary is the lines about the logs refused and cosigned again since
// the last line (none when there are none), and starts the next interval.
func (r *refusals) summary(name, cause string, now time.Time) []entry {
	var out []entry
	if r.refused > 0 {
		out = append(out, entry{level: zapcore.ErrorLevel,
			msg: "integrity: witness refused the checkpoints of more logs for the same cause " +
				"(summed up at most once a minute; each stays in its sidecar and is submitted again)",
			fields: []zap.Field{zap.String("witness", name), zap.Int("new_logs", r.refused), zap.Int("logs_refused", r.logs),
				zap.String("origin", r.example.origin), zap.String("path", r.example.path), zap.String("error", cause)}})
	}
	if r.back > 0 {
		out = append(out, entry{level: zapcore.InfoLevel,
			msg: "integrity: witness cosigns again logs it had refused",
			fields: []zap.Field{zap.String("witness", name), zap.Int("logs_back", r.back), zap.Int("logs_refused", r.logs),
				zap.String("origin", r.backEx.origin), zap.String("path", r.backEx.path), zap.String("refused_for", cause)}})
	}
	if out != nil {
		r.refused, r.back, r.lastLine = 0, 0, now
	}
	return out
}
