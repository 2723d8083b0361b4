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

# Packages with golden files define -update; only they get the flag.
golden:
	$(GO) test $$(grep -rl --include='*_test.go' 'flag.Bool("update"' . | xargs -n1 dirname | sort -u) -update

ci: lint test
