package witness_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/sandboxaudit/sandboxaudit/internal/witness"
	"github.com/sandboxaudit/sandboxaudit/internal/witness/witnesstest"
)

// A witness answering each of the protocol's statuses: the client returns
// the error the status means, and the request it sent is the protocol's.
func TestAddCheckpointStatuses(t *testing.T) {
	log := newTestLog(t, "example.com/log")
	log.add(5, "a")
	signed := log.checkpoint()
	real := witnesstest.Start(t, "witness.example/w1", log.verifier)
	cases := []struct {
		name        string
		status      int
		contentType string
		body        string
		check       func(t *testing.T, err error)
	}{
		{"409 with a size", 409, "text/x.tlog.size", "17\n", func(t *testing.T, err error) {
			var ce *witness.ConflictError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, int64(17), ce.Size)
			require.Equal(t, "conflict", witness.Reason(err))
		}},
		{"409 without a newline", 409, "text/x.tlog.size", "17", func(t *testing.T, err error) {
			require.ErrorContains(t, err, "unreadable size")
		}},
		{"409 with a leading zero", 409, "text/x.tlog.size", "017\n", func(t *testing.T, err error) {
			require.ErrorContains(t, err, "not a canonical tree size")
		}},
		{"422", 422, "text/plain", "bad proof", func(t *testing.T, err error) {
			require.ErrorContains(t, err, "422 Unprocessable Entity")
			require.ErrorContains(t, err, "does not extend")
			require.Equal(t, "inconsistent", witness.Reason(err))
			require.NotContains(t, err.Error(), "bad proof", "the body is not shown")
		}},
		{"403", 403, "text/plain", "", func(t *testing.T, err error) {
			require.ErrorContains(t, err, "signature does not verify")
			require.Equal(t, "bad_signature", witness.Reason(err))
		}},
		{"404", 404, "text/plain", "", func(t *testing.T, err error) {
			require.ErrorContains(t, err, "does not know this log's origin")
			require.Equal(t, "unknown_log", witness.Reason(err))
		}},
		{"500", 500, "text/plain", "", func(t *testing.T, err error) {
			require.Equal(t, "refused", witness.Reason(err))
		}},
		{"200 with no signature line", 200, "text/plain", "hello\n", func(t *testing.T, err error) {
			require.Equal(t, "bad_cosignature", witness.Reason(err))
		}},
		{"200 with another witness's cosignature", 200, "text/plain", "", func(t *testing.T, err error) {
			require.Equal(t, "bad_cosignature", witness.Reason(err))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []byte
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				require.Equal(t, "/prefix/add-checkpoint", r.URL.Path)
				require.Equal(t, http.MethodPost, r.Method)
				got, _ = io.ReadAll(r.Body)
				body := tc.body
				if tc.name == "200 with another witness's cosignature" {
					// A real cosignature, but by a key this client does not trust.
					resp, err := http.Post(real.URL+"/add-checkpoint", "text/plain", strings.NewReader(string(got)))
					require.NoError(t, err)
					b, _ := io.ReadAll(resp.Body)
					_ = resp.Body.Close()
					require.Equal(t, 200, resp.StatusCode)
					body = string(b)
				}
				w.Header().Set("Content-Type", tc.contentType)
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, body)
			}))
			defer srv.Close()
			other := witnesstest.Start(t, "witness.example/w2", log.verifier)
			w, err := witness.NewWitness(srv.URL+"/prefix/", other.VKey, srv.Client(), nil)
			require.NoError(t, err)
			_, err = w.AddCheckpoint(context.Background(), 0, nil, signed)
			require.Error(t, err)
			tc.check(t, err)
			require.Equal(t, "old 0\n\n"+string(signed), string(got))
		})
	}
}

// The request body carries the proof as the protocol says, and the
// client returns the fake witness's cosignature, verified.
func TestAddCheckpointAgainstFakeWitness(t *testing.T) {
	log := newTestLog(t, "example.com/log")
	fw := witnesstest.Start(t, "witness.example/w1", log.verifier)
	w, err := witness.NewWitness(fw.URL, fw.VKey, nil, nil)
	require.NoError(t, err)
	ctx := context.Background()

	log.add(3, "a")
	line, err := w.AddCheckpoint(ctx, 0, nil, log.checkpoint())
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(line), "\u2014 witness.example/w1 "), "%q", line)

	log.add(4, "b")
	proof, err := tlog.ProveTree(7, 3, log)
	require.NoError(t, err)
	signed := log.checkpoint()
	line, err = w.AddCheckpoint(ctx, 3, proof, signed)
	require.NoError(t, err)
	require.Equal(t, 1, witness.CountCosignatures(append(signed, line...), []note.Verifier{w.Verifier()}))
	require.Equal(t, int64(7), fw.Size("example.com/log"))

	// A proof that does not hold: 422.
	log.add(1, "c")
	bad := append(tlog.TreeProof(nil), proof...)
	bad[0][0] ^= 1
	_, err = w.AddCheckpoint(ctx, 7, bad, log.checkpoint())
	var re *witness.RefusedError
	require.ErrorAs(t, err, &re)
	require.Equal(t, http.StatusUnprocessableEntity, re.Status)
}

func TestAddCheckpointTransportErrorIsRedacted(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/w?token=s3cr3t"
	srv.Close()
	log := newTestLog(t, "example.com/log")
	fw := witnesstest.Start(t, "witness.example/w1", log.verifier)
	redact := func(err error) error { return errors.New(strings.ReplaceAll(err.Error(), "s3cr3t", "xxx")) }
	w, err := witness.NewWitness(url, fw.VKey, nil, redact)
	require.NoError(t, err)
	log.add(1, "a")
	_, err = w.AddCheckpoint(context.Background(), 0, nil, log.checkpoint())
	require.Error(t, err)
	require.NotContains(t, err.Error(), "s3cr3t")
	require.Equal(t, "unreachable", witness.Reason(err))
}

// TestAddCheckpointKeepsTheEndpointsQuery: a submission prefix with a
// query (an access token, say) gets add-checkpoint on its path, and the
// query stays on the request.
func TestAddCheckpointKeepsTheEndpointsQuery(t *testing.T) {
	log := newTestLog(t, "example.com/log")
	fw := witnesstest.Start(t, "witness.example/w1", log.verifier)
	var path, query string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, query = r.URL.Path, r.URL.RawQuery
		body, _ := io.ReadAll(r.Body)
		resp, err := http.Post(fw.URL+"/add-checkpoint", "text/plain", bytes.NewReader(body))
		if err != nil {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		defer func() { _ = resp.Body.Close() }()
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	defer srv.Close()
	w, err := witness.NewWitness(srv.URL+"/a//w/?token=abc", fw.VKey, srv.Client(), nil)
	require.NoError(t, err)
	log.add(3, "a")
	_, err = w.AddCheckpoint(context.Background(), 0, nil, log.checkpoint())
	require.NoError(t, err)
	require.Equal(t, "/a//w/add-checkpoint", path, "the prefix's path as given")
	require.Equal(t, "token=abc", query)
}
