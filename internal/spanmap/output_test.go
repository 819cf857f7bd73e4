package spanmap

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

func TestDecodeExecOutput(t *testing.T) {
	bytesValue := func(b []byte) pcommon.Value {
		v := pcommon.NewValueBytes()
		v.Bytes().FromRaw(b)
		return v
	}
	for name, tt := range map[string]struct {
		v    pcommon.Value
		want []byte
	}{
		"bytes":              {bytesValue([]byte("out\x00\xff")), []byte("out\x00\xff")},
		"empty bytes":        {bytesValue(nil), []byte{}},
		"base64 string":      {pcommon.NewValueStr("b3V0AP8="), []byte("out\x00\xff")},
		"empty string":       {pcommon.NewValueStr(""), []byte{}},
		"empty value (null)": {pcommon.NewValueEmpty(), nil},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := DecodeExecOutput(tt.v)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.want == nil, got == nil, "nil is no output, empty is empty output")
		})
	}

	_, err := DecodeExecOutput(pcommon.NewValueStr("not base64!"))
	assert.ErrorContains(t, err, "invalid base64")
	_, err = DecodeExecOutput(pcommon.NewValueInt(5))
	assert.EqualError(t, err, "want bytes or base64 string, got Int")
}
