// Command sandboxaudit is the operator tool for sandbox audit files:
//
//	sandboxaudit show audit/
//	sandboxaudit verify audit/events.jsonl
//	sandboxaudit serve audit/
//
// `sandboxaudit -h` lists every command. The work is done by internal/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/sandboxaudit/sandboxaudit/internal/cli"
)

// interruptGrace is how long a command may take to stop after SIGINT or
// SIGTERM; one blocked reading stdin cannot see the signal at all.
const interruptGrace = 3 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// A second signal ends the process at once, as without the handler.
	context.AfterFunc(ctx, stop)
	code := cli.RunUntilInterrupted(ctx, os.Args[1:], cli.Streams{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}, interruptGrace)
	stop()
	os.Exit(code)
}
