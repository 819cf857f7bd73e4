package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"

import (
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/logmap"
	"github.com/sandboxaudit/sandboxaudit/receiver/internal/metadata"
)

// eventsToLogs is the log form of events (docs/format.md, "Inside the
// collector"), under this receiver's instrumentation scope.
func eventsToLogs(events []auditevent.Event) plog.Logs {
	return logmap.EventsToLogs(events, metadata.ScopeName)
}
