package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/lines"
	"github.com/sandboxaudit/sandboxaudit/internal/plural"
)

// runCanon rewrites event JSON lines from stdin as canonical lines. A bad
// line is reported on stderr and skipped; the good lines are still written,
// so one typo does not lose a whole batch, and the exit status says that
// something was skipped.
func runCanon(ctx context.Context, args []string, s Streams) int {
	fs := newFlagSet("canon", "canon < events.jsonl > canonical.jsonl", s.Stderr)
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return flagStatus(err)
	}
	if len(rest) > 0 {
		_, _ = fmt.Fprintf(s.Stderr, "canon: unexpected arguments %q (input is read from stdin)\n", rest)
		return exitUsage
	}
	bad, err := canon(ctx, s.Stdin, s.Stdout, s.Stderr)
	if err != nil {
		_, _ = fmt.Fprintf(s.Stderr, "canon: %v\n", err)
		return exitProblems
	}
	if bad > 0 {
		_, _ = fmt.Fprintf(s.Stderr, "canon: %s skipped\n", plural.Count(bad, "bad line"))
		return exitProblems
	}
	return exitOK
}

// canon copies in to out in canonical form and returns the number of
// lines it could not decode. Blank lines are skipped silently. The error is
// for I/O failures only.
//
// Lines are decoded and encoded on every available CPU: a reader cuts the
// input into chunks, workers canonicalize them, and the chunks are written
// back in input order (with their problems reported in line order), so the
// output is what one goroutine would write. At most a few chunks per
// worker are in flight, which bounds memory.
func canon(ctx context.Context, in io.Reader, out, errOut io.Writer) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := runtime.GOMAXPROCS(0)
	order := make(chan *canonChunk, 2*workers) // input order, for the writer
	work := make(chan *canonChunk, 2*workers)
	pool := newChunkPool(4*workers + 1)

	var readErr error
	go func() {
		defer close(work)
		defer close(order)
		readErr = readChunks(ctx, in, pool, order, work)
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ev auditevent.Event
			for c := range work {
				c.canonicalize(&ev)
				close(c.done)
			}
		}()
	}

	w := bufio.NewWriterSize(out, 64<<10)
	bad := 0
	var writeErr error
	for c := range order {
		<-c.done
		bad += c.bad
		if writeErr == nil {
			_, _ = errOut.Write(c.errs)
			if _, err := w.Write(c.out); err != nil {
				writeErr = fmt.Errorf("writing stdout: %w", err)
				cancel() // the reader stops; what is in flight drains
			}
		}
		pool.put(c)
	}
	wg.Wait()
	if writeErr != nil {
		return bad, writeErr
	}
	if readErr != nil {
		return bad, readErr
	}
	if err := w.Flush(); err != nil {
		return bad, fmt.Errorf("writing stdout: %w", err)
	}
	return bad, nil
}

// readChunks cuts in into chunks and hands each to the writer (order) and
// then to the workers. Every chunk sent to order is also sent to work, so
// the writer never waits for a chunk nobody processes.
func readChunks(ctx context.Context, in io.Reader, pool *chunkPool, order, work chan<- *canonChunk) error {
	lr := lines.NewReader(in, 64<<10, maxLineBytes)
	c := pool.get()
	flush := func() {
		order <- c
		work <- c
		c = pool.get()
	}
	defer func() {
		if len(c.lines) > 0 {
			flush()
		}
	}()
	for {
		if c.full() {
			if err := ctx.Err(); err != nil {
				return err
			}
			flush()
		}
		ln, err := lr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading stdin: %w", err)
		}
		// Blank as Python's bytes.strip() has it (ASCII white space, VT
		// and FF included), as the reference reads a file; a line of
		// other Unicode spaces is not JSON, and is reported.
		if !ln.TooLong && len(bytes.Trim(ln.Text, " \t\r\n\v\f")) == 0 {
			continue
		}
		c.add(ln)
	}
}
