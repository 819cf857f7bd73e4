// Package spanmap maps sandbox operation spans to audit events and back
// (SPEC section 5). The exporter and the receiver both use it, so the mapping
// exists once; the names it reads and writes are those of package semconv.
//
// # Span to events
//
// A span is a sandbox span when it has both the sandbox.operation and the
// sandbox.session.id attributes; any other span is not an error but
// ErrNotSandboxSpan, which callers count. A sandbox span whose required
// attributes are malformed is skipped with an *AttrError naming the
// attribute. A few optional attributes are forgiven instead of costing the
// whole audit record; each such case is counted in Stats.Ignored:
//
//   - sandbox.event.start_id / finish_id that is not a UUID string: the id is
//     derived as if the attribute were absent;
//   - sandbox.error.code that is not a reference ErrorCode (for example a code
//     from a newer SDK): error_code becomes null, the other error fields stay;
//   - sandbox.exec.stdout_bytes / stderr_bytes (and the sandbox.exec.stdout /
//     stderr extension strings) of the wrong type or with invalid base64: that
//     output is dropped. Exec output only reaches a file when the payload
//     policy asks for it; losing the operation's record over it would be worse.
//
// Seqs: sandbox.event.start_seq / finish_seq are int attributes (a double
// with an integral value is accepted, as some SDKs send every number as a
// double; strings are refused, as the intake refuses them). A missing seq is
// assigned per session in arrival order by the Mapper: one more than the
// highest seq seen (given or assigned) for that session, starting at 1. The
// Mapper keeps these counters for at most maxSessions sessions, least
// recently used first out; a session that was evicted starts again at 1, so
// its assigned seqs can repeat. Size maxSessions above the number of sessions
// that are active at the same time.
//
// Ids: trace_id, span_id and parent_span_id are the span's ids in lowercase
// hex; an empty (all-zero) trace id or parent id is null. Derived event ids
// use the span's own hex ids, whatever the extension attributes below say:
// UUIDv5(d5522618-d9a4-5682-af63-f0e537900855, "<trace_id>/<span_id>/<phase>").
//
// Error messages (AttrError.Msg) name the attribute and the problem and never
// quote a value (not even an op or an error code: a producer may put anything
// there), so they are safe to log and to answer to a client.
//
// # Events to span
//
// AppendSpan builds the span for a start/finish pair (or either alone) so
// that mapping it back yields the same events, canonical line for canonical
// line. Event ids that are OTel hex ids (32 or 16 hex digits, any case, not
// all zero) become the span's ids; otherwise the trace id is the session
// UUID's 16 bytes (one session, one trace) and the span id the first 8 bytes
// of UUIDv5(namespace, "<session_id>/<span_id>"). What the span ids cannot
// hold travels in extension attributes that span-to-events reads back:
//
//   - sandbox.event.trace_id, sandbox.event.span_id,
//     sandbox.event.parent_span_id: the event's id strings when they are not
//     exactly the lowercase hex of the span's ids; an attribute of empty
//     value (pcommon.ValueTypeEmpty) stands for null;
//   - sandbox.event.version (int): the event format version when it is
//     not 1 (the reference keeps whatever version it is given);
//   - sandbox.event.start_ts, sandbox.event.finish_ts: the canonical ts
//     when a span time cannot hold it (an offset other than UTC, a naive
//     time, or an instant outside 1970..2262); the span time is then the
//     same instant (clamped to that range);
//   - sandbox.exec.stdout, sandbox.exec.stderr: already decoded output
//     strings (the Python HttpProxySink sends them after its policy ran);
//   - sandbox.incomplete (bool true): a start whose finish never came; the
//     span ends at its start, status unset, and maps back to the start event
//     only;
//   - sandbox.event.start_missing (bool true): a finish whose start was never
//     seen; the span runs from finish ts minus duration_ms to finish ts and
//     maps back to the finish event only.
//
// AppendSpan takes op, version, trace_id and parent_span_id from the start
// event for both, so a caller pairs only events that agree on them
// (internal/pairing does; the others leave as half spans).
package spanmap
