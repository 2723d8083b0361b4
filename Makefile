GO ?= go
# golangci-lint runs with .golangci.yml; .ci/run installs this version into
# .ci/bin (GOLANGCI_LINT overrides the binary).
GOLANGCI_LINT_VERSION ?= v2.15.0
GOLANGCI_LINT ?= $(firstword $(wildcard $(CURDIR)/.ci/bin/golangci-lint) $(shell command -v golangci-lint 2>/dev/null))

.PHONY: build demo test lint fmt bench golden ci

build:
	$(GO) build -o bin/runner ./cmd/runner

# The bundled example through the built binary (real exit codes), offline:
# the model's side is replayed from a recorded cassette, no API key needed.
demo: build
	bin/runner exec examples/hello/task.yaml --repo examples/hello/project --isolate --replay examples/hello/session.jsonl

test:
	$(GO) test -race ./...

lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@if [ -z "$(GOLANGCI_LINT)" ]; then \
		echo "make lint: golangci-lint is not installed. Install $(GOLANGCI_LINT_VERSION) with:"; \
		echo "  GOBIN=$(CURDIR)/.ci/bin $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)"; \
		echo "(bash .ci/run does this)"; exit 1; fi
	$(GOLANGCI_LINT) run ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Golden and generated files: every package whose tests import
# internal/golden (the one -update flag) rewrites them.
golden:
	$(GO) test $$($(GO) list -f '{{.ImportPath}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./... | awk '/internal\/golden/ {print $$1}' | grep -v '/internal/golden$$') -update

ci: lint test
