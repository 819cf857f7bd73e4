package e2e

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	kafkaTopic      = "sandbox-audit"
	kafkaPartitions = 3
	// fetchThrottle slows every fetch while a test needs the central
	// collector to be caught in the middle of consuming.
	fetchThrottle = 100 * time.Millisecond
)

// kafkaTier is a kfake broker in the test process and the edge and central
// collectors of testdata/kafka-edge.yaml and kafka-central.yaml around it.
// The edge also writes, with the sandboxaudit exporter's file sink, the lines
// it produces: the reference the central file is compared with.
type kafkaTier struct {
	cluster  *kfake.Cluster
	brokers  string
	throttle atomic.Bool

	edgeDir, centralDir string
	edgeOTLP            string
	edgeEvents          string // the edge's sandboxaudit receiver
	edgeRef             string // the edge's own audit file
	centralAudit        string
	centralMetrics      string
}

func newKafkaTier(t *testing.T) *kafkaTier {
	t.Helper()
	k := &kafkaTier{}
	var err error
	k.cluster, err = kfake.NewCluster(
		kfake.NumBrokers(1),
		kfake.SeedTopics(kafkaPartitions, kafkaTopic),
		kfake.GroupMinSessionTimeout(time.Second),
	)
	require.NoError(t, err)
	t.Cleanup(k.cluster.Close)
	k.brokers = k.cluster.ListenAddrs()[0]
	require.True(t, strings.HasPrefix(k.brokers, "127.0.0.1:"), "broker on %s", k.brokers)
	k.cluster.ControlKey(int16(kmsg.Fetch), func(kmsg.Request) (kmsg.Response, error, bool) {
		k.cluster.KeepControl()
		if k.throttle.Load() {
			time.Sleep(fetchThrottle)
		}
		return nil, nil, false // the broker handles the fetch as usual
	})

	dir := t.TempDir()
	k.edgeDir, k.centralDir = filepath.Join(dir, "edge"), filepath.Join(dir, "central")
	addrs := freeAddrs(t, 3)
	k.edgeOTLP, k.edgeEvents, k.centralMetrics = addrs[0], addrs[1], addrs[2]
	k.edgeRef = filepath.Join(k.edgeDir, "reference", "events.jsonl")
	k.centralAudit = filepath.Join(k.centralDir, "central-audit", "events.jsonl")
	return k
}

// edgeConfig is testdata/kafka-edge.yaml on test addresses, with the
// sandboxaudit exporter beside the kafka exporter in both pipelines.
func (k *kafkaTier) edgeConfig(t *testing.T) string {
	t.Helper()
	cfg := readTestdata(t, "kafka-edge.yaml")
	cfg = strings.Replace(cfg, "    protocols:\n      grpc:\n        endpoint: 127.0.0.1:4317\n      http:\n        endpoint: 127.0.0.1:4318",
		"    protocols:\n      http:\n        endpoint: "+k.edgeOTLP, 1)
	cfg = strings.Replace(cfg, "    endpoint: 127.0.0.1:8088", "    endpoint: "+k.edgeEvents, 1)
	cfg = strings.Replace(cfg, "exporters:\n  kafka:\n", "exporters:\n  sandboxaudit:\n    file:\n      path: "+k.edgeRef+"\n  kafka:\n", 1)
	cfg = strings.ReplaceAll(cfg, "      exporters: [kafka]", "      exporters: [kafka, sandboxaudit]")
	return k.withBrokers(t, cfg)
}

// centralConfig is testdata/kafka-central.yaml on test addresses, with a
// short session timeout (a SIGKILLed member leaves the group sooner), short
// fetch waits, and self-metrics on a loopback port.
func (k *kafkaTier) centralConfig(t *testing.T) string {
	t.Helper()
	cfg := readTestdata(t, "kafka-central.yaml")
	cfg = strings.Replace(cfg, "    group_id: sandboxaudit-central\n",
		"    group_id: sandboxaudit-central\n    session_timeout: 2s\n    heartbeat_interval: 500ms\n    max_fetch_wait: 100ms\n    max_partition_fetch_size: 1024\n", 1)
	host, port, err := net.SplitHostPort(k.centralMetrics)
	require.NoError(t, err)
	cfg = strings.Replace(cfg, "    metrics:\n      level: none\n",
		"    metrics:\n      readers:\n        - pull:\n            exporter:\n              prometheus:\n                host: "+host+"\n                port: "+port+"\n", 1)
	return k.withBrokers(t, cfg)
}

func (k *kafkaTier) withBrokers(t *testing.T, cfg string) string {
	t.Helper()
	const env = `"${env:KAFKA_BROKERS:-127.0.0.1:9092}"`
	require.Contains(t, cfg, env)
	return strings.ReplaceAll(cfg, env, k.brokers)
}

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	return string(mustRead(t, filepath.Join("..", "testdata", name)))
}

func (k *kafkaTier) startEdge(t *testing.T) *collector {
	return startCollector(t, "kafka-edge", k.edgeDir, k.edgeConfig(t), k.edgeOTLP, k.edgeEvents)
}

func (k *kafkaTier) startCentral(t *testing.T) *collector {
	return startCollector(t, "kafka-central", k.centralDir, k.centralConfig(t), k.centralMetrics)
}

// kill SIGKILLs a collector and waits for it to be gone.
func (c *collector) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, c.cmd.Process.Kill())
	select {
	case <-c.done:
	case <-time.After(stopTimeout):
		t.Fatalf("%s: still running %s after SIGKILL", c.name, stopTimeout)
	}
}

// lineSet reads a finished file's lines as a multiset.
func lineSet(t *testing.T, path string) map[string]int {
	t.Helper()
	_, lines := readEvents(t, path)
	return multiset(lines)
}

func multiset(lines []string) map[string]int {
	m := map[string]int{}
	for _, l := range lines {
		m[l]++
	}
	return m
}

// waitDistinct waits until path holds every line of want at least once,
// then requires that it holds nothing else, and returns its multiset.
func waitDistinct(t *testing.T, path string, want map[string]int) map[string]int {
	t.Helper()
	deadline := time.Now().Add(deliveryTimeout)
	for {
		_, lines := readWrittenEvents(t, path) // the collector is still consuming
		got := multiset(lines)
		missing := 0
		for l := range want {
			if got[l] == 0 {
				missing++
			}
		}
		if missing == 0 {
			for l := range got {
				require.Contains(t, want, l, "%s holds a line the edge never wrote", path)
			}
			return got
		}
		require.True(t, time.Now().Before(deadline), "%s: %d of %d distinct lines missing after %s", path, missing, len(want), deliveryTimeout)
		time.Sleep(pollInterval)
	}
}

// TestKafkaTwoTier runs kafka-edge.yaml → kfake → kafka-central.yaml:
//   - the central collector starts only after the edge produced: Kafka holds
//     the events, and the central file then holds exactly the edge's file
//     sink lines, byte for byte, each once;
//   - every message is keyed by its session's trace id, the Python
//     HttpProxySink's events included, so a session sits in one partition;
//   - a message with a bad line is counted and logged without its payload,
//     and the consumer goes on;
//   - the central collector SIGKILLed mid-consume and restarted: every
//     event arrives, duplicates are exact copies.
func TestKafkaTwoTier(t *testing.T) {
	requireE2E(t)
	k := newKafkaTier(t)
	k.startEdge(t)

	// Produced before any consumer exists.
	sessions := []string{
		"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b",
		"22222222-3333-4444-8555-666666666666",
		"0f0e0d0c-0b0a-4908-8706-050403020100",
	}
	for _, s := range sessions {
		runExample(t, k.edgeOTLP, s, "-capture-output")
	}
	pythonKeys, posted := pythonSessionsOverKafka(t, k)
	ref := lineSet(t, k.edgeRef)
	require.Len(t, ref, 12*len(sessions)+posted)
	requireSessionsKeyed(t, topicLines(t, k.brokers, ref), pythonKeys)

	central := k.startCentral(t)
	waitLines(t, k.centralAudit, len(ref))
	got := lineSet(t, k.centralAudit)
	assert.Equal(t, ref, got, "central file != the edge's file sink lines")
	requireVerifies(t, k.centralAudit)
	evs, _ := readEvents(t, k.centralAudit)
	assert.Len(t, bySession(evs), len(sessions)+len(pythonKeys))
	for _, e := range evs {
		// Captured on the spans, redacted by the edge's extension policy.
		assert.Nil(t, e.Stdout, "stdout of %s seq %d", e.SessionID, e.Seq)
	}

	// A bad line from a foreign producer: the message is refused whole,
	// counted, and logged with line and field only; a good message behind it
	// in the same partition still arrives, and so does the next session.
	const secret = "s3cr3t-token-do-not-log"
	bad := strings.Replace(proxyEvents[1], `"op":"read"`, `"op":"`+secret+`"`, 1)
	produceRaw(t, k.brokers, 0, proxyEvents[0]+"\n"+bad+"\n")
	produceRaw(t, k.brokers, 0, proxyEvents[0]+"\n"+proxyEvents[1]+"\n")
	const after = "33333333-4444-4555-8666-777777777777"
	runExample(t, k.edgeOTLP, after)
	want := withForeign(lineSet(t, k.edgeRef))
	waitLines(t, k.centralAudit, len(want))
	assert.Equal(t, want, lineSet(t, k.centralAudit))
	deadline := time.Now().Add(deliveryTimeout)
	for scrapeCounter(t, k.centralMetrics, "otelcol_sandboxaudit_encoding_messages_rejected") < 1 {
		require.True(t, time.Now().Before(deadline), "the bad message was not counted")
		time.Sleep(pollInterval)
	}
	assert.Equal(t, 1.0, scrapeCounter(t, k.centralMetrics, "otelcol_sandboxaudit_encoding_messages_rejected"))
	log := string(mustRead(t, central.log))
	assert.Contains(t, log, "line 2: op: literal_error")
	assert.NotContains(t, log, secret, "a payload value reached the log")
	central.stop(t)

	// Many messages, then a central collector that is killed while it is
	// consuming them and started again.
	postSpans(t, k.edgeOTLP, 40, 25)
	want = withForeign(lineSet(t, k.edgeRef))
	total := len(want)
	before := countLines(t, k.centralAudit)
	k.throttle.Store(true)
	central = k.startCentral(t)
	deadline = time.Now().Add(deliveryTimeout)
	for countLines(t, k.centralAudit) == before {
		require.True(t, time.Now().Before(deadline), "central consumed nothing in %s", deliveryTimeout)
		time.Sleep(pollInterval)
	}
	central.kill(t)
	atKill := countLines(t, k.centralAudit)
	require.Less(t, atKill, total, "the kill did not land mid-consume")
	k.throttle.Store(false)
	k.startCentral(t)
	final := waitDistinct(t, k.centralAudit, want)
	dups := 0
	for _, n := range final {
		dups += n - 1
	}
	t.Logf("lines at kill: %d of %d; duplicates after restart: %d", atKill-before, total-before, dups)
	code, out := runCLI(t, "verify", "--allow-duplicates", k.centralAudit)
	require.Equal(t, 0, code, "verify --allow-duplicates:\n%s", indent(out))
}

// withForeign adds the lines of the good message produceRaw wrote.
func withForeign(lines map[string]int) map[string]int {
	for _, l := range proxyEvents {
		lines[l]++
	}
	return lines
}

// produceRaw writes one message to a partition of the topic, as a foreign
// producer would.
func produceRaw(t *testing.T, brokers string, partition int32, value string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), deliveryTimeout)
	defer cancel()
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: kafkaTopic, Partition: partition, Value: []byte(value)}).FirstErr())
}

// scrapeCounter reads a counter's value from the collector's Prometheus
// endpoint (0 when it is not there yet).
func scrapeCounter(t *testing.T, addr, name string) float64 {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `(?:_total)?(?:\{[^}]*\})? ([0-9.e+]+)$`)
	sum := 0.0
	for _, m := range re.FindAllStringSubmatch(string(body), -1) {
		v, err := strconv.ParseFloat(m[1], 64)
		require.NoError(t, err)
		sum += v
	}
	return sum
}

// postSpans sends requests OTLP/HTTP protobuf requests of spansPer sandbox
// spans each, every span its own session and trace, as sandboxtrace records
// them (seqs, data, outcome).
func postSpans(t *testing.T, otlpAddr string, requests, spansPer int) {
	t.Helper()
	client := &http.Client{Timeout: deliveryTimeout}
	for r := range requests {
		body := otlpSpans(t, r, spansPer)
		resp, err := client.Post("http://"+otlpAddr+"/v1/traces", "application/x-protobuf", bytes.NewReader(body))
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, http.StatusOK, resp.StatusCode, "request %d", r)
	}
}
