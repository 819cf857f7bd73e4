package spanmap

import (
	"encoding/base64"
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// DecodeExecOutput reads raw exec output from an attribute value: OTLP
// bytes, or a standard base64 string (OTel Go attributes have no bytes type).
// An empty value (pcommon.ValueTypeEmpty) is no output, nil; empty bytes are
// empty output, non-nil. Span and log record attributes share this spelling,
// so both mappings use it.
func DecodeExecOutput(v pcommon.Value) ([]byte, error) {
	switch v.Type() {
	case pcommon.ValueTypeBytes:
		if b := v.Bytes().AsRaw(); b != nil {
			return b, nil
		}
		return []byte{}, nil // present but empty is not "no output"
	case pcommon.ValueTypeStr:
		b, err := base64.StdEncoding.DecodeString(v.Str())
		if err != nil {
			return nil, fmt.Errorf("invalid base64: %w", err)
		}
		return b, nil
	case pcommon.ValueTypeEmpty:
		return nil, nil
	}
	return nil, errors.New("want bytes or base64 string, got " + v.Type().String())
}
