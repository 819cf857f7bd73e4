package auditevent_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/testutil/conformance"
)

// TestConformance checks every vector of every kind against the Python
// reference's results.
func TestConformance(t *testing.T) {
	vectors, err := conformance.LoadAll()
	if err != nil {
		t.Fatal(err)
	}
	passed := 0
	for _, v := range vectors {
		t.Run(v.Name, func(t *testing.T) {
			if err := checkVector(v); err != nil {
				t.Errorf("%s: %v", v.Source, err)
				return
			}
			passed++
		})
	}
	t.Logf("conformance: %d vectors passed", passed)
	if passed != len(vectors) {
		t.Errorf("conformance: %d of %d vectors failed", len(vectors)-passed, len(vectors))
	}
}

func checkVector(v conformance.Vector) error {
	switch v.Kind {
	case "encode":
		want, err := v.ExpectString()
		if err != nil {
			return err
		}
		ev, err := auditevent.Decode([]byte(v.Input))
		if err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		return diff(want, string(auditevent.Line(&ev)))
	case "policy":
		want, err := v.ExpectString()
		if err != nil {
			return err
		}
		ev, err := auditevent.Decode([]byte(v.Input))
		if err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		if ev.StdoutBytes, err = b64(v.StdoutB64); err != nil {
			return err
		}
		if ev.StderrBytes, err = b64(v.StderrB64); err != nil {
			return err
		}
		set := auditevent.PolicySet{ByOp: v.PolicyByOp}
		if v.Policy != nil {
			set.Default = *v.Policy
		}
		if v.SinkPolicy != nil {
			set.Sink = *v.SinkPolicy
		}
		pol := set.Resolve(ev.Op)
		out := pol.Apply(&ev)
		if err := diff(want, string(auditevent.Line(&out))); err != nil {
			return err
		}
		// Sinks encode through Policy.AppendLine, which must agree.
		if err := diff(want, string(pol.AppendLine(nil, &ev))); err != nil {
			return fmt.Errorf("Policy.AppendLine: %w", err)
		}
		return nil
	case "reject":
		_, err := auditevent.Decode([]byte(v.Input))
		if err == nil {
			return errors.New("decode accepted an input the reference rejects")
		}
		var fe *auditevent.FieldError
		if !errors.As(err, &fe) {
			return fmt.Errorf("error %v is not a *FieldError", err)
		}
		if want := v.LocField(); want != "" && fe.Field != want {
			return fmt.Errorf("error names field %q (%v), want %q", fe.Field, err, want)
		}
		if fe.Type != v.Error {
			return fmt.Errorf("error type %q (%v), want %q", fe.Type, err, v.Error)
		}
		return nil
	case "safe_decode":
		want, err := v.ExpectString()
		if err != nil {
			return err
		}
		raw, err := base64.StdEncoding.DecodeString(v.BytesB64)
		if err != nil {
			return fmt.Errorf("bytes_b64: %w", err)
		}
		return diff(want, auditevent.SafeDecode(raw, v.MaxChars))
	}
	return fmt.Errorf("unknown vector kind %q", v.Kind)
}

func b64(s *string) ([]byte, error) {
	if s == nil {
		return nil, nil
	}
	b, err := base64.StdEncoding.DecodeString(*s)
	if err != nil {
		return nil, fmt.Errorf("base64: %w", err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// diff explains the first difference between want and got.
func diff(want, got string) error {
	if want == got {
		return nil
	}
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	lo := max(0, i-40)
	return fmt.Errorf("mismatch at byte %d\n want: %q\n  got: %q\n full want: %q\n full got:  %q",
		i, clip(want, lo, i+40), clip(got, lo, i+40), want, got)
}

func clip(s string, lo, hi int) string {
	return strings.Clone(s[min(lo, len(s)):min(hi, len(s))])
}
