# browserop: `make demo` runs the demo, `make test` runs every test.
GO ?= go
# Chromium tests need time on a 2-core machine under the race detector.
TEST_FLAGS ?= -race -timeout 25m

.PHONY: demo test check bench build setup

setup:
	scripts/setup.sh

demo: setup
	$(GO) run ./cmd/browserop demo

test: setup check
	$(GO) test $(TEST_FLAGS) ./...

check:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...

bench:
	$(GO) test -run '^$$' -bench . -benchtime 200x ./ledger/ ./budgets/

build:
	$(GO) build -o bin/browserop ./cmd/browserop
