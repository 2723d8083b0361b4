GO ?= go

.PHONY: build test lint fmt bench golden ci

build:
	$(GO) build -o bin/runner ./cmd/runner

test:
	$(GO) test -race ./...

lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

fmt:
	gofmt -w $$(git ls-files '*.go')

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

golden:
	$(GO) test ./... -update

ci: lint test
