# browserop: `make demo` runs the demo, `make test` runs every test.
GO ?= go
# Chromium tests need time on a 2-core machine under the race detector:
# operator's took 25 minutes beside the other packages (2026-12-07).
TEST_FLAGS ?= -race -timeout 45m
# The static checker `make check` runs, at a pinned version.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: demo test check bench bench-wordpress build setup

setup:
	scripts/setup.sh

demo: setup
	$(GO) run ./cmd/browserop demo

test: check
	scripts/setup.sh --tests
	$(GO) test $(TEST_FLAGS) ./...

check:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	@$(GO) mod tidy -diff >/dev/null || { echo "go.mod or go.sum is not tidy: run go mod tidy"; $(GO) mod tidy -diff; exit 1; }
	$(GO) run $(STATICCHECK) ./...

bench:
	$(GO) test -run '^$$' -bench . -benchtime 200x ./ledger/ ./budgets/

# One WordPress post and comment through the adapter and through bare
# chromedp, on a real WordPress (needs scripts/setup.sh --tests).
bench-wordpress:
	scripts/setup.sh --tests
	$(GO) test -run '^$$' -bench WordPress -benchtime 10x -count 3 ./sites/

build:
	$(GO) build -o bin/browserop ./cmd/browserop
