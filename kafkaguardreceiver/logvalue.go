package kafkaguardreceiver

import (
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// messageReceived is the contrib receiver's debug entry for each message
// it reads (v0.165.1); its fields hold the message's whole value.
const messageReceived = "kafka message received"

// withoutMessageValues is the receiver's logger without messageReceived:
// a value holds exec output and file content, or whatever a foreign
// producer wrote, and secrets never reach the log. Its other entries stay.
func withoutMessageValues(l *zap.Logger) *zap.Logger {
	return l.WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core { return valuelessCore{c} }))
}

type valuelessCore struct{ zapcore.Core }

func (c valuelessCore) With(fields []zapcore.Field) zapcore.Core {
	return valuelessCore{c.Core.With(fields)}
}

func (c valuelessCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if e.Message == messageReceived {
		return ce
	}
	return c.Core.Check(e, ce)
}
