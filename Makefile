# Stamp-duty order service. `make help` lists the targets.
#
# SAM builds each function with `make build-<LogicalId>` (BuildMethod:
# makefile in template.yaml), setting ARTIFACTS_DIR; `make build` does the
# same into .build/<LogicalId>/.

GO              ?= go
ARTIFACTS_DIR   ?= .build/$(@:build-%=%)
LAMBDA_ENV      := GOOS=linux GOARCH=arm64 CGO_ENABLED=0
LAMBDA_FLAGS    := -tags lambda.norpc -trimpath -ldflags "-s -w"
FUNCTIONS       := CreateOrderFunction ListOrdersFunction ListArticlesFunction GetOrderFunction UploadDocumentFunction OpsFunction StampDutyQuotesFunction NotFoundFunction WebhooksFunction WebhookDispatchFunction
DYNALITE_DIR    := cmd/local/dynalite
DYNALITE        := $(DYNALITE_DIR)/node_modules/dynalite/cli.js
# The local S3 server: Versity's S3 gateway, built from the Go module proxy
# (no C compiler needed) into .build/tools, which make clean keeps.
VERSITYGW_VERSION := v1.8.0
VERSITYGW       := .build/tools/versitygw

.PHONY: help build test vet local local-db deploy dynalite versitygw clean $(addprefix build-,$(FUNCTIONS))

help: ## list the targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

# One target per function of template.yaml: the release build for provided.al2023 on arm64.
build-CreateOrderFunction:
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/create-order
build-ListOrdersFunction:
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/list-orders
build-ListArticlesFunction:
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/list-articles
build-GetOrderFunction:
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/get-order
build-UploadDocumentFunction:
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/upload-document
build-OpsFunction:
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/ops
build-StampDutyQuotesFunction:
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/stamp-duty-quotes
build-NotFoundFunction:
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/not-found
build-WebhooksFunction:
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/webhooks
build-WebhookDispatchFunction:
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/webhook-dispatch

build: $(addprefix build-,$(FUNCTIONS)) ## build every function's bootstrap into .build/<LogicalId>/

$(DYNALITE): $(DYNALITE_DIR)/package.json $(DYNALITE_DIR)/package-lock.json
	npm ci --prefix $(DYNALITE_DIR) --no-audit --no-fund --loglevel=error
	@touch $@

dynalite: $(DYNALITE) ## install the local DynamoDB engine (pinned in cmd/local/dynalite)

# The real-client test (cmd/local's TestLocalStack runs it with node --test):
# Strapi's official client and qs, pinned in cmd/local/strapiclient.
STRAPICLIENT_DIR := cmd/local/strapiclient
STRAPICLIENT    := $(STRAPICLIENT_DIR)/node_modules/@strapi/client/package.json

$(STRAPICLIENT): $(STRAPICLIENT_DIR)/package.json $(STRAPICLIENT_DIR)/package-lock.json
	npm ci --prefix $(STRAPICLIENT_DIR) --no-audit --no-fund --loglevel=error
	@touch $@

.PHONY: strapiclient
strapiclient: $(STRAPICLIENT) ## install the Strapi client of the real-client test (pinned in cmd/local/strapiclient)

$(VERSITYGW):
	@echo "installing the local S3 server (versitygw $(VERSITYGW_VERSION)); the first build takes a few minutes"
	GOBIN=$(abspath .build/tools) CGO_ENABLED=0 $(GO) install github.com/versity/versitygw/cmd/versitygw@$(VERSITYGW_VERSION)

versitygw: $(VERSITYGW) ## install the local S3 server (Versity's S3 gateway, pinned)

# cfn-lint (Python: pip install cfn-lint) is optional: a machine with only Go
# and Node skips it with a note, and CI passes there.
vet: ## gofmt, go vet, and cfn-lint on template.yaml when cfn-lint is installed
	@out=$$(gofmt -l $$(find . -name '*.go' -not -path './cmd/local/dynalite/*')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@if command -v cfn-lint >/dev/null 2>&1; then \
	  echo "cfn-lint template.yaml"; cfn-lint template.yaml; \
	else \
	  echo "cfn-lint not on PATH: template.yaml not linted (pip install cfn-lint)"; \
	fi

# cmd/local's tests run last and alone: they start the whole stack and send
# it 200 concurrent creates, which measure the stack, not whatever other
# test package shares the machine's cores at that moment.
test: $(DYNALITE) $(VERSITYGW) $(STRAPICLIENT) vet ## run every test against a local DynamoDB (dynalite) and S3 (versitygw)
	$(GO) test -race -count=1 $$($(GO) list ./... | grep -v '/cmd/local$$')
	$(GO) test -race -count=1 ./cmd/local

# make local and make local-db build cmd/local, then run it: `go run` ends
# with status 1 whenever it is interrupted, whatever its program does, so
# Ctrl-C, the way to stop the stack, ended in "make: *** ... Error 1". The
# binary stops everything it started on Ctrl-C and exits 0; make, sent the
# same Ctrl-C, then ends quietly.
LOCAL_BIN       ?= .build/local

local: $(DYNALITE) $(VERSITYGW) ## run the API on http://127.0.0.1:3000 with a local DynamoDB
	@echo "local: building cmd/local… (the first run may take a minute)"
	@$(GO) build -o $(LOCAL_BIN) ./cmd/local
	@$(LOCAL_BIN)

deploy: ## build and deploy with SAM (needs the SAM CLI and AWS credentials)
	sam build && sam deploy

clean: ## remove build output
	rm -rf $(filter-out .build/tools,$(wildcard .build/*)) .aws-sam

local-db: $(DYNALITE) $(VERSITYGW) ## run only the local DynamoDB on 127.0.0.1:8000 (tables, catalogue, dev token), for sam local
	@echo "local: building cmd/local… (the first run may take a minute)"
	@$(GO) build -o $(LOCAL_BIN) ./cmd/local
	@$(LOCAL_BIN) -db-only

.PHONY: bench
bench: $(DYNALITE) $(VERSITYGW) ## measure cold start, size, warm cost, DynamoDB units and cost per million requests
	$(GO) run ./cmd/bench $(BENCH_FLAGS)
