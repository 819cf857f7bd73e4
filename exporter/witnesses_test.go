package sandboxauditexporter

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/torchwood"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"golang.org/x/mod/sumdb/note"

	"github.com/sandboxaudit/sandboxaudit/auditevent"
	"github.com/sandboxaudit/sandboxaudit/internal/integrity"
	"github.com/sandboxaudit/sandboxaudit/internal/witness"
	"github.com/sandboxaudit/sandboxaudit/internal/witness/witnesstest"
)

func startWitnessedExporters(t *testing.T, cfg *Config, logger *zap.Logger) *integrityExporters {
	t.Helper()
	require.NoError(t, confmap.Validate(cfg))
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := exportertest.NewNopSettings(typ)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	set.Logger = logger
	tr, err := NewFactory().CreateTraces(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, tr.Start(context.Background(), componenttest.NewNopHost()))
	ie := &integrityExporters{testExporters: &testExporters{traces: tr, tel: tel}}
	t.Cleanup(func() {
		if !ie.done {
			require.NoError(t, tr.Shutdown(context.Background()))
		}
	})
	return ie
}

// witnessConfig is the config of a sealed file sink, and its integrity
// settings, for the witnesses a test adds.
func witnessConfig(t *testing.T) (*Config, *IntegrityConfig) {
	t.Helper()
	cfg := sealedFileConfig(t, filepath.Join(t.TempDir(), "a.jsonl"))
	return cfg, cfg.File.GetOrInsertDefault().Integrity.GetOrInsertDefault()
}

func withWitness(ic *IntegrityConfig, fw *witnesstest.Fake) {
	cc := confighttp.NewDefaultClientConfig()
	cc.Endpoint = fw.URL
	ic.Witnesses = append(ic.Witnesses, WitnessConfig{ClientConfig: cc, PublicKey: fw.VKey})
}

// The shutdown checkpoint goes to the witness, and its cosignature is
// recorded beside the file with the checkpoint it cosigns.
func TestWitnessCosignsCheckpoints(t *testing.T) {
	keyPath, pubPath := writeKeys(t)
	logKey, err := integrity.LoadVerifierKey(pubPath)
	require.NoError(t, err)
	fw := witnesstest.Start(t, "witness.example/w1", logKey)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	withWitness(withIntegrity(cfg, keyPath), fw)

	te := startWitnessedExporters(t, cfg, zap.NewNop())
	require.NoError(t, te.traces.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...)))
	te.shutdown(t)

	lines := readLines(t, path)
	rec := lastWitnessedRecord(t, path)
	c, err := integrity.OpenCheckpoint(rec, logKey)
	require.NoError(t, err)
	require.Equal(t, int64(len(lines)), c.N)
	v, err := witness.ParseKey(fw.VKey)
	require.NoError(t, err)
	require.Equal(t, 1, witness.CountCosignatures(rec, []note.Verifier{v}))
	require.Equal(t, int64(len(lines)), fw.Size(c.Origin))
	require.Equal(t, int64(1), te.sum(t, "otelcol_sandboxaudit_exporter_witness_cosignatures"))
}

// A witness that does not know the log: an ERROR naming the file and the
// witness, and the failure metric with the reason.
func TestWitnessRefusalIsAnError(t *testing.T) {
	keyPath, pubPath := writeKeys(t)
	logKey, err := integrity.LoadVerifierKey(pubPath)
	require.NoError(t, err)
	fw := witnesstest.Start(t, "witness.example/w1", logKey)
	fw.SetStatus(http.StatusNotFound)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	withWitness(withIntegrity(cfg, keyPath), fw)

	core, logs := observer.New(zapcore.InfoLevel)
	te := startWitnessedExporters(t, cfg, zap.New(core))
	require.NoError(t, te.traces.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...)))
	te.shutdown(t)

	errs := logs.FilterLevelExact(zapcore.ErrorLevel).FilterField(zap.String("witness", "witness.example/w1")).All()
	require.Len(t, errs, 1)
	require.Contains(t, errs[0].ContextMap()["error"], "does not know this log's origin")
	require.Equal(t, int64(1), te.counter(t, "otelcol_sandboxaudit_exporter_witness_failures", "reason", "unknown_log"))
	_, err = os.Stat(integrity.WitnessedPath(path))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing cosigned, nothing recorded")
}

func TestWitnessConfigErrorsNameTheKey(t *testing.T) {
	cfg, ic := witnessConfig(t)
	ic.Witnesses = []WitnessConfig{{ClientConfig: confighttp.ClientConfig{Endpoint: "http://127.0.0.1:1"}, PublicKey: "nope"}}
	ic.WitnessQuorum = 2
	err := confmap.Validate(cfg)
	require.ErrorContains(t, err, "witnesses::0::public_key: not a witness cosignature key")
	require.ErrorContains(t, err, "witness_quorum: must be between 0 (all) and the 1 witnesses, got 2")
}

// A witness without public_key (an unset ${env:W1_KEY}) is told so, not
// that an empty key is malformed.
func TestWitnessWithoutPublicKeyIsToldItMustBeSet(t *testing.T) {
	cfg, ic := witnessConfig(t)
	ic.Witnesses = []WitnessConfig{{ClientConfig: confighttp.ClientConfig{Endpoint: "http://127.0.0.1:1"}}}
	require.ErrorContains(t, confmap.Validate(cfg), "witnesses::0::public_key: must be set")
}

// The same witness listed twice would meet a quorum of two with one
// cosignature.
func TestWitnessConfigRefusesTheSameWitnessTwice(t *testing.T) {
	fw := witnesstest.Start(t, "witness.example/w1", nil)
	cfg, ic := witnessConfig(t)
	ic.Witnesses = []WitnessConfig{
		{ClientConfig: confighttp.ClientConfig{Endpoint: "http://127.0.0.1:1"}, PublicKey: fw.VKey},
		{ClientConfig: confighttp.ClientConfig{Endpoint: "http://127.0.0.1:2"}, PublicKey: " " + fw.VKey + "\n"},
	}
	err := confmap.Validate(cfg)
	require.ErrorContains(t, err, "witnesses::1::public_key: the same witness as witnesses::0 (witness.example/w1)")
}

// One witness key under two names: a cosignature/v1 signs no name, so
// one witness's cosignature would verify under both and meet a quorum of
// two.
func TestWitnessConfigRefusesOneKeyUnderTwoNames(t *testing.T) {
	fw := witnesstest.Start(t, "witness.example/w1", nil)
	v, err := witness.ParseKey(fw.VKey)
	require.NoError(t, err)
	alias, err := torchwood.NewCosignatureVerifierFromKey("witness.example/alias", v.PublicKey())
	require.NoError(t, err)
	cfg, ic := witnessConfig(t)
	ic.Witnesses = []WitnessConfig{
		{ClientConfig: confighttp.ClientConfig{Endpoint: "http://127.0.0.1:1"}, PublicKey: fw.VKey},
		{ClientConfig: confighttp.ClientConfig{Endpoint: "http://127.0.0.1:2"}, PublicKey: alias.String()},
	}
	err = confmap.Validate(cfg)
	require.ErrorContains(t, err, "witnesses::1::public_key: the same witness as witnesses::0 (witness.example/w1)")
}

// More witnesses than verify takes keys: their cosignatures could never
// be checked.
func TestWitnessConfigRefusesMoreWitnessesThanVerifyTakes(t *testing.T) {
	cfg, ic := witnessConfig(t)
	for i := range witness.MaxWitnesses + 1 {
		pub, _, err := ed25519.GenerateKey(nil)
		require.NoError(t, err)
		v, err := torchwood.NewCosignatureVerifierFromKey(fmt.Sprintf("w%d.example/w", i), pub)
		require.NoError(t, err)
		ic.Witnesses = append(ic.Witnesses, WitnessConfig{ClientConfig: confighttp.ClientConfig{Endpoint: "http://127.0.0.1:1"}, PublicKey: v.String()})
	}
	err := confmap.Validate(cfg)
	require.ErrorContains(t, err, "witnesses: 65 witnesses, limit 64")
}

// A compressed request body is one no witness reads (the protocol's body
// is plain text): every request would be refused with 400.
func TestWitnessConfigRefusesCompression(t *testing.T) {
	fw := witnesstest.Start(t, "witness.example/w1", nil)
	cfg, ic := witnessConfig(t)
	ic.Witnesses = []WitnessConfig{{ClientConfig: confighttp.ClientConfig{Endpoint: fw.URL, Compression: "gzip"}, PublicKey: fw.VKey}}
	err := confmap.Validate(cfg)
	require.ErrorContains(t, err, "witnesses::0::compression: ")
}

func lastWitnessedRecord(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(integrity.WitnessedPath(path))
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	nr := integrity.NewNoteReader(f)
	var last []byte
	for {
		rec, err := nr.Next()
		if err != nil {
			break
		}
		last = rec
	}
	require.NotNil(t, last)
	return last
}

// A witness (or a service that is not one) whose response net/http cannot
// parse, echoing the request: the error the collector logs shows neither
// the header's token nor the endpoint's query.
func TestWitnessTransportErrorsEchoNothing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer func() { _ = ln.Close() }()
	go func() {
		for { // ends when the listener closes
			c, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 4096)
			n, _ := c.Read(buf)
			line, _, _ := strings.Cut(string(buf[:n]), "\r\n") // the request line, query and all
			auth := ""
			if _, rest, ok := strings.Cut(string(buf[:n]), "Authorization: "); ok {
				auth, _, _ = strings.Cut(rest, "\r\n")
			}
			_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\n" + auth + " " + line + "\r\n\r\n"))
			_ = c.Close()
		}
	}()
	keyPath, pubPath := writeKeys(t)
	logKey, err := integrity.LoadVerifierKey(pubPath)
	require.NoError(t, err)
	fw := witnesstest.Start(t, "witness.example/w1", logKey) // for its key only
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	cfg := syncConfig()
	withFile(cfg, path, auditevent.PolicyOverride{})
	ic := withIntegrity(cfg, keyPath)
	cc := confighttp.NewDefaultClientConfig()
	cc.Endpoint = "http://" + ln.Addr().String() + "/w?key=QUERYSECRET"
	cc.Headers.Set("Authorization", "Bearer WITNESSTOKEN")
	ic.Witnesses = []WitnessConfig{{ClientConfig: cc, PublicKey: fw.VKey}}

	core, logs := observer.New(zapcore.InfoLevel)
	te := startWitnessedExporters(t, cfg, zap.New(core))
	require.NoError(t, te.traces.ConsumeTraces(context.Background(), buildTraces(t, sampleSpans()...)))
	te.shutdown(t)
	errs := logs.FilterLevelExact(zapcore.ErrorLevel).All()
	require.NotEmpty(t, errs)
	for _, e := range errs {
		msg := fmt.Sprint(e.ContextMap())
		require.NotContains(t, msg, "WITNESSTOKEN")
		require.NotContains(t, msg, "QUERYSECRET")
	}
	require.Equal(t, int64(1), te.counter(t, "otelcol_sandboxaudit_exporter_witness_failures", "reason", "unreachable"))
}
