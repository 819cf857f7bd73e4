package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/sandboxaudit/sandboxaudit/bench/rawpost"
)

// runPosts is the HTTP part of a sync_finish operation alone: two
// kept-alive POSTs per operation of an empty OTLP logs request (zero
// bytes is a valid one) to the collector's OTLP/HTTP receiver, which
// decodes it and has nothing to write.
func runPosts(ctx context.Context, col *collector, ops int) (run, error) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	client := &http.Client{Transport: t}
	defer client.CloseIdleConnections()
	url := "http://" + col.otlpAddr + "/v1/logs"
	post := func() error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(nil))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/x-protobuf")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("POST %s: %s", url, resp.Status)
		}
		return nil
	}
	if err := post(); err != nil { // warm-up: the connection
		return run{}, err
	}
	return timedOps(col, ops, func() (time.Duration, error) {
		t0 := time.Now()
		if err := post(); err != nil {
			return 0, err
		}
		err := post()
		return time.Since(t0), err
	})
}

// timedOps runs op ops times and returns each one's duration (what op
// says it took), the elapsed time, and the CPU time of this process and
// of col's over the loop.
func timedOps(col *collector, ops int, op func() (time.Duration, error)) (run, error) {
	r := run{ops: ops, durations: make([]time.Duration, 0, ops)}
	cpu0, err := col.col.CPU()
	if err != nil {
		return run{}, err
	}
	self0 := selfCPU()
	began := time.Now()
	for range ops {
		took, err := op()
		if err != nil {
			return run{}, err
		}
		r.durations = append(r.durations, took)
	}
	r.elapsed = time.Since(began)
	r.clientCPU = selfCPU() - self0
	cpu1, err := col.col.CPU()
	if err != nil {
		return run{}, err
	}
	r.collectorCPU = cpu1 - cpu0
	return r, nil
}

// runRawPosts is two POSTs per operation of an empty OTLP logs request to
// url over one kept-alive connection written and read on this goroutine,
// as sandboxtrace's DirectLogExporter does. col's CPU is counted even when
// url is not col's (then it shows an idle collector). With gap > 0 each
// POST follows a pause of gap, not counted in the operation's time: both
// processes' threads are then asleep when the request leaves, as in a
// sync_finish operation, where each request follows an fdatasync or the
// caller's function.
func runRawPosts(col *collector, url string, ops int, gap time.Duration) (run, error) {
	client, err := rawpost.Dial(url, "application/x-protobuf")
	if err != nil {
		return run{}, err
	}
	defer client.Close()
	if err := client.Post(nil); err != nil { // warm-up
		return run{}, err
	}
	return timedOps(col, ops, func() (time.Duration, error) {
		var took time.Duration
		for range 2 {
			if gap > 0 {
				time.Sleep(gap)
			}
			t0 := time.Now()
			if err := client.Post(nil); err != nil {
				return 0, err
			}
			took += time.Since(t0)
		}
		return took, nil
	})
}
