# sandboxaudit — see README.md. The build and tests need only Go; the tests
# that also use python3 or Chromium skip without them (.ci/run installs both).
# go1.27.3 fixes 12 reachable standard-library vulnerabilities of 1.26.8;
# `:=` because the machine's env file sets GOTOOLCHAIN=local.
export GOTOOLCHAIN := go1.27.3
GO        ?= go
BIN       ?= bin
FUZZTIME  ?= 30s
STATICCHECK_VERSION ?= v0.8.2
GOLANGCI_VERSION    ?= v2.15.0
GOVULNCHECK_VERSION ?= v1.9.0
GOTESTSUM_VERSION   ?= v1.13.0
# VULNDB: govulncheck's database; machines without the internet point it at an
# unpacked offline copy (file:///…), see docs/development.md.
VULNDB    ?= https://vuln.go.dev

.PHONY: all test unit e2e e2e-jaeger vet bench bench-check bench-rotation bench-e2e bench-e2e-zstd bench-single bench-sync bench-roundtrip bench-canon bench-show fuzz lint vulncheck build install run clean

all: test

## test: vet, then every test including conformance and end-to-end (what CI runs);
## ends with one line: packages and tests passed and failed
test: vet bench-check $(BIN)/gotestsum
	SANDBOXAUDIT_E2E=1 ./$(BIN)/gotestsum --format pkgname --jsonfile $(BIN)/test.json -- -count=1 -timeout 12m ./...; \
	status=$$?; $(TEST_SUMMARY) $(BIN)/test.json; exit $$status

# TEST_SUMMARY reads `go test -json` events: a pass, fail or skip with a
# "Test" field is a test's (subtests included), without one a package's.
define TEST_SUMMARY
awk '/"Action":"(pass|fail|skip)"/ { match($$0, /"Action":"[a-z]+"/); a = substr($$0, RSTART + 10, RLENGTH - 11); \
	if (/"Test":/) t[a]++; else p[a]++ } \
	END { printf "test summary: packages %d passed, %d failed, %d without tests; tests %d passed, %d failed, %d skipped\n", \
	p["pass"], p["fail"], p["skip"], t["pass"], t["fail"], t["skip"] }'
endef

$(BIN)/gotestsum:
	GOBIN=$(abspath $(BIN)) $(GO) install gotest.tools/gotestsum@$(GOTESTSUM_VERSION)

## unit: tests without the end-to-end collector runs
unit:
	$(GO) test -count=1 ./...

## e2e: the end-to-end tests alone: they build the binaries and run collectors on loopback
e2e:
	SANDBOXAUDIT_E2E=1 $(GO) test -count=1 -timeout 10m -v ./e2e/...

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt needed:"; gofmt -l .; exit 1; }

## bench: the micro-benchmarks, on one core (figures in bench/RESULTS.md)
bench:
	$(GO) test -run '^$$' -bench . -benchmem -cpu 1 ./auditevent/ ./internal/... ./exporter/ ./receiver/ ./encoding/

## bench-rotation: what rotation and zstd compression cost the file sink's throughput, on
## and off interleaved in one run (none/off, zstd/off: 1.00 costs nothing), for an encoding
## writer (the main case), a writer that saturates the disk (the worst case) and one at
## 20 MB/s, on one core and two, the compressor alone, and an encoding writer going on over
## 16 segments with all of the compression timed (bench/RESULTS.md, "Rotation")
BENCH_ROTATION_N ?= 20
BENCH_ROTATION_CONTINUOUS_N ?= 3
bench-rotation:
	$(GO) test -run '^$$' -bench 'BenchmarkRotationCostInterleaved|BenchmarkCompressSegment' \
		-benchtime $(BENCH_ROTATION_N)x -count 3 -cpu 1,2 ./internal/filesink/
	$(GO) test -run '^$$' -bench 'BenchmarkRotationCostContinuous' \
		-benchtime $(BENCH_ROTATION_CONTINUOUS_N)x -count 3 -cpu 1,2 ./internal/filesink/

## bench-check: bench/ compiles, its load matches sandboxtrace, and serve works in headless
## Chromium (bench/browser; screenshots into SANDBOXAUDIT_ARTIFACTS); no benchmark runs
SANDBOXAUDIT_ARTIFACTS ?= $(abspath $(BIN))/artifacts
export SANDBOXAUDIT_ARTIFACTS
bench-check:
	cd bench && $(GO) vet -mod=mod ./... && $(GO) test -mod=mod -count=1 ./...

## e2e-jaeger: span-to-audit correlation both ways against a real Jaeger v2 on loopback; builds
## Jaeger from tools/jaeger, its own module so the main module's dependencies stay as they are
## (about 7 CPU-minutes cold)
e2e-jaeger:
	cd tools/jaeger && $(GO) build -o $(abspath $(BIN))/jaeger github.com/jaegertracing/jaeger/cmd/jaeger
	SANDBOXAUDIT_E2E=1 SANDBOXAUDIT_JAEGER=$(abspath $(BIN))/jaeger $(GO) test -count=1 -timeout 10m -v -run '^TestJaegerCorrelation$$' ./e2e/

## bench-e2e: ours vs the contrib fileexporter, same OTLP load, alternated
## BENCH_ROUNDS times in one run, for each span shape in BENCH_SHAPES
## (bench/ is its own module; not part of test)
BENCH_ROUNDS  ?= 3
BENCH_SPANS   ?= 300000
BENCH_PER_REQ ?= 1000
BENCH_WORKERS ?= 2
BENCH_SHAPES  ?= sandboxtrace,light
bench-e2e: build
	cd bench && $(GO) build -mod=mod -o ../$(BIN)/otelcol-fileexporter ./cmd/otelcol-fileexporter
	cd bench && $(GO) build -mod=mod -o ../$(BIN)/bench-e2e ./cmd/e2e
	./$(BIN)/bench-e2e -ours $(BIN)/otelcol-sandboxaudit -baseline $(BIN)/otelcol-fileexporter \
		-rounds $(BENCH_ROUNDS) -spans $(BENCH_SPANS) -per-request $(BENCH_PER_REQ) -workers $(BENCH_WORKERS) \
		-shapes $(BENCH_SHAPES)

## bench-e2e-zstd: the collector rotating every BENCH_ROTATE_MB MiB with zstd, rotating
## without compression, and not rotating, same OTLP load, alternated; a compressing run
## ends when its last segment is compressed, and that work counts in its CPU and time
BENCH_ROTATE_MB ?= 16
bench-e2e-zstd: build
	cd bench && $(GO) build -mod=mod -o ../$(BIN)/bench-e2e ./cmd/e2e
	./$(BIN)/bench-e2e -ours $(BIN)/otelcol-sandboxaudit -vs zstd -rotate-mb $(BENCH_ROTATE_MB) \
		-rounds $(BENCH_ROUNDS) -spans $(BENCH_SPANS) -per-request $(BENCH_PER_REQ) -workers $(BENCH_WORKERS) \
		-shapes $(BENCH_SHAPES)

## bench-single: HttpProxySink-style load (one event per POST) against our collector
## with fsync batch and fsync never (the ceiling), or with BENCH_SINK=spool spooling
## for an HTTP endpoint that is down, and BENCH_PREVIOUS (an earlier
## otelcol-sandboxaudit binary) when set, for BENCH_CLIENTS concurrent sessions
BENCH_CLIENTS  ?= 1,4,16,64
BENCH_SINK     ?= file
BENCH_PREVIOUS ?=
bench-single: build
	cd bench && $(GO) build -mod=mod -o ../$(BIN)/bench-single ./cmd/single
	./$(BIN)/bench-single -ours $(BIN)/otelcol-sandboxaudit -sink $(BENCH_SINK) -clients $(BENCH_CLIENTS) \
		-rounds $(BENCH_ROUNDS) $(if $(BENCH_PREVIOUS),-previous $(BENCH_PREVIOUS))

## bench-sync: fail-closed audit per operation: sandboxtrace DeliverySync and
## DeliverySyncFinish (otlploghttp, and DirectLogExporter as "direct") against
## fsync batch and never, BENCH_SYNC_SESSIONS
## concurrent sessions, a stand-in for the Python HttpProxySink sync sink
## (bench/sync/proxy_sink.py), and bare round trips for the floor, alternated
## BENCH_SYNC_ROUNDS times in one run
BENCH_SYNC_ROUNDS   ?= 8
BENCH_SYNC_OPS      ?= 2000
BENCH_SYNC_SESSIONS ?= 64
bench-sync: build
	cd bench && $(GO) build -mod=mod -o ../$(BIN)/bench-sync ./cmd/sync
	./$(BIN)/bench-sync -ours $(BIN)/otelcol-sandboxaudit -script bench/sync/proxy_sink.py \
		-rounds $(BENCH_SYNC_ROUNDS) -ops $(BENCH_SYNC_OPS) -sessions $(BENCH_SYNC_SESSIONS)

## bench-roundtrip: one acknowledged loopback POST in process, alternated per
## iteration: bare net/http, the events and OTLP logs intakes into the file
## exporter (fsync never and batch), and an fdatasync on the same disk
BENCH_ROUNDTRIP_N ?= 5000
bench-roundtrip:
	cd bench && $(GO) test -mod=mod -run '^$$' -bench LoopbackPost -benchtime $(BENCH_ROUNDTRIP_N)x -count $(BENCH_ROUNDS) ./roundtrip/

## bench-canon: `sandboxaudit canon` vs the Python stand-in (bench/canon/reference.py,
## needs python3 with pydantic 2) on BENCH_EVENTS HttpProxySink bodies
BENCH_EVENTS ?= 100000
bench-canon: build
	cd bench && $(GO) build -mod=mod -o ../$(BIN)/bench-canon ./cmd/canon
	./$(BIN)/bench-canon -cli $(BIN)/sandboxaudit -reference bench/canon/reference.py \
		-events $(BENCH_EVENTS) -rounds $(BENCH_ROUNDS)

## bench-show: `show` (table and jsonl) and `sessions` on a generated trail of
## BENCH_SHOW_LINES lines (default 1,000,000, 456 MB, written once to TMPDIR):
## wall, CPU and peak RSS of each command, BENCH_ROUNDS times (needs /usr/bin/time);
## BENCH_SHOW_PEER=path/to/another/sandboxaudit runs it alternately with ours
BENCH_SHOW_LINES ?= 1000000
BENCH_SHOW_PEER ?=
bench-show: build
	@f="$${TMPDIR:-/tmp}/sandboxaudit-bench-show-$(BENCH_SHOW_LINES).jsonl"; \
	test -s "$$f" || SANDBOXAUDIT_GEN="$$f" SANDBOXAUDIT_GEN_OPS=$$(( $(BENCH_SHOW_LINES) / 2 )) \
		$(GO) test -count=1 -run '^TestGenerate$$' ./internal/trail/ >/dev/null || exit 1; \
	echo "$$f: $(BENCH_SHOW_LINES) lines, $$(nproc) CPUs, load $$(cut -d' ' -f1-3 /proc/loadavg)"; \
	for r in $$(seq $(BENCH_ROUNDS)); do for c in "show" "show --output jsonl" "sessions"; do \
		for b in $(BENCH_SHOW_PEER) ./$(BIN)/sandboxaudit; do \
			/usr/bin/time -f "$$b $$c: wall %es, CPU %Us user + %Ss sys, peak RSS %M KB" $$b $$c "$$f" >/dev/null || exit 1; \
	done; done; done

## fuzz: each fuzz target of every package for FUZZTIME (default 30s; CI does not fuzz)
fuzz:
	@pkgs=$$($(GO) list ./...) || exit 1; for pkg in $$pkgs; do \
		fs=$$($(GO) test -list '^Fuzz' $$pkg) || exit 1; \
		for f in $$(printf '%s\n' "$$fs" | grep '^Fuzz'); do \
			echo "fuzz $$pkg $$f"; \
			$(GO) test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

## lint: gofmt, go vet, a tidy go.mod, staticcheck and golangci-lint (installed from the module proxy)
lint: vet
	$(GO) mod tidy -diff
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	$(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_VERSION) run --max-same-issues 0 --max-issues-per-linter 0 ./...

## vulncheck: govulncheck (built with this toolchain) on the source and on both binaries
vulncheck: build
	GOBIN=$(abspath $(BIN)) $(GO) install golang.org/x/vuln/cmd/govulncheck@$(GOVULNCHECK_VERSION)
	$(BIN)/govulncheck -db $(VULNDB) ./...
	$(BIN)/govulncheck -db $(VULNDB) -mode binary $(BIN)/otelcol-sandboxaudit
	$(BIN)/govulncheck -db $(VULNDB) -mode binary $(BIN)/sandboxaudit

build:
	$(GO) build -o $(BIN)/otelcol-sandboxaudit ./cmd/otelcol-sandboxaudit
	$(GO) build -o $(BIN)/sandboxaudit ./cmd/sandboxaudit

## install: put sandboxaudit and otelcol-sandboxaudit in GOBIN (default
## `go env GOPATH`/bin) and say where; that directory must be on PATH
install:
	$(GO) install ./cmd/sandboxaudit ./cmd/otelcol-sandboxaudit
	@dir="$$($(GO) env GOBIN)"; dir="$${dir:-$$($(GO) env GOPATH)/bin}"; \
	echo "installed sandboxaudit and otelcol-sandboxaudit in $$dir"; \
	case ":$$PATH:" in *":$$dir:"*) ;; *) echo "$$dir is not on PATH: export PATH=\"$$dir:\$$PATH\"";; esac

## run: build and start the collector; CONFIG=path uses another configuration
## (no CONFIG: the embedded default — loopback receivers, ./audit/events.jsonl)
run: build
	./$(BIN)/otelcol-sandboxaudit $(if $(CONFIG),--config $(CONFIG))

clean:
	rm -rf $(BIN)
