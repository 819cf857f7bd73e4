package kafkaexportcheck

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
)

type host map[component.ID]component.Component

func (h host) GetExtensions() map[component.ID]component.Component { return h }

func TestCheckEncoding(t *testing.T) {
	enc := component.MustNewType("sandboxaudit_encoding")
	known := map[component.Type]bool{enc: true}
	id := component.MustNewIDWithName("kafka", "edge")
	running := host{component.NewID(enc): nil}

	err := checkEncoding(id, "logs", "sandboxaudit_encoding", known, host{})
	require.EqualError(t, err, `exporters::kafka/edge::logs::encoding: extension "sandboxaudit_encoding" is not in service::extensions`)
	require.NoError(t, checkEncoding(id, "logs", "sandboxaudit_encoding", known, running))
	require.Error(t, checkEncoding(id, "traces", "sandboxaudit_encoding/other", known, running), "another instance of the type")
	require.NoError(t, checkEncoding(id, "logs", "otlp_proto", known, host{}), "built in")
	require.NoError(t, checkEncoding(id, "logs", "text_encoding", known, host{}), "left to the exporter")
}
