package sandboxtrace_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
)

// Two loggers of one name, version and schema URL that differ only in
// their scope attributes are two scopes: each record goes out under its
// own logger's attributes, whatever order they come in.
func TestDirectLogExporterKeepsScopeAttributesApart(t *testing.T) {
	ls := newLogsServer(t, nil)
	c := &capture{}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(c))
	loggers := map[string]log.Logger{}
	for _, tenant := range []string{"a", "b"} {
		loggers[tenant] = lp.Logger("agent", log.WithInstrumentationVersion("1.0"),
			log.WithInstrumentationAttributes(attribute.String("tenant", tenant)))
	}
	for _, tenant := range []string{"a", "b", "a"} {
		var r log.Record
		r.SetBody(attribute.StringValue("from " + tenant))
		loggers[tenant].Emit(context.Background(), r)
	}
	exp := newDirect(t, ls.srv.URL+"/v1/logs")
	require.NoError(t, exp.Export(context.Background(), c.got))
	require.NoError(t, exp.Shutdown(context.Background()))

	ls.mu.Lock()
	defer ls.mu.Unlock()
	got := map[string][]string{}
	for _, sl := range ls.scopes {
		require.Equal(t, "agent", sl.GetScope().GetName())
		require.Equal(t, "1.0", sl.GetScope().GetVersion())
		attrs := sl.GetScope().GetAttributes()
		require.Len(t, attrs, 1)
		require.Equal(t, "tenant", attrs[0].GetKey())
		tenant := attrs[0].GetValue().GetStringValue()
		for _, lr := range sl.GetLogRecords() {
			got[tenant] = append(got[tenant], lr.GetBody().GetStringValue())
		}
	}
	require.Equal(t, map[string][]string{"a": {"from a", "from a"}, "b": {"from b"}}, got)
}
