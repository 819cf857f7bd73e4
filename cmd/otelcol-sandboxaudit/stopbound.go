package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// The collector's service logs these at Info when its shutdown begins (on
// SIGTERM, SIGINT, a failed start, or before a SIGHUP reload starts it
// again) and once every component has started.
const (
	shutdownMessage = "Starting shutdown..."
	readyMessage    = "Everything is ready. Begin running and processing data."
)

// defaultStopLimit bounds a shutdown. Receivers wait for the requests in
// flight, and those for the exporters, which are stopped last: an exporter
// that cannot deliver and ignores its deadline (the kafka exporter while
// the broker is down) would hold the shutdown until the destination came
// back. Everything acknowledged is written already (to the file, the spool
// or Kafka), as after a SIGKILL.
const defaultStopLimit = 30 * time.Second

// stopBound ends the process with exit when a shutdown has not finished
// (or, on a reload, the collector is not running again) within limit.
type stopBound struct {
	limit time.Duration
	out   io.Writer
	exit  func(int)

	mu    sync.Mutex
	timer *time.Timer
}

func newStopBound(limit time.Duration, out io.Writer, exit func(int)) *stopBound {
	return &stopBound{limit: limit, out: out, exit: exit}
}

// LoggingOption returns the zap option that watches for the two messages.
// A collector logging above Info logs neither: there only a SIGTERM or
// SIGINT (ArmOn) starts the bound, and a SIGHUP reload is not bounded.
func (b *stopBound) LoggingOption() zap.Option {
	return zap.Hooks(func(e zapcore.Entry) error {
		switch e.Message {
		case shutdownMessage:
			b.arm()
		case readyMessage:
			b.disarm()
		}
		return nil
	})
}

// ArmOn arms the bound on each signal from sig, so that a SIGTERM or
// SIGINT is bounded at any log level.
func (b *stopBound) ArmOn(sig <-chan os.Signal) {
	go func() {
		for range sig {
			b.arm()
		}
	}()
}

func (b *stopBound) arm() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.timer == nil {
		b.timer = time.AfterFunc(b.limit, b.expire)
	}
}

func (b *stopBound) disarm() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
}

func (b *stopBound) expire() {
	_, _ = fmt.Fprintf(b.out, "otelcol-sandboxaudit: the shutdown has not finished after %s: a component is still waiting"+
		" (an exporter whose destination is down); exiting. What was acknowledged is already written.\n", b.limit)
	b.exit(1)
}
