GO ?= go
# golangci-lint runs with .golangci.yml; .ci/run installs this version into
# .ci/bin (GOLANGCI_LINT overrides the binary).
GOLANGCI_LINT_VERSION ?= v2.15.0
GOLANGCI_LINT ?= $(firstword $(wildcard $(CURDIR)/.ci/bin/golangci-lint) $(shell command -v golangci-lint 2>/dev/null))
# actionlint checks the workflows (make lint); nektos/act runs action.yml
# end to end (make act). .ci/run installs both into .ci/bin.
ACTIONLINT_VERSION ?= v1.7.12
ACTIONLINT ?= $(firstword $(wildcard $(CURDIR)/.ci/bin/actionlint) $(shell command -v actionlint 2>/dev/null))
ACT_VERSION ?= v0.2.89
# goreleaser builds the release archives (make release-snapshot; the
# release workflow). .ci/run installs it into .ci/bin, bounded to 15
# minutes (a cold build of it is long; RUNNER_CI_RELEASE=0 skips it).
GORELEASER_VERSION ?= v2.17.0
# kube-score checks the Kubernetes examples (examples/manifests_test.go).
KUBE_SCORE_VERSION ?= v1.20.0
GORELEASER ?= $(firstword $(wildcard $(CURDIR)/.ci/bin/goreleaser) $(shell command -v goreleaser 2>/dev/null))

.PHONY: build demo test lint fmt bench golden ci act release-snapshot

build:
	$(GO) build -o bin/runner ./cmd/runner

# The bundled example through the built binary (real exit codes), offline:
# the model's side is replayed from a recorded cassette, no API key needed.
demo: build
	bin/runner exec examples/hello/task.yaml --repo examples/hello/project --isolate --replay examples/hello/session.jsonl

test:
	$(GO) test -race -timeout 30m ./...

lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@if [ -z "$(GOLANGCI_LINT)" ]; then \
		echo "make lint: golangci-lint is not installed. Install $(GOLANGCI_LINT_VERSION) with:"; \
		echo "  GOBIN=$(CURDIR)/.ci/bin $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)"; \
		echo "(bash .ci/run does this)"; exit 1; fi
	$(GOLANGCI_LINT) run --allow-parallel-runners ./...
	@ACTIONLINT="$(ACTIONLINT)" ACTIONLINT_VERSION="$(ACTIONLINT_VERSION)" GO="$(GO)" bash .ci/lint-workflows

# action.yml end to end under nektos/act (self-hosted platform, no
# containers, no network): e2e/act_test.go, with the fake model and the
# fake GitHub on 127.0.0.1. The act logs are kept in .runner/act/.
act:
	@if [ ! -x $(CURDIR)/.ci/bin/act ] && ! command -v act >/dev/null; then \
		echo "make act: nektos/act is not installed. Install $(ACT_VERSION) with:"; \
		echo "  GOBIN=$(CURDIR)/.ci/bin $(GO) install github.com/nektos/act@$(ACT_VERSION)"; \
		echo "(bash .ci/run does this)"; exit 1; fi
	@mkdir -p .runner/act
	RUNNER_ACT_LOG=$(CURDIR)/.runner/act $(GO) test -count=1 -v -run 'TestActionUnderAct' ./e2e

# The release archives, checksums.txt and SBOMs in dist/, as a tag would
# publish them but with a snapshot version and nothing published.
release-snapshot:
	@if [ -z "$(GORELEASER)" ]; then \
		echo "make release-snapshot: goreleaser is not installed. Install $(GORELEASER_VERSION) with:"; \
		echo "  GOBIN=$(CURDIR)/.ci/bin $(GO) install github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION)"; \
		exit 1; fi
	$(GORELEASER) release --snapshot --clean

fmt:
	gofmt -w $$(git ls-files '*.go')

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Golden and generated files: every package whose tests import
# internal/golden (the one -update flag) rewrites them.
golden:
	$(GO) test $$($(GO) list -f '{{.ImportPath}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./... | awk '/internal\/golden/ {print $$1}' | grep -v '/internal/golden$$') -update

ci: lint test
