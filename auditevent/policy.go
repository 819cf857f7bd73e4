package auditevent

import (
	"errors"
	"fmt"
)

// Policy is the effective payload policy at one sink for one event.
type Policy struct {
	IncludeExecOutput bool
	MaxStdoutChars    int
	MaxStderrChars    int
	IncludeWriteLen   bool
}

// DefaultPolicy is the reference default: exec output redacted, 8000
// characters per stream when included, write lengths kept.
func DefaultPolicy() Policy {
	return Policy{IncludeExecOutput: false, MaxStdoutChars: 8000, MaxStderrChars: 8000, IncludeWriteLen: true}
}

// PolicyOverride is one level of policy configuration. Only the fields a
// user sets are non-nil, and only those override the level below: a field
// set to its default value still overrides.
type PolicyOverride struct {
	IncludeExecOutput *bool `mapstructure:"include_exec_output" json:"include_exec_output,omitempty"`
	MaxStdoutChars    *int  `mapstructure:"max_stdout_chars" json:"max_stdout_chars,omitempty"`
	MaxStderrChars    *int  `mapstructure:"max_stderr_chars" json:"max_stderr_chars,omitempty"`
	IncludeWriteLen   *bool `mapstructure:"include_write_len" json:"include_write_len,omitempty"`
	// Redact is the level's redact section; Policy does not hold it (see
	// RedactOverride).
	Redact RedactOverride `mapstructure:"redact" json:"redact,omitzero"`
}

// Validate refuses negative character limits, naming the key.
func (o PolicyOverride) Validate() error {
	var errs []error
	if o.MaxStdoutChars != nil && *o.MaxStdoutChars < 0 {
		errs = append(errs, fmt.Errorf("max_stdout_chars: must be >= 0, got %d", *o.MaxStdoutChars))
	}
	if o.MaxStderrChars != nil && *o.MaxStderrChars < 0 {
		errs = append(errs, fmt.Errorf("max_stderr_chars: must be >= 0, got %d", *o.MaxStderrChars))
	}
	return errors.Join(errs...)
}

// IsZero reports whether the override sets nothing.
func (o PolicyOverride) IsZero() bool {
	return o.IncludeExecOutput == nil && o.MaxStdoutChars == nil && o.MaxStderrChars == nil && o.IncludeWriteLen == nil &&
		o.Redact.IsZero()
}

// Merge returns p with the fields o sets explicitly replaced.
func (p Policy) Merge(o PolicyOverride) Policy {
	if o.IncludeExecOutput != nil {
		p.IncludeExecOutput = *o.IncludeExecOutput
	}
	if o.MaxStdoutChars != nil {
		p.MaxStdoutChars = *o.MaxStdoutChars
	}
	if o.MaxStderrChars != nil {
		p.MaxStderrChars = *o.MaxStderrChars
	}
	if o.IncludeWriteLen != nil {
		p.IncludeWriteLen = *o.IncludeWriteLen
	}
	return p
}

// PolicySet is the three configuration levels: the default, per operation,
// and per sink. Resolve gives the effective policy for one event's op.
type PolicySet struct {
	Default PolicyOverride
	ByOp    map[string]PolicyOverride
	Sink    PolicyOverride
}

// Resolve merges default -> per-op (for op) -> sink over DefaultPolicy.
func (s PolicySet) Resolve(op string) Policy {
	p := DefaultPolicy().Merge(s.Default)
	if o, ok := s.ByOp[op]; ok {
		p = p.Merge(o)
	}
	return p.Merge(s.Sink)
}

// Apply returns a copy of e with the policy applied (docs/format.md, "The
// payload policy"); e is not modified, so one event can go to several sinks
// under different policies. The copy shares unchanged fields with e.
func (p Policy) Apply(e *Event) Event {
	c := *e
	r := p.result(e)
	c.Data, c.Stdout, c.Stderr = r.data, r.stdout, r.stderr
	if r.dropRaw {
		c.StdoutBytes, c.StderrBytes = nil, nil
	}
	return c
}

// AppendLine appends the canonical line of e under p to dst: the same bytes
// as AppendLine of Apply's copy, without making the copy. Sinks encode
// every event this way, so a policy that changes nothing costs nothing.
func (p Policy) AppendLine(dst []byte, e *Event) []byte {
	return p.AppendSpanLine(dst, e, nil)
}

// AppendSpanLine is AppendLine with the shared fields of e's span copied
// from the line sl saw last, as AppendSpanLine (the function) does.
func (p Policy) AppendSpanLine(dst []byte, e *Event, sl *SpanLines) []byte {
	r := p.result(e)
	return appendLine(dst, e, r.data, r.stdout, r.stderr, sl)
}

// policyResult is what the policy makes of the fields it governs.
type policyResult struct {
	data           Data
	stdout, stderr *string
	dropRaw        bool // the raw output bytes become nil
}

func (p Policy) result(e *Event) policyResult {
	r := policyResult{data: e.Data}
	if !p.IncludeWriteLen {
		r.data = r.data.Without("bytes")
	}
	r.stdout, r.stderr, r.dropRaw = p.output(e)
	return r
}

// output is what the policy makes of e's exec output.
func (p Policy) output(e *Event) (stdout, stderr *string, dropRaw bool) {
	if e.Phase != PhaseFinish {
		return e.Stdout, e.Stderr, false
	}
	if !p.IncludeExecOutput {
		return nil, nil, true
	}
	stdout, stderr = e.Stdout, e.Stderr
	if e.StdoutBytes != nil {
		s := SafeDecode(e.StdoutBytes, p.MaxStdoutChars)
		stdout = &s
	}
	if e.StderrBytes != nil {
		s := SafeDecode(e.StderrBytes, p.MaxStderrChars)
		stderr = &s
	}
	return stdout, stderr, false
}

// LineLen is the length of the line AppendLine writes for e, newline
// included, counted without building it.
func (p Policy) LineLen(e *Event) int {
	ev := *e
	ev.Data = Data{}
	ev.Stdout, ev.Stderr, _ = p.output(e)
	dataLen := len(e.Data.Bytes())
	if !p.IncludeWriteLen {
		dataLen = e.Data.lenWithout("bytes")
	}
	return EncodedLen(&ev) - len(emptyObject) + dataLen + 1
}
