package sandboxtrace

// ScopeName is the instrumentation scope of every span this package starts.
const ScopeName = "github.com/sandboxaudit/sandboxaudit/sandboxtrace"
