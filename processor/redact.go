package sandboxauditprocessor // import "github.com/sandboxaudit/sandboxaudit/processor"

import (
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/redact"
	"github.com/sandboxaudit/sandboxaudit/semconv"
)

// redactAttrs cuts secrets from both data attributes, the error message
// and type, the event ids that are not the span's own and the copies of
// data values, as the exporter cuts them from the line. Exec output, raw
// or text, was redacted by applyOutput.
func redactAttrs(attrs pcommon.Map, r *redact.Redactor, cuts *redact.Counts) {
	redactData(attrs, semconv.AttrStartData, r, cuts)
	redactData(attrs, semconv.AttrFinishData, r, cuts)
	redactStr(attrs, semconv.AttrErrorMessage, r, cuts)
	redactStr(attrs, semconv.AttrErrorType, r, cuts)
	// The event ids that are not the span's own: any string the receiver took.
	for _, key := range [...]string{semconv.AttrEventSpanID, semconv.AttrEventParentSpanID, semconv.AttrEventTraceID} {
		if v, ok := text(attrs, key); ok {
			if s, changed := r.ID(v.Str(), cuts); changed {
				v.SetStr(s)
			}
		}
	}
	redactFlatCopies(attrs, r, cuts)
	redactScalars(attrs, r, cuts)
}

// redactScalars cuts secrets from the other attributes of a sandbox span
// (docs/format.md) wherever they hold text: the backend name, and values
// that are ids, times, codes, numbers or flags when well formed. A producer
// may put any text there (an error's text as its code, a URL with its
// password as the backend); the exporter drops or refuses such a value, but
// the tracing backend would show it. Well-formed values hold no secret and
// stay; a value of another type is left for the exporter to refuse, with
// the text inside it cut.
func redactScalars(attrs pcommon.Map, r *redact.Redactor, cuts *redact.Counts) {
	for k, v := range attrs.All() {
		if !scalarAttr(k) {
			continue
		}
		switch v.Type() {
		case pcommon.ValueTypeStr:
			redactText(v, r, cuts)
		case pcommon.ValueTypeSlice, pcommon.ValueTypeMap, pcommon.ValueTypeBytes:
			redactTree(v, r, cuts)
		}
	}
}

// scalarAttr reports whether key is a sandbox span attribute that
// redactScalars covers: every one but those redactAttrs and applyOutput
// cut as data, text or an id.
func scalarAttr(key string) bool {
	switch key {
	case semconv.AttrOperation, semconv.AttrSessionID, semconv.AttrBackend,
		semconv.AttrStartSeq, semconv.AttrFinishSeq, semconv.AttrStartID, semconv.AttrFinishID,
		semconv.AttrOK, semconv.AttrDurationMS, semconv.AttrErrorCode, semconv.AttrErrorRetryable,
		semconv.AttrEventVersion, semconv.AttrStartTS, semconv.AttrFinishTS,
		semconv.AttrIncomplete, semconv.AttrStartMissing, semconv.AttrEventPhase, semconv.AttrEventSeq,
		semconv.AttrProcessExitCode, semconv.AttrServerPort:
		return true
	}
	return false
}

// redactSpan cuts secrets from the span fields its events are made of
// beyond its attributes (redactAttrs): the status message error_message
// falls back to, and the exception events that repeat it.
func redactSpan(span ptrace.Span, r *redact.Redactor, cuts *redact.Counts) {
	if msg := span.Status().Message(); msg != "" {
		if s, changed := r.String(msg, cuts); changed {
			span.Status().SetMessage(s)
		}
	}
	redactExceptions(span.Events(), r, cuts)
}

// The OTel exception event and the attributes that repeat the error text.
const (
	exceptionEvent      = "exception"
	exceptionMessage    = "exception.message"
	exceptionStacktrace = "exception.stacktrace"
	exceptionType       = "exception.type"
)

// redactExceptions cuts secrets from the exception events an OTel SDK adds
// when it records an error: their message is the status message's, which
// the exporter's error_message may come from, and their type is error.type's.
func redactExceptions(events ptrace.SpanEventSlice, r *redact.Redactor, cuts *redact.Counts) {
	for i := range events.Len() {
		ev := events.At(i)
		if ev.Name() == exceptionEvent {
			redactEveryCopy(ev.Attributes(), r, cuts, exceptionMessage, exceptionStacktrace, exceptionType)
		}
	}
}

// redactFlatCopies cuts secrets from the attributes sandboxtrace copies
// from an operation's data (appendFlatCopies): the exporter cuts them from
// the data, and a backend shows the copy. The numeric copies hold none.
func redactFlatCopies(attrs pcommon.Map, r *redact.Redactor, cuts *redact.Counts) {
	redactEveryCopy(attrs, r, cuts, semconv.AttrServerAddress)
}

// redactEveryCopy cuts secrets from every copy of the attributes keys name
// (OTLP can carry a key twice, and a backend may show either copy). A value
// that is not text is removed, as in text.
func redactEveryCopy(attrs pcommon.Map, r *redact.Redactor, cuts *redact.Counts, keys ...string) {
	attrs.RemoveIf(func(k string, v pcommon.Value) bool {
		if !slices.Contains(keys, k) {
			return false
		}
		switch v.Type() {
		case pcommon.ValueTypeStr:
			redactText(v, r, cuts)
		case pcommon.ValueTypeSlice, pcommon.ValueTypeMap, pcommon.ValueTypeBytes:
			return true
		}
		return false
	})
}

// redactData redacts a data attribute as the exporter redacts an event's
// data; text that is not a JSON object (the exporter refuses the span) is
// redacted as plain text, so a tracing backend does not get it in clear.
func redactData(attrs pcommon.Map, key string, r *redact.Redactor, cuts *redact.Counts) {
	if v, ok := text(attrs, key); ok {
		redactJSONText(v, r, cuts)
	}
}

// redactJSONText redacts the text v holds as the exporter redacts an
// event's data when it is a JSON object, and as plain text otherwise. A
// JSON object passes as the canonical text the exporter reads, even when
// nothing is cut: of a key named twice that text keeps the last copy, and
// the earlier one, never scanned, may hold a secret.
func redactJSONText(v pcommon.Value, r *redact.Redactor, cuts *redact.Counts) {
	d, err := auditevent.ParseDataString(v.Str())
	if err != nil {
		redactText(v, r, cuts)
		return
	}
	red, changed := r.Data(d, cuts)
	if changed || string(red.Bytes()) != v.Str() {
		v.SetStr(red.String())
	}
}

func redactStr(attrs pcommon.Map, key string, r *redact.Redactor, cuts *redact.Counts) {
	if v, ok := text(attrs, key); ok {
		redactText(v, r, cuts)
	}
}

// redactText cuts secrets from the text v holds, setting it only when a
// cut was made.
func redactText(v pcommon.Value, r *redact.Redactor, cuts *redact.Counts) {
	if s, changed := r.String(v.Str(), cuts); changed {
		v.SetStr(s)
	}
}

// text returns the string attribute key. A list, a map or bytes there is
// removed: the exporter refuses a span with one, and a secret inside cannot
// be cut in place, so it would reach the backend in clear.
func text(attrs pcommon.Map, key string) (pcommon.Value, bool) {
	v, ok := attrs.Get(key)
	switch {
	case !ok:
	case v.Type() == pcommon.ValueTypeStr:
		return v, true
	case v.Type() == pcommon.ValueTypeSlice, v.Type() == pcommon.ValueTypeMap, v.Type() == pcommon.ValueTypeBytes:
		attrs.Remove(key)
	}
	return pcommon.NewValueEmpty(), false
}

// redactTree cuts secrets from the string and bytes values of a map or
// list at every depth, each as Data cuts the same value in JSON text: the
// member names above it, and a list's text element before it, give it its
// context. Names are cut as in JSON (rename); numbers and booleans hold no
// text to cut.
func redactTree(v pcommon.Value, r *redact.Redactor, cuts *redact.Counts) {
	w := treeWalker{vs: r.Values(cuts), r: r, cuts: cuts}
	w.site.Keys = w.keys[:0]
	w.value(v)
}

// treeWalker hands a tree's strings to Values.Visit with the site
// auditevent.Data.MapStrings would give the same value.
type treeWalker struct {
	vs   *redact.Values
	r    *redact.Redactor
	cuts *redact.Counts
	site auditevent.StringSite
	keys [8]string
}

// value walks v and returns its text as it was, when it is text.
func (w *treeWalker) value(v pcommon.Value) (string, bool) {
	switch v.Type() {
	case pcommon.ValueTypeMap:
		w.members(v.Map())
	case pcommon.ValueTypeSlice:
		w.elements(v.Slice())
	case pcommon.ValueTypeStr:
		s := v.Str()
		if red, changed := w.vs.Visit(&w.site, s); changed {
			v.SetStr(red)
		}
		return s, true
	case pcommon.ValueTypeBytes:
		// A backend shows bytes base64-encoded, which hides nothing: they
		// are cut as the same text, and stay bytes, so a field's type does
		// not tell whether it held a secret.
		s := string(v.Bytes().AsRaw())
		if red, changed := w.vs.Visit(&w.site, s); changed {
			v.Bytes().FromRaw([]byte(red))
		}
		return s, true
	}
	return "", false
}

func (w *treeWalker) members(m pcommon.Map) {
	var cut []cutName
	for k, v := range m.All() {
		w.site.Keys = append(w.site.Keys, k)
		w.site.HasPrev = false
		w.value(v)
		w.site.Keys = w.site.Keys[:len(w.site.Keys)-1]
		if name, changed := w.r.String(k, w.cuts); changed {
			cut = append(cut, cutName{k, name})
		}
	}
	if len(cut) > 0 {
		rename(m, cut)
	}
}

// cutName is a member name of a map and the name with its secrets cut.
type cutName struct{ key, name string }

// rename gives m's members the cut names as Data gives them to an
// object's (auditevent.Data.MapKeys): a cut name that another member has,
// or that a member before it in name order gets, is numbered, so no member
// is lost and the numbers do not hang on the producer's insertion order.
func rename(m pcommon.Map, cut []cutName) {
	names := make(map[string]string, m.Len())
	taken := make(map[string]bool, m.Len())
	for k := range m.All() {
		names[k] = k
		taken[k] = true
	}
	for _, c := range cut {
		delete(taken, c.key)
	}
	// byte order of UTF-8 is code-point order, canonical text's
	slices.SortFunc(cut, func(a, b cutName) int { return strings.Compare(a.key, b.key) })
	for _, c := range cut {
		names[c.key] = auditevent.FreeName(taken, c.name)
	}
	out := pcommon.NewMap()
	out.EnsureCapacity(m.Len())
	for k, v := range m.All() {
		v.CopyTo(out.PutEmpty(names[k]))
	}
	out.MoveTo(m)
}

func (w *treeWalker) elements(s pcommon.Slice) {
	var prev string
	hasPrev := false
	for _, e := range s.All() {
		w.site.Prev, w.site.HasPrev = prev, hasPrev
		prev, hasPrev = w.value(e)
	}
	w.site.HasPrev = false
}
