package main

import (
	"io"
	"os"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/sandboxaudit/sandboxaudit/internal/testutil/syncbuf"
)

// testBound is a stopBound that reports to out and sends its exit code on
// exited.
func testBound(limit time.Duration) (b *stopBound, out *syncbuf.Buffer, exited chan int) {
	out, exited = &syncbuf.Buffer{}, make(chan int, 1)
	return newStopBound(limit, out, func(code int) { exited <- code }), out, exited
}

func boundLogger(limit time.Duration) (*zap.Logger, *syncbuf.Buffer, chan int) {
	b, out, exited := testBound(limit)
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zapcore.InfoLevel)
	return zap.New(core, b.LoggingOption()), out, exited
}

// TestStopBoundExitsWhenAShutdownHangs: once the collector logs that its
// shutdown begins, the process exits 1 unless it ends first, saying why.
func TestStopBoundExitsWhenAShutdownHangs(t *testing.T) {
	log, out, exited := boundLogger(10 * time.Millisecond)
	log.Info(readyMessage)
	log.Info(shutdownMessage)
	select {
	case code := <-exited:
		assert.Equal(t, 1, code)
	case <-time.After(10 * time.Second):
		t.Fatal("no exit 10s after a shutdown began, with a 10ms bound")
	}
	assert.Contains(t, out.String(), "otelcol-sandboxaudit: the shutdown has not finished after 10ms")
}

// TestStopBoundLeavesAReloadThatCompletes: a SIGHUP reload shuts the
// service down and starts it again; once it runs, nothing exits. In a
// synctest bubble the bound's timer runs on the bubble's clock: the sleep
// passes it at once, and Wait lets a timer that fired finish its exit.
func TestStopBoundLeavesAReloadThatCompletes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log, out, exited := boundLogger(50 * time.Millisecond)
		log.Info(shutdownMessage)
		log.Info(readyMessage)
		log.Info("some other message")
		time.Sleep(200 * time.Millisecond) // four times the bound
		synctest.Wait()
		select {
		case code := <-exited:
			t.Fatalf("exited %d after a reload that completed", code)
		default:
		}
		require.Empty(t, out.String())
	})
}

// TestStopBoundArmsOnASignal: a SIGTERM arms the bound even when the
// collector logs above Info and never says its shutdown began.
func TestStopBoundArmsOnASignal(t *testing.T) {
	b, out, exited := testBound(10 * time.Millisecond)
	sig := make(chan os.Signal, 1)
	b.ArmOn(sig)
	sig <- syscall.SIGTERM
	select {
	case code := <-exited:
		assert.Equal(t, 1, code)
	case <-time.After(10 * time.Second):
		t.Fatal("no exit 10s after a SIGTERM, with a 10ms bound")
	}
	assert.Contains(t, out.String(), "the shutdown has not finished after 10ms")
}
