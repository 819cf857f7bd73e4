package sandboxauditreceiver // import "github.com/sandboxaudit/sandboxaudit/receiver"

import (
	"log"
	"strings"

	"go.uber.org/zap"
)

// serverErrorLog is net/http's error log for the receiver's server. Its
// lines (a TLS handshake that failed, a panic) name the client's address
// and port, so each is a message of its own and the collector's log
// sampling, which counts lines by message, would let a client log one per
// connection. Here the message is fixed and the text a field, so a flood of
// them is sampled like any other repeated line.
func serverErrorLog(logger *zap.Logger) *log.Logger {
	return log.New(serverLogWriter{logger: logger}, "", 0)
}

type serverLogWriter struct{ logger *zap.Logger }

func (w serverLogWriter) Write(p []byte) (int, error) {
	w.logger.Warn("HTTP server could not serve a connection",
		zap.String("error", strings.TrimSuffix(strings.TrimPrefix(string(p), "http: "), "\n")))
	return len(p), nil
}
