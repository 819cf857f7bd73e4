// Command sandboxaudit is the operator tool for sandbox audit files:
//
//	sandboxaudit canon < events.jsonl > canonical.jsonl
//	sandboxaudit verify [--allow-open] FILE...
//	sandboxaudit replay SPOOL --endpoint URL [--format ndjson|event] [--header K=V]...
//
// The work is done by internal/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/sandboxaudit/sandboxaudit/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], cli.Streams{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
	stop()
	os.Exit(code)
}
