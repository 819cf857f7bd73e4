package load

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// Result is one load run as the sender saw it.
type Result struct {
	Requests int
	Elapsed  time.Duration
}

// Send posts every request to endpoint (an OTLP/HTTP traces URL) from
// workers goroutines, each taking the next request when its previous one
// is answered. Any answer other than 200 stops the run with an error.
func Send(ctx context.Context, endpoint string, reqs [][]byte, workers int) (Result, error) {
	if workers <= 0 {
		return Result{}, fmt.Errorf("workers must be > 0, got %d", workers)
	}
	client := &http.Client{
		Timeout:   2 * time.Minute,
		Transport: &http.Transport{MaxIdleConnsPerHost: workers, DisableCompression: true},
	}
	defer client.CloseIdleConnections()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan []byte)
	go func() {
		defer close(next)
		for _, r := range reqs {
			select {
			case next <- r:
			case <-ctx.Done():
				return
			}
		}
	}()

	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	began := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for body := range next {
				if err := post(ctx, client, endpoint, "application/x-protobuf", body); err != nil {
					errOnce.Do(func() { firstErr = err; cancel() })
					return
				}
			}
		}()
	}
	wg.Wait()
	res := Result{Requests: len(reqs), Elapsed: time.Since(began)}
	return res, firstErr
}

func post(ctx context.Context, client *http.Client, endpoint, contentType string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("post %s: %w", endpoint, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("post %s: %s: %s", endpoint, resp.Status, bytes.TrimSpace(msg))
	}
	return nil
}
