package webview

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/plural"
	"github.com/sandboxaudit/sandboxaudit/internal/safetext"
	"github.com/sandboxaudit/sandboxaudit/internal/seqset"
	"github.com/sandboxaudit/sandboxaudit/internal/trail"
)

// Page sizes: the default and the most a request may ask for.
const (
	defaultSessions = 100
	defaultOps      = 200
	maxLimit        = 1000
)

type pager struct {
	From, To, Total, Limit int
	Prev, Next             string
}

// page reads offset and limit from the query for a list of total rows: a
// bad value is the caller's 400, naming the parameter. An offset is below
// total (or 0), so offset+limit cannot wrap around.
func page(q url.Values, def, total int) (offset, limit int, err error) {
	limit = def
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > maxLimit {
			return 0, 0, fmt.Errorf("limit: want a whole number from 1 to %d", maxLimit)
		}
	}
	if v := q.Get("offset"); v != "" {
		if offset, err = strconv.Atoi(v); err != nil || offset < 0 {
			return 0, 0, fmt.Errorf("offset: want a whole number from 0")
		}
		if offset > 0 && offset >= total {
			return 0, 0, fmt.Errorf("offset: past the end of the list (%s)", plural.Count(total, "row"))
		}
	}
	return offset, limit, nil
}

func makePager(path string, q url.Values, offset, limit, total int) pager {
	p := pager{From: min(offset+1, total), To: min(offset+limit, total), Total: total, Limit: limit}
	at := func(off int) string {
		v := url.Values{}
		for k, vs := range q {
			v[k] = vs
		}
		v.Set("offset", strconv.Itoa(off))
		v.Set("limit", strconv.Itoa(limit))
		return path + "?" + v.Encode()
	}
	if offset > 0 {
		p.Prev = at(max(offset-limit, 0))
	}
	if offset+limit < total {
		p.Next = at(offset + limit)
	}
	return p
}

type column struct {
	Label, Href string
	Active      bool
}

type sessionRow struct {
	trail.Session
	Href, TraceHref string
	MoreTraces      bool
	// MissingText names the first missing seqs, for the Missing cell's title.
	MissingText string
}

type sealRow struct {
	sealStatus
	Class string
}

// sortKeys are the session list's sortable columns.
var sortKeys = []struct {
	key, label string
	cmp        func(a, b *sessionIndex) int
}{
	{"session", "Session", func(a, b *sessionIndex) int { return strings.Compare(a.ID.String(), b.ID.String()) }},
	{"first", "First", func(a, b *sessionIndex) int { return cmp.Compare(a.First, b.First) }},
	{"last", "Last", func(a, b *sessionIndex) int { return cmp.Compare(a.Last, b.Last) }},
	{"ops", "Operations", func(a, b *sessionIndex) int { return cmp.Compare(a.Ops, b.Ops) }},
	{"failures", "Failures", func(a, b *sessionIndex) int { return cmp.Compare(a.Failures, b.Failures) }},
	{"open", "Open", func(a, b *sessionIndex) int { return cmp.Compare(a.Open, b.Open) }},
	{"missing", "Missing", func(a, b *sessionIndex) int { return cmp.Compare(a.Missing, b.Missing) }},
}

func (s *Server) sessionsPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	offset, limit, err := page(q, defaultSessions, len(s.ix.sessions))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	key, desc := q.Get("sort"), q.Get("desc") == "1"
	if key == "" {
		key = "first"
	}
	i := slices.IndexFunc(sortKeys, func(k struct {
		key, label string
		cmp        func(a, b *sessionIndex) int
	}) bool {
		return k.key == key
	})
	if i < 0 {
		http.Error(w, "sort: want one of session, first, last, ops, failures, open, missing", http.StatusBadRequest)
		return
	}
	list := slices.Clone(s.ix.sessions)
	slices.SortStableFunc(list, func(a, b *sessionIndex) int {
		c := sortKeys[i].cmp(a, b)
		if desc {
			return -c
		}
		return c
	})
	var cols []column
	for _, k := range sortKeys {
		v := url.Values{"sort": {k.key}}
		if k.key == key && !desc {
			v.Set("desc", "1")
		}
		cols = append(cols, column{Label: k.label, Href: "/?" + v.Encode(), Active: k.key == key})
	}
	var rows []sessionRow
	for _, si := range list[min(offset, len(list)):min(offset+limit, len(list))] {
		rows = append(rows, sessionRow{Session: si.Session, Href: "/session/" + si.ID.String(),
			TraceHref: s.trace.sessionLink(&si.Session), MoreTraces: si.MoreTraces,
			MissingText: missingText(si.Missing, si.MissingRanges)})
	}
	var seals []sealRow
	for _, st := range s.seals {
		seals = append(seals, sealRow{sealStatus: st, Class: strings.ReplaceAll(st.State, " ", "-")})
	}
	s.render(w, "sessions", map[string]any{
		"Title": "Sessions", "Sources": int64(len(s.cfg.Sources)), "Seals": seals, "Stats": s.ix.stats,
		"Total": int64(len(list)), "Columns": cols, "Desc": desc, "Rows": rows,
		"Pager": makePager("/", url.Values{"sort": {key}, "desc": {q.Get("desc")}}, offset, limit, len(list)),
	})
}

// missingText is the Missing cell's title: which seqs no line read
// carries ("" when none).
func missingText(missing int64, ranges []seqset.Range) string {
	if missing == 0 {
		return ""
	}
	return seqset.Name(missing, ranges) + " not in the files read"
}

// session finds the session the path names; false after answering 400/404.
func (s *Server) session(w http.ResponseWriter, r *http.Request) (*sessionIndex, bool) {
	id, err := auditevent.ParseUUID(r.PathValue("id"))
	if err != nil {
		http.Error(w, "session id: not a UUID", http.StatusBadRequest)
		return nil, false
	}
	si := s.ix.byID[id]
	if si == nil {
		http.Error(w, "no such session in this trail", http.StatusNotFound)
		return nil, false
	}
	return si, true
}

// timelineRow is one operation of a session's page; WhatShort is already
// shown as escapes (cut between them), the other text is escaped by the page.
type timelineRow struct {
	Seq                                int64
	Op, What, WhatShort, Result, Class string
	TS, Duration, Href                 string
	X, W                               string
}

// sessionPage serves one page of a session's ops, laid out on a timeline.
func (s *Server) sessionPage(w http.ResponseWriter, r *http.Request) {
	si, ok := s.session(w, r)
	if !ok {
		return
	}
	offset, limit, err := page(r.URL.Query(), defaultOps, int(si.Ops))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ops, err := s.ix.ops(si, offset, limit, false)
	if err != nil {
		http.Error(w, "could not read the trail's spool", http.StatusInternalServerError)
		return
	}
	t0, t1 := timelineBounds(si, ops)
	span := max(t1-t0, 1)
	s.render(w, "session", map[string]any{
		"Title": "Session " + si.ID.String(), "Sources": int64(len(s.cfg.Sources)), "ID": si.ID.String(), "S": si.Session, "MoreTraces": si.MoreTraces,
		"TraceHref": s.trace.sessionLink(&si.Session), "Rows": timelineRows(si, ops, offset, t0, t1),
		"MissingSeqs": seqset.Describe(si.Missing, si.MissingRanges), "AxisFrom": microsText(t0), "AxisTo": microsText(t1),
		"AxisSpan": durationMS(float64(span) / 1000), "Pager": makePager("/session/"+si.ID.String(), url.Values{}, offset, limit, int(si.Ops)),
	})
}

// timelineBounds is the time the page's ops span, in microseconds: an
// op still open lasts until the session's end.
func timelineBounds(si *sessionIndex, ops []opRecord) (t0, t1 int64) {
	for i := range ops {
		o := toOp(&ops[i])
		start, end := o.First().TSMicros, endOf(o)
		if o.Open() {
			end = max(end, si.end)
		}
		if i == 0 || start < t0 {
			t0 = start
		}
		if i == 0 || end > t1 {
			t1 = end
		}
	}
	return t0, t1
}

// timelineRows lays the page's ops (from offset on) out on the timeline
// from t0 to t1, in thousandths of its width.
func timelineRows(si *sessionIndex, ops []opRecord, offset int, t0, t1 int64) []timelineRow {
	span := max(t1-t0, 1)
	rows := make([]timelineRow, 0, len(ops))
	for i := range ops {
		o := toOp(&ops[i])
		first := o.First()
		start, end := first.TSMicros, endOf(o)
		if o.Open() {
			end = t1
		} else if o.Start == nil {
			start = end - int64(o.Finish.DurationMS*1000)
		}
		x := float64(max(start-t0, 0)) * 1000 / float64(span)
		wd := max(float64(end-max(start, t0))*1000/float64(span), 2)
		rows = append(rows, timelineRow{
			Seq: first.Seq, Op: o.Op, What: o.What, WhatShort: safetext.EscapeCut(o.What, 80), Result: resultText(o), Class: classOf(o),
			TS: first.TS, Duration: durationText(o), Href: fmt.Sprintf("/session/%s/op/%d", si.ID, offset+i),
			X: strconv.FormatFloat(min(x, 998), 'f', 2, 64), W: strconv.FormatFloat(wd, 'f', 2, 64),
		})
	}
	return rows
}

type dataBlock struct {
	Label string
	Shown shownJSONText
}

// cutNote is what the "cut" template needs: a text and its page.
type cutNote struct {
	Text shownJSONText
	Page map[string]any
}

func (s *Server) opPage(w http.ResponseWriter, r *http.Request) {
	si, ok := s.session(w, r)
	if !ok {
		return
	}
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 0 || int64(n) >= si.Ops {
		http.Error(w, "operation: no such operation in this session", http.StatusNotFound)
		return
	}
	ops, err := s.ix.ops(si, n, 1, true)
	if err != nil || len(ops) != 1 {
		http.Error(w, "could not read the trail's spool", http.StatusInternalServerError)
		return
	}
	o := toOp(&ops[0])
	data := map[string]any{
		"Title": o.Op + " " + strconv.FormatInt(o.First().Seq, 10), "Sources": int64(len(s.cfg.Sources)),
		"Session": si.ID.String(), "Op": o, "Seq": o.First().Seq, "Result": resultText(o), "Class": classOf(o),
		"Duration": durationText(o), "TraceHref": s.trace.link(o.TraceID, o.SpanID),
		"Back":       fmt.Sprintf("/session/%s?offset=%d", si.ID, n/defaultOps*defaultOps),
		"ShownBytes": maxShownBytes, "SpanArg": shellQuoted(o.SpanID),
	}
	if o.Finish != nil && o.Finish.Exit != "" {
		data["Exit"] = cutJSONText([]byte(o.Finish.Exit), maxFieldChars)
	}
	var blocks []dataBlock
	if o.Start != nil {
		data["StartLine"] = cutJSONText(bytes.TrimSuffix(o.Start.Line, []byte("\n")), maxShownBytes)
		data["StartSource"] = s.sourceName(o.Start.Source)
		blocks = append(blocks, dataBlock{"Start data", prettyData(o.Start.Line)})
	}
	if o.Finish != nil {
		data["FinishLine"] = cutJSONText(bytes.TrimSuffix(o.Finish.Line, []byte("\n")), maxShownBytes)
		data["FinishSource"] = s.sourceName(o.Finish.Source)
		blocks = append(blocks, dataBlock{"Finish data", prettyData(o.Finish.Line)})
	}
	data["Data"] = blocks
	s.render(w, "op", data)
}

func (s *Server) sourceName(i int) string {
	if i >= 0 && i < len(s.cfg.Sources) {
		return s.cfg.Sources[i]
	}
	return "?"
}

func toOp(rec *opRecord) *trail.Op {
	return &trail.Op{SpanID: rec.SpanID, TraceID: rec.TraceID, Op: rec.Op, What: rec.What, Start: rec.Start, Finish: rec.Finish}
}

// prettyData is a line's data object, indented, up to maxShownBytes.
func prettyData(line []byte) shownJSONText {
	var ev struct {
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(line, &ev) != nil || len(ev.Data) == 0 {
		return shownJSONText{}
	}
	return indentedJSON(ev.Data, maxShownBytes)
}

func resultText(o *trail.Op) string {
	failed := "FAILED"
	if o.Finish != nil && o.Finish.ErrorCode != "" {
		failed += ": " + o.Finish.ErrorCode
	}
	switch {
	case o.Start == nil && o.Failed():
		return "no start (finish only); " + failed
	case o.Start == nil:
		return "no start (finish only)"
	case o.Finish == nil:
		return "OPEN (no finish)"
	case o.Finish.OK:
		return "ok"
	}
	return failed
}

// classOf colors an operation: a failure shows as one, start or not.
func classOf(o *trail.Op) string {
	switch {
	case o.Failed():
		return "fail"
	case o.Start == nil:
		return "orphan"
	case o.Finish == nil:
		return "open"
	}
	return "ok"
}

func durationText(o *trail.Op) string {
	if o.Finish == nil {
		return ""
	}
	return durationMS(o.Finish.DurationMS)
}

// durationMS is ms in the largest unit that keeps it short; a value of
// more than a dozen digits (duration_ms is any finite number) in two
// digits and an exponent.
func durationMS(ms float64) string {
	v, unit, prec := ms, " ms", 1
	switch {
	case ms >= 60_000:
		v, unit = ms/60_000, " min"
	case ms >= 1000:
		v, unit, prec = ms/1000, " s", 2
	}
	text := strconv.FormatFloat(v, 'f', prec, 64)
	if len(text) > 12 {
		text = strconv.FormatFloat(v, 'g', 2, 64)
	}
	return text + unit
}

// microsText is an instant as a line writes it, or with its whole year
// outside the four digits a line's year has (9999-12-31T23:59:59-23:59 is
// in year 10000).
func microsText(us int64) string {
	t := timeFromMicros(us)
	if y := t.Year(); y < 0 || y > 9999 {
		return t.Format("2006-01-02T15:04:05.999999Z07:00")
	}
	return auditevent.TimestampFromTime(t).String()
}

func timeFromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }
