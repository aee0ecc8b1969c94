# MetaMesh node. `make run` runs a node on ./library; `make test` runs the
# whole suite. Both install redis-server and ffmpeg first when missing.

GO      ?= go
LIBRARY ?= ./library
# DATA empty: the binary's default data directory
# ($HOME/.local/share/metamesh), the one every metamesh command uses.
DATA    ?=
API     ?= 127.0.0.1:4680
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null)
BIN     := bin/metamesh
FUZZTIME ?= 10s

.PHONY: all build run sample test bench soak fuzz lint deps deps-test deps-bench clean release release-test image image-test

all: build

deps:
	@./scripts/deps.sh

deps-test:
	@./scripts/deps.sh --test

deps-bench:
	@./scripts/deps.sh --bench

# One line says what is built; the go command's "go: downloading" lines
# (some 190 on a first build) are left out, its errors are shown.
build:
	@echo "building $(BIN)$(if $(wildcard $(BIN)),, (the first build downloads Go modules: a few minutes))"
	@log=$$(mktemp); \
	if CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w -X github.com/metamesh/node/node.Version=$(VERSION) -X github.com/metamesh/node/node.Commit=$(COMMIT)" -o $(BIN) ./cmd/metamesh >"$$log" 2>&1; then \
	  grep -v '^go: downloading' "$$log"; rm -f "$$log"; \
	else grep -v '^go: downloading' "$$log" >&2; rm -f "$$log"; exit 1; fi; true

# Only the default library is created; any other LIBRARY goes to the
# binary as it is, whose errors say what is wrong with it.
run: deps build
	@if [ "$(LIBRARY)" = "./library" ]; then mkdir -p "$(LIBRARY)"; fi
	@if [ -z "$(DATA)" ] && [ -f ./.metamesh/identity.key ]; then \
	  echo "note: ./.metamesh holds the data of a node make run started before; make run DATA=./.metamesh runs on it"; fi
	@echo "metamesh runs in the foreground on $(LIBRARY); Ctrl-C stops it."
	exec ./$(BIN) run --library "$(LIBRARY)" $(if $(DATA),--data "$(DATA)") --api "$(API)" $(if $(LISTEN),--listen "$(LISTEN)") $(if $(BOOTSTRAP),--bootstrap "$(BOOTSTRAP)")

# A few small videos (ffmpeg), an NFO, a poster and a subtitle in
# LIBRARY, to look at: files already there are kept.
sample: deps
	@./scripts/sample.sh "$(LIBRARY)"

# Kubo's interop tests (internal/kubotest) run with the Kubo that
# scripts/kubo.sh built, when it did; make test never builds it (that
# takes minutes), and without it those tests skip, saying how to get it.
test: deps-test
	METAMESH_KUBO="$$(./scripts/kubo.sh --if-built)" $(GO) test -race -count=1 -timeout 15m ./...

# The small-file scan is compared with Kubo's ipfs add --only-hash on the
# same folder; scripts/kubo.sh builds Kubo 0.42 from the Go module proxy
# once (without it the comparison is with sha256sum alone). Federation
# starts 20 nodes on loopback, each with its own redis-server.
bench: deps deps-bench
	$(GO) test -run '^$$' -bench 'StoreScaling' -benchtime 20000x -timeout 30m ./store
	$(GO) test -run '^$$' -bench 'Footprint|Upgrade|SearchIndex|PathEncodings|ChangesSweep' -benchtime 1x -timeout 30m ./store
	METAMESH_KUBO="$$(./scripts/kubo.sh || true)" $(GO) test -run '^$$' -bench 'Hasher|Scan' -benchtime 1x -timeout 30m ./ingest
	$(GO) test -run '^$$' -bench 'ParseReleaseName' -timeout 10m ./ingest
	$(GO) test -run '^$$' -bench 'SearchRecall' -benchtime 1x -timeout 10m ./ingest
	$(GO) test -run '^$$' -bench 'SidecarLinks' -benchtime 1x -timeout 10m ./ingest
	$(GO) test -run '^$$' -bench 'MetaThroughput|FileThroughput|SearchHTTP' -benchtime 1x -timeout 10m ./node
	METAMESH_KUBO="$$(./scripts/kubo.sh || true)" $(GO) test -run '^$$' -bench 'ShareFile' -benchtime 1x -timeout 20m ./node
	$(GO) test -run '^$$' -bench 'Catalog' -benchtime 5x -timeout 10m ./node/catalog
	$(GO) test -run '^$$' -bench 'Cache_Flood' -benchtime 1x -timeout 10m ./node/thumbs
	$(GO) test -run '^$$' -bench 'HitRate' -benchtime 1x -timeout 10m ./node/artcache
	$(GO) test -run '^$$' -bench 'Subtitle_Flood' -benchtime 1x -timeout 10m ./api
	$(GO) test -run '^$$' -bench 'Index' -benchtime 1x -timeout 10m ./dag
	$(GO) test -run '^$$' -bench 'Federation|Learner' -benchtime 1x -timeout 30m ./testnet
	$(GO) test -run '^$$' -bench 'SimNetwork' -benchtime 1x -timeout 90m ./testnet/sim
	$(GO) test -run '^$$' -bench 'SimGrowth' -benchtime 1x -timeout 90m ./testnet/sim

# The soak (not part of make test): three households as metamesh
# processes, their libraries churning for SOAK while they look each
# other up, one SIGKILLed and restarted every two minutes, a Redis
# killed once; then everything is checked (docs/development.md).
# SOAK_FAULTS (a comma list of disk, library) adds faults: a data
# directory that fills, a library unmounted and mounted again.
SOAK ?= 10m
SOAK_FAULTS ?=
soak: deps-test
	METAMESH_SOAK=$(SOAK) METAMESH_SOAK_FAULTS=$(SOAK_FAULTS) $(GO) test -run '^TestSoak$$' -count=1 -v -timeout 60m ./cmd/metamesh

# A short run of every fuzz target.
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "fuzz $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; done

# The Redis scripts (store/lua, configured by .luacheckrc) are linted when
# luacheck is installed (Debian: apt-get install lua-check).
lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@if command -v luacheck >/dev/null 2>&1; then luacheck --no-color -q store/lua; \
	else echo "luacheck not installed (apt-get install lua-check): skipped the Lua lint of store/lua"; fi

clean:
	rm -rf bin dist

# Release archives (deploy/INSTALL.md): static binaries for linux/amd64,
# linux/arm64 and linux/arm (ARMv7) with README.md, INSTALL.md and the
# service unit, in dist/metamesh-<version>-linux-<arch>.tar.gz, and
# dist/SHA256SUMS. Reproducible: two runs on a commit give the same sums.
DIST ?= dist
release:
	@VERSION="$(VERSION)" COMMIT="$(COMMIT)" GO="$(GO)" ./scripts/release.sh "$(DIST)"

# The archives checked: the sums verify, a second build gives the same
# ones, each holds what INSTALL.md names, no build path is in a binary,
# and every binary prints its version and hashes a file, the arm64 and
# arm ones under qemu-user-static (installed by deps-test).
release-test: deps-test release
	METAMESH_RELEASE_DIST="$(abspath $(DIST))" METAMESH_RELEASE_VERSION="$(VERSION)" \
	  $(GO) test -count=1 -v -timeout 30m -run '^TestRelease' ./cmd/metamesh

# The one-household container image, metamesh:<version> and
# metamesh:latest, FROM scratch (deploy/image): no registry needed.
IMAGE ?= metamesh
image:
	@VERSION="$(VERSION)" COMMIT="$(COMMIT)" GO="$(GO)" ./deploy/image/build.sh "$(IMAGE)" 2>&1 | \
	  grep -v -e 'legacy builder is deprecated' -e 'Install the buildx' -e 'docs.docker.com/go/buildx' -e '^ *$$' || true
	@docker image inspect "$(IMAGE):latest" >/dev/null

# The image run as README says, against real containers: docker run and
# deploy/compose.yml, the token, a second container on the same volume,
# docker stop.
image-test: image
	METAMESH_IMAGE="$(IMAGE):latest" COMPOSE="$(COMPOSE)" \
	  $(GO) test -count=1 -v -timeout 20m -run '^TestImage' ./cmd/metamesh

# The docker-compose testnet (docker-compose.yml): three households on
# their own networks plus a shared one. Compose v2 (`docker compose`) or v1
# (`docker-compose`), whichever is present. No registry is needed: the
# node image is FROM scratch with bin/metamesh, and redis:7, when absent, is
# a stand-in built from the host's redis-server. The NAT testnet
# (testnet/compose/nat.yml) adds households behind home routers: the
# metamesh-router and metamesh-node-nat images, from host busybox and
# iptables-legacy.
COMPOSE ?= $(shell docker compose version >/dev/null 2>&1 && echo "docker compose" || echo docker-compose)
TESTNET_PROJECT ?= metamesh
NAT_PROJECT ?= metamesh-nat

.PHONY: testnet-images testnet testnet-down testnet-test testnet-nat testnet-nat-down

testnet-images: build
	@GO="$(GO)" ./testnet/docker/images.sh 2>&1 | grep -v -e 'legacy builder is deprecated' -e 'Install the buildx' -e 'docs.docker.com/go/buildx' -e '^ *$$' || true
	@docker image inspect metamesh-node:latest metamesh-node-nat:latest metamesh-router:latest redis:7 >/dev/null

testnet: testnet-images
	@COMPOSE="$(COMPOSE)" COMPOSE_PROJECT_NAME=$(TESTNET_PROJECT) ./testnet/compose/up.sh

testnet-down:
	COMPOSE_PROJECT_NAME=$(TESTNET_PROJECT) $(COMPOSE) down -v --remove-orphans
	rm -f testnet/compose/.env.$(TESTNET_PROJECT)

# Every scenario against real containers, under a project name of its own;
# the test tears everything down itself, also on failure or Ctrl-C.
# The trap is the backstop for a test binary that could not clean up.
testnet-test: testnet-images
	@p=mmtest$$$$; \
	trap 'COMPOSE_PROJECT_NAME=$$p $(COMPOSE) down -v --remove-orphans -t 1 >/dev/null 2>&1; \
	      COMPOSE_PROJECT_NAME=$${p}priv $(COMPOSE) -f testnet/compose/private.yml down -v --remove-orphans -t 1 >/dev/null 2>&1; \
	      COMPOSE_PROJECT_NAME=$${p}nat $(COMPOSE) -f testnet/compose/nat.yml down -v --remove-orphans -t 1 >/dev/null 2>&1' EXIT INT TERM; \
	METAMESH_TESTNET_COMPOSE=1 METAMESH_TESTNET_PROJECT=$$p COMPOSE="$(COMPOSE)" \
	  $(GO) test -count=1 -v -timeout 25m -run 'Compose' ./testnet

# The NAT testnet by hand: households behind cone and symmetric NATs and a
# public relay (testnet/compose/nat.yml); prints each API URL and peer ID.
testnet-nat: testnet-images
	@COMPOSE="$(COMPOSE)" COMPOSE_PROJECT_NAME=$(NAT_PROJECT) ./testnet/compose/nat-up.sh

testnet-nat-down:
	COMPOSE_PROJECT_NAME=$(NAT_PROJECT) $(COMPOSE) -f testnet/compose/nat.yml down -v --remove-orphans
	rm -f testnet/compose/.env.$(NAT_PROJECT)
