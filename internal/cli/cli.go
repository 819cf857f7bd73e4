// Package cli is the sandboxaudit operator tool: read a trail (show,
// sessions, serve), check it (verify, prove, verify-proof), canonicalize
// event lines (canon), replay a delivery spool by hand (replay) and manage
// signing keys and logs (keygen, log). cmd/sandboxaudit only calls Run, so
// everything here is testable in-process.
package cli

import (
	"context"
	"fmt"
	"io"
	"time"
)

// Exit statuses. Problems found in the input and usage errors are kept apart
// so scripts can tell "the file is bad" from "the command line is wrong".
const (
	exitOK       = 0
	exitProblems = 1
	exitUsage    = 2
)

// Streams are the process's standard streams.
type Streams struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

const usage = `usage: sandboxaudit <command> [arguments]

commands:
  canon                      read event JSON lines on stdin, write canonical lines to stdout
  verify [--allow-open] [--allow-duplicates] [--require-contiguous] FILE|DIR...
         [--key NAME.pub [--allow-renamed] [--allow-unsealed COUNT|DURATION]
          [--strict] [--alone] [--checkpoint FILE]...
          [--witness W.vkey]... [--quorum K] [--allow-unwitnessed N]]
                             check audit files (rotated and compressed segments, or a trail's
                             directory): canonical lines, ids, seqs, start/finish pairs;
                             --allow-duplicates accepts exact resent copies of an event;
                             seqs missing from a session are warnings, problems with
                             --require-contiguous;
                             --key also checks every line, over every segment in order,
                             against the one log's signed checkpoints and segment records
                             (--allow-renamed: checkpoints naming another file only warn;
                             --allow-unsealed: a live file's last lines, not yet checkpointed;
                             --strict: a damaged or missing hash store is a problem;
                             --alone: each closed segment by itself, across the ones not read;
                             --checkpoint: also prove the lines in a checkpoint kept elsewhere);
                             --witness accepts only lines the witnesses' quorum cosigned
  log reset --signing-key NAME.key PATH
                             start a new log over an audit file the collector refuses
                             (no signed history); the old sidecars are kept
  log handover --signing-key OLD.key --next-key NEW.pub [--next-origin ORIGIN]
         [--witness URL=W.vkey]... [--without-witnesses] PATH
                             replace the signing key: a final checkpoint names the next key,
                             and the old log is moved aside; run it with the collector stopped
                             (a witnessed log needs --witness, or --without-witnesses)
  log rebuild-store --key NAME.pub|--signing-key NAME.key PATH
                             write a lost or cut hash store (PATH.tlog) again from the
                             segments and the file, checked against the signed log first;
                             run it with the collector stopped
  show [--session ID] [--trace ID] [--span ID] [--op OP] [--failed] [--since T] [--until T]
       [--grep TEXT] [--output table|jsonl|json] PATH...
                             a trail's operations in session and seq order, each start with its
                             finish; PATH is a file, a trail's directory (its segments, .zst too)
                             or - for stdin; jsonl writes the lines unchanged
  sessions [--output table|jsonl] PATH...
                             one row per session: first and last time, operations, failures,
                             open operations, seqs missing below its highest, trace id
  serve [--listen 127.0.0.1:8089] [--trace-url TEMPLATE] [--key NAME.pub]
        [--allow-remote [--allow-host NAME]...] PATH...
                             a read-only web view of a trail (loopback unless --allow-remote)
  keygen --name NAME --out DIR
                             write DIR/NAME.key (signing key, 0600) and DIR/NAME.pub (verifier key)
  prove FILE --line N        print line N with its inclusion proof and the newest checkpoint
  verify-proof --key NAME.pub PROOF
                             check a prove bundle alone, without the audit file
  replay SPOOL --endpoint URL [--format ndjson|event] [--header K=V]...
         [--timeout 10s] [--retry-for 30s] [--ca-file PEM] [--insecure-skip-verify] [--adopt]
                             send a delivery spool file to an HTTP endpoint

Run "sandboxaudit <command> -h" (or "sandboxaudit help <command>") for a command's flags.
`

// Run executes the command line args (without the program name) and returns
// the process exit status.
func Run(ctx context.Context, args []string, s Streams) int {
	if len(args) == 0 {
		_, _ = fmt.Fprint(s.Stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "canon":
		return runCanon(ctx, args[1:], s)
	case "verify":
		return runVerify(ctx, args[1:], s)
	case "replay":
		return runReplay(ctx, args[1:], s)
	case "show":
		return runShow(ctx, args[1:], s)
	case "sessions":
		return runSessions(ctx, args[1:], s)
	case "serve":
		return runServe(ctx, args[1:], s)
	case "keygen":
		return runKeygen(ctx, args[1:], s)
	case "log":
		return runLog(ctx, args[1:], s)
	case "prove":
		return runProve(ctx, args[1:], s)
	case "verify-proof":
		return runVerifyProof(ctx, args[1:], s)
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && args[0] == "help" {
			// `help CMD` is `CMD -h`, as in go and git.
			return Run(ctx, append(args[1:], "-h"), s)
		}
		_, _ = fmt.Fprint(s.Stdout, usage)
		return exitOK
	default:
		_, _ = fmt.Fprintf(s.Stderr, "sandboxaudit: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
}

// RunUntilInterrupted is Run, bounded once ctx is done: a command blocked
// reading stdin (a terminal, a stalled pipe) cannot see the interrupt, and
// the caller has taken SIGINT and SIGTERM over from their default. When
// the command has not returned grace after ctx is done, it says so on
// stderr and returns exitProblems; the command is left to the process's
// exit.
func RunUntilInterrupted(ctx context.Context, args []string, s Streams, grace time.Duration) int {
	done := make(chan int, 1)
	go func() { done <- Run(ctx, args, s) }()
	select {
	case code := <-done:
		return code
	case <-ctx.Done():
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case code := <-done:
		return code
	case <-t.C:
		name := "the command"
		if len(args) > 0 {
			name = args[0]
		}
		_, _ = fmt.Fprintf(s.Stderr, "sandboxaudit: interrupted; %s did not stop within %s (blocked reading its input?), so it was ended\n", name, grace)
		return exitProblems
	}
}
