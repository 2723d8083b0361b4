GO ?= go

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

fmt:
	gofmt -w $$(git ls-files '*.go')

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Golden and generated files: every package whose tests import
# internal/golden (the one -update flag) rewrites them.
golden:
	$(GO) test $$($(GO) list -f '{{.ImportPath}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./... | awk '/internal\/golden/ {print $$1}' | grep -v '/internal/golden$$') -update

ci: lint test
