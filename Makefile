# Stamp-duty order service. `make help` lists the targets.
#
# SAM builds each function with `make build-<LogicalId>` (BuildMethod:
# makefile in template.yaml), setting ARTIFACTS_DIR; `make build` does the
# same into .build/<LogicalId>/.

GO              ?= go
ARTIFACTS_DIR   ?= .build/$(@:build-%=%)
LAMBDA_ENV      := GOOS=linux GOARCH=arm64 CGO_ENABLED=0
# TRACING=on builds the functions with -tags tracing (shared/tracing: their
# AWS SDK clients send X-Ray subsegments) and deploys the stack with
# Tracing=Active; TRACING=off, the default, builds them with no tracing code
# linked and deploys with Tracing=PassThrough. One variable sets both, so
# the binaries and the stack's parameter agree.
TRACING         := $(or $(TRACING),off)
ifeq ($(TRACING),on)
LAMBDA_TAGS     := lambda.norpc,tracing
TRACING_MODE    := Active
else ifeq ($(TRACING),off)
LAMBDA_TAGS     := lambda.norpc
TRACING_MODE    := PassThrough
else
$(error TRACING=$(TRACING): say TRACING=on or TRACING=off)
endif
LAMBDA_FLAGS    := -tags $(LAMBDA_TAGS) -trimpath -ldflags "-s -w"
DYNALITE_DIR    := cmd/local/dynalite
DYNALITE        := $(DYNALITE_DIR)/node_modules/dynalite/cli.js
# The local S3 server: Versity's S3 gateway, built from the Go module proxy
# (no C compiler needed) into .build/tools, which make clean keeps.
VERSITYGW_VERSION := v1.8.0
VERSITYGW       := .build/tools/versitygw
# Long steps run under cmd/progress/progress, which says every 10 s (PROGRESS_EVERY)
# how far they are ("n/N packages") and how long they have taken: a first
# run with empty Go caches compiles for minutes. MAKE_STARTED is when this
# make started, so that `make local` and `make test` can report the whole wait.
PROGRESS        := cmd/progress/progress
MAKE_STARTED    := $(shell date +%s)

# FUNCTIONS and FUNCTION_DIR_<LogicalId>, generated from template.yaml.
include functions/functions.mk

.PHONY: help build generate test vet local local-db deploy dynalite versitygw clean $(addprefix build-,$(FUNCTIONS))

help: ## list the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

# One target per function of template.yaml: the release build for
# provided.al2023 on arm64 of its directory under functions/. FUNCTIONS and
# each one's FUNCTION_DIR_<LogicalId> come from functions/functions.mk, which
# `make generate` (go generate ./...) writes from template.yaml.
$(addprefix build-,$(FUNCTIONS)): build-%:
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/$(FUNCTION_DIR_$*)

build: $(addprefix build-,$(FUNCTIONS)) ## build every function's bootstrap into .build/<LogicalId>/

# What restates template.yaml (the catch-all's routes, functions/functions.mk, the
# bench's requests) is written by cmd/internal/generate; its
# TestGeneratedFilesAreCurrent fails when they are stale.
generate: ## rewrite the files generated from template.yaml and events/ (go generate ./...)
	$(GO) generate ./...

$(DYNALITE): $(DYNALITE_DIR)/package.json $(DYNALITE_DIR)/package-lock.json
	@echo "installing the local DynamoDB (dynalite, pinned in $(DYNALITE_DIR)) with npm ci"
	@$(PROGRESS) "npm ci dynalite" -- npm ci --prefix $(DYNALITE_DIR) --no-audit --no-fund --loglevel=error
	@touch $@

dynalite: $(DYNALITE) ## install the local DynamoDB engine (pinned in cmd/local/dynalite)

# The real-client test (cmd/local's TestLocalStack runs it with node --test):
# Strapi's official client and qs, pinned in cmd/local/strapiclient.
STRAPICLIENT_DIR := cmd/local/strapiclient
STRAPICLIENT    := $(STRAPICLIENT_DIR)/node_modules/@strapi/client/package.json

$(STRAPICLIENT): $(STRAPICLIENT_DIR)/package.json $(STRAPICLIENT_DIR)/package-lock.json
	@echo "installing the Strapi client of the real-client test (pinned in $(STRAPICLIENT_DIR)) with npm ci"
	@$(PROGRESS) "npm ci strapiclient" -- npm ci --prefix $(STRAPICLIENT_DIR) --no-audit --no-fund --loglevel=error
	@touch $@

.PHONY: strapiclient
strapiclient: $(STRAPICLIENT) ## install the Strapi client of the real-client test (pinned in cmd/local/strapiclient)

# The local Amazon Cognito user pool server of the staff's sign-in
# (cmd/local, the apigw JWT authorizer's tests): cognito-local, pinned in
# cmd/local/cognito.
COGNITO_DIR     := cmd/local/cognito
COGNITO         := $(COGNITO_DIR)/node_modules/cognito-local/lib/bin/start.js

$(COGNITO): $(COGNITO_DIR)/package.json $(COGNITO_DIR)/package-lock.json
	@echo "installing the local Cognito (cognito-local, pinned in $(COGNITO_DIR)) with npm ci"
	@$(PROGRESS) "npm ci cognito-local" -- npm ci --prefix $(COGNITO_DIR) --no-audit --no-fund --loglevel=error
	@touch $@

.PHONY: cognito
cognito: $(COGNITO) ## install the local Cognito user pool server (cognito-local, pinned in cmd/local/cognito)

# The browser tests' accessibility checker (shared/testkit/browser injects
# axe.min.js into the page): axe-core, pinned in shared/testkit/browser/axe.
AXE_DIR         := shared/testkit/browser/axe
AXE             := $(AXE_DIR)/node_modules/axe-core/axe.min.js

$(AXE): $(AXE_DIR)/package.json $(AXE_DIR)/package-lock.json
	@echo "installing the browser tests' accessibility checker (axe-core, pinned in $(AXE_DIR)) with npm ci"
	@$(PROGRESS) "npm ci axe-core" -- npm ci --prefix $(AXE_DIR) --no-audit --no-fund --loglevel=error
	@touch $@

.PHONY: axe
axe: $(AXE) ## install axe-core, the browser tests' accessibility checker (pinned in shared/testkit/browser/axe)

# The console's Firefox test (cmd/local's TestLocalStack/Console/Firefox
# runs it with node --test): puppeteer-core, which drives a stock Firefox
# over WebDriver BiDi (no geckodriver) and downloads no browser, pinned in
# cmd/local/firefox.
PUPPETEER_DIR   := cmd/local/firefox
PUPPETEER       := $(PUPPETEER_DIR)/node_modules/puppeteer-core/package.json

$(PUPPETEER): $(PUPPETEER_DIR)/package.json $(PUPPETEER_DIR)/package-lock.json
	@echo "installing the driver of the console's Firefox test (puppeteer-core, pinned in $(PUPPETEER_DIR)) with npm ci"
	@$(PROGRESS) "npm ci puppeteer-core" -- npm ci --prefix $(PUPPETEER_DIR) --no-audit --no-fund --loglevel=error
	@touch $@

.PHONY: puppeteer
puppeteer: $(PUPPETEER) ## install puppeteer-core, the driver of the console's Firefox test (pinned in cmd/local/firefox)

# The browser tests' headless Chromium: Debian's chromium package, installed
# with apt-get when $(CHROMIUM) is missing (CI runs as root on a clean
# machine), with no recommended packages (130 instead of 25) but
# fonts-liberation, the metric-compatible Arial, Times and Courier, so that
# pages and screenshots render with the fonts they name. CHROMIUM (also read
# by shared/testkit/browser) may name another Chromium or Chrome binary.
CHROMIUM          ?= /usr/bin/chromium
CHROMIUM_PACKAGES := chromium fonts-liberation

$(CHROMIUM):
	@if [ "$(CHROMIUM)" != /usr/bin/chromium ]; then \
	  echo "chromium: CHROMIUM=$(CHROMIUM) does not exist: name a Chromium binary, or unset CHROMIUM to install Debian's" >&2; exit 1; fi
	@if [ "$$(id -u)" != 0 ]; then \
	  echo "chromium: /usr/bin/chromium is missing and installing it needs root: run" >&2; \
	  echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends $(CHROMIUM_PACKAGES)" >&2; \
	  echo "(or set CHROMIUM to a Chromium or Chrome binary you have)" >&2; \
	  if [ "$$CI" = true ]; then exit 1; fi; \
	  echo "chromium: until then the browser tests are skipped (under CI=true they fail)" >&2; \
	else \
	  echo "installing headless Chromium for the browser tests: Debian's $(CHROMIUM_PACKAGES) with apt-get (about 125 MB to download)" && \
	  DEBIAN_FRONTEND=noninteractive $(PROGRESS) "chromium: apt-get update" -- apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $(PROGRESS) "chromium: apt-get install" -- apt-get install -y -q --no-install-recommends $(CHROMIUM_PACKAGES) && \
	  echo "chromium: installed Debian's chromium $$(dpkg-query -W -f '$${Version}' chromium) at $@"; \
	fi

.PHONY: chromium
chromium: $(CHROMIUM) ## install headless Chromium for the browser tests (Debian's chromium, with apt-get, as root)

# The console's Firefox test (console.md: "works in current Chromium and
# Firefox"): Debian's firefox-esr, installed as Chromium is (root installs,
# not root prints the command; CI=true fails without it), with no recommended
# packages and fonts-liberation. FIREFOX (also read by cmd/local's test) may
# name another Firefox binary.
FIREFOX           ?= /usr/bin/firefox-esr
FIREFOX_PACKAGES  := firefox-esr fonts-liberation

$(FIREFOX):
	@if [ "$(FIREFOX)" != /usr/bin/firefox-esr ]; then \
	  echo "firefox: FIREFOX=$(FIREFOX) does not exist: name a Firefox binary, or unset FIREFOX to install Debian's firefox-esr" >&2; exit 1; fi
	@if [ "$$(id -u)" != 0 ]; then \
	  echo "firefox: /usr/bin/firefox-esr is missing and installing it needs root: run" >&2; \
	  echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends $(FIREFOX_PACKAGES)" >&2; \
	  echo "(or set FIREFOX to a Firefox binary you have)" >&2; \
	  if [ "$$CI" = true ]; then exit 1; fi; \
	  echo "firefox: until then the Firefox test is skipped (under CI=true it fails)" >&2; \
	else \
	  echo "installing headless Firefox for the console's Firefox test: Debian's $(FIREFOX_PACKAGES) with apt-get (about 80 MB to download)" && \
	  DEBIAN_FRONTEND=noninteractive $(PROGRESS) "firefox: apt-get update" -- apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $(PROGRESS) "firefox: apt-get install" -- apt-get install -y -q --no-install-recommends $(FIREFOX_PACKAGES) && \
	  echo "firefox: installed Debian's firefox-esr $$(dpkg-query -W -f '$${Version}' firefox-esr) at $@"; \
	fi

.PHONY: firefox
firefox: $(FIREFOX) ## install headless Firefox for the console's Firefox test (Debian's firefox-esr, with apt-get, as root)

# The SPECIMEN certificate's reader test (shared/specimen): pdftotext from
# Debian's poppler-utils, installed as Chromium is (root installs, not root
# prints the command; CI=true fails without it), with no recommended
# packages. PDFTOTEXT (also read by shared/specimen's test) may name another
# pdftotext binary.
PDFTOTEXT         ?= /usr/bin/pdftotext
POPPLER_PACKAGES  := poppler-utils

$(PDFTOTEXT):
	@if [ "$(PDFTOTEXT)" != /usr/bin/pdftotext ]; then \
	  echo "poppler: PDFTOTEXT=$(PDFTOTEXT) does not exist: name a pdftotext binary, or unset PDFTOTEXT to install Debian's poppler-utils" >&2; exit 1; fi
	@if [ "$$(id -u)" != 0 ]; then \
	  echo "poppler: /usr/bin/pdftotext is missing and installing it needs root: run" >&2; \
	  echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends $(POPPLER_PACKAGES)" >&2; \
	  echo "(or set PDFTOTEXT to a pdftotext binary you have)" >&2; \
	  if [ "$$CI" = true ]; then exit 1; fi; \
	  echo "poppler: until then the SPECIMEN certificate's reader test is skipped (under CI=true it fails)" >&2; \
	else \
	  echo "installing pdftotext for the SPECIMEN certificate's reader test: Debian's $(POPPLER_PACKAGES) with apt-get (about 5 MB to download)" && \
	  DEBIAN_FRONTEND=noninteractive $(PROGRESS) "poppler: apt-get update" -- apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $(PROGRESS) "poppler: apt-get install" -- apt-get install -y -q --no-install-recommends $(POPPLER_PACKAGES) && \
	  echo "poppler: installed Debian's poppler-utils $$(dpkg-query -W -f '$${Version}' poppler-utils) at $@"; \
	fi

.PHONY: poppler
poppler: $(PDFTOTEXT) ## install pdftotext for the SPECIMEN certificate's reader test (Debian's poppler-utils, with apt-get, as root)

# The package count is the module's own `go list -deps`, run in the module
# cache after `go mod download` (outside this module, whose go.mod it must
# not touch); without it the count has no total.
$(VERSITYGW):
	@echo "installing the local S3 server: versitygw $(VERSITYGW_VERSION), built from source (with an empty Go cache: 2 to 5.5 min measured on 2 shared cores)"
	@dir=$$(cd "$${TMPDIR:-/tmp}" && $(GO) mod download -json github.com/versity/versitygw@$(VERSITYGW_VERSION) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$$/\1/p'); \
	  total=$$(cd "$$dir" 2>/dev/null && CGO_ENABLED=0 $(GO) list -deps ./cmd/versitygw 2>/dev/null | wc -l); \
	  GOBIN=$(abspath .build/tools) CGO_ENABLED=0 $(PROGRESS) -hide $${total:+-n $$total} "building versitygw" -- \
	    $(GO) install -trimpath -v github.com/versity/versitygw/cmd/versitygw@$(VERSITYGW_VERSION)

versitygw: $(VERSITYGW) ## install the local S3 server (Versity's S3 gateway, pinned)

# The linters of make vet, pinned, built from the Go module proxy with this
# machine's Go (both need go 1.26.0 or later) into a directory per version
# under .build/tools, so that changing a version here builds the new one.
# staticcheck v0.8.2 is release 2026.2.2; deadcode is golang.org/x/tools's.
STATICCHECK_VERSION := v0.8.2
DEADCODE_VERSION := v0.52.0
STATICCHECK     := .build/tools/staticcheck-$(STATICCHECK_VERSION)/staticcheck
DEADCODE        := .build/tools/deadcode-$(DEADCODE_VERSION)/deadcode

# go-tool builds command $(2) of module $(1) at version $(3) into the
# target's directory, counting its packages against the command's own
# `go list -deps`, run in the module cache (as versitygw's build does).
define go-tool
	@echo "installing $(notdir $(2)) $(3) ($(1)), built from source"
	@dir=$$(cd "$${TMPDIR:-/tmp}" && $(GO) mod download -json $(1)@$(3) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$$/\1/p'); \
	  total=$$(cd "$$dir" 2>/dev/null && $(GO) list -deps ./$(2) 2>/dev/null | wc -l); \
	  GOBIN=$(abspath $(dir $@)) $(PROGRESS) -hide $${total:+-n $$total} "building $(notdir $(2))" -- \
	    $(GO) install -trimpath -v $(1)/$(2)@$(3)
endef

$(STATICCHECK):
	$(call go-tool,honnef.co/go/tools,cmd/staticcheck,$(STATICCHECK_VERSION))

$(DEADCODE):
	$(call go-tool,golang.org/x/tools,cmd/deadcode,$(DEADCODE_VERSION))

.PHONY: linters
linters: $(STATICCHECK) $(DEADCODE) ## install staticcheck and deadcode (pinned) into .build/tools

# cfn-lint (Python: pip install cfn-lint) is optional: a machine with only Go
# and Node skips it with a note, and CI passes there. go vet compiles every
# package and its dependencies first (minutes with an empty Go cache): -v
# lists them, which cmd/progress/progress counts. deadcode -test lists the
# functions no program or test reaches; it exits 0 either way, so any line
# it prints fails the step.
vet: $(STATICCHECK) $(DEADCODE) ## gofmt, go vet, staticcheck, deadcode -test, and cfn-lint on template.yaml when cfn-lint is installed
	@echo "vet: gofmt -l"
	@out=$$(gofmt -l $$(find . -name '*.go' -not -path './cmd/local/dynalite/*')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	@echo "vet: go vet ./... (with an empty Go cache it compiles every package first: minutes)"
	@$(PROGRESS) -hide -n $$($(GO) list -deps -test ./... | wc -l) "vet: go vet ./..." -- $(GO) vet -v ./...
	@echo "vet: staticcheck ./... ($(STATICCHECK_VERSION))"
	@$(PROGRESS) "vet: staticcheck" -- $(STATICCHECK) ./...
	@echo "vet: deadcode -test ./... ($(DEADCODE_VERSION)): no function unreachable from a program or a test"
	@$(PROGRESS) "vet: deadcode" -- sh -c 'out=$$($(DEADCODE) -test ./...) || exit 1; \
	  if [ -n "$$out" ]; then echo "deadcode: unreachable functions:"; echo "$$out"; exit 1; fi'
	@if command -v cfn-lint >/dev/null 2>&1; then \
	  echo "vet: cfn-lint template.yaml"; cfn-lint template.yaml; \
	else \
	  echo "vet: cfn-lint not on PATH: template.yaml not linted (pip install cfn-lint)"; \
	fi

# cmd/local's tests run last and alone: they start the whole stack and send
# it 200 concurrent creates, which measure the stack, not whatever other
# test package shares the machine's cores at that moment. Each phase says
# what it runs, how far it is and how long it took.
TEST_PACKAGES    = $$($(GO) list ./... | grep -v '/cmd/local$$')

test: $(DYNALITE) $(VERSITYGW) $(STRAPICLIENT) $(COGNITO) $(AXE) $(CHROMIUM) $(PUPPETEER) $(FIREFOX) $(PDFTOTEXT) ## run every test against a local DynamoDB (dynalite), S3 (versitygw) and Cognito (cognito-local), and the browser tests in headless Chromium and Firefox
	@echo "test: 1/3 vet: gofmt, go vet, staticcheck, deadcode, cfn-lint"
	@$(MAKE) --no-print-directory vet
	@echo "test: 2/3 the package tests: go test -race of $$($(GO) list ./... | grep -vc '/cmd/local$$') packages, all but cmd/local"
	@$(PROGRESS) -n $$($(GO) list ./... | grep -vc '/cmd/local$$') "test: package tests" -- $(GO) test -race -count=1 $(TEST_PACKAGES)
	@echo "test: 3/3 cmd/local's stack tests: go test -race ./cmd/local (they start the whole stack)"
	@$(PROGRESS) -n 1 "test: cmd/local" -- $(GO) test -race -count=1 ./cmd/local
	@echo "test: passed, $$(( $$(date +%s) - $(MAKE_STARTED) ))s in all"

# make local and make local-db build cmd/local, then run it: `go run` ends
# with status 1 whenever it is interrupted, whatever its program does, so
# Ctrl-C, the way to stop the stack, ended in "make: *** ... Error 1". The
# binary stops everything it started on Ctrl-C and exits 0; make, sent the
# same Ctrl-C, then ends quietly.
LOCAL_BIN       ?= .build/local

# cmd/local is built with the functions' CGO_ENABLED=0 and -trimpath (as
# versitygw is), so that their builds find the standard library and the AWS
# SDK already compiled: measured with an empty Go cache, the first function
# then builds in 4 s instead of 93, and the second in 2 s instead of 33.
# cmd/local prints its ready line counted from MAKE_STARTED: the whole wait.
# The variable before the command makes make run it through sh, which exec
# replaces by the binary: an sh waiting for it would end by Ctrl-C's SIGINT
# after the binary's exit 0, which make reports as an error.
LOCAL_BUILD     = CGO_ENABLED=0 $(PROGRESS) -hide -n $$(CGO_ENABLED=0 $(GO) list -deps ./cmd/local | wc -l) "local: building cmd/local" -- \
	$(GO) build -trimpath -v -o $(LOCAL_BIN) ./cmd/local

local: $(DYNALITE) $(VERSITYGW) $(COGNITO) ## run the API on http://127.0.0.1:3000 with a local DynamoDB, S3 and Cognito
	@echo "local: building cmd/local (with an empty Go cache: 33 s after versitygw's build, about 2.5 min alone, on 2 shared cores)"
	@$(LOCAL_BUILD)
	@LOCAL_STARTED_AT=$(MAKE_STARTED) exec $(LOCAL_BIN)

# The deployed stack's daily commands (README, "Deploy with SAM"). STACK and
# REGION default to samconfig.toml's stack_name and region. Each needs the
# SAM CLI and AWS credentials; without sam on PATH each says so and fails.
SAM             ?= sam
SAMCONFIG_STACK := $(shell sed -n 's/^stack_name *= *"\(.*\)"/\1/p' samconfig.toml)
STACK           := $(or $(STACK),$(SAMCONFIG_STACK))
REGION          := $(or $(REGION),$(shell awk -F'"' '/^\[/ { section = $$0 } section == "[default.deploy.parameters]" && /^region *=/ { print $$2 }' samconfig.toml))
# The tables and buckets `make destroy DELETE_DATA=...` finds before the
# stack is deleted, and deletes after.
# (built, not go run: go run turns the command's exit status 3 into 1).
TEARDOWN        := .build/teardown/teardown
TEARDOWN_FILE   := .build/teardown/$(STACK).json

.PHONY: sam-cli logs sync destroy
sam-cli:
	@command -v $(SAM) >/dev/null 2>&1 || { echo "the SAM CLI ($(SAM)) is not on PATH: install it (https://docs.aws.amazon.com/serverless-application-model/latest/developerguide/install-sam-cli.html), with AWS credentials, to deploy" >&2; exit 1; }

# sam build's cache (samconfig: cached = true) does not know TRACING: a
# build of the other setting than the last one is made afresh (--no-cached).
deploy: sam-cli ## build and deploy the stack with SAM (STACK=, TRACING=on for X-Ray)
	@mkdir -p .aws-sam
	@cached=; [ "$$(cat .aws-sam/tracing 2>/dev/null)" = "$(TRACING)" ] || cached=--no-cached; \
	  echo "TRACING=$(TRACING) $(SAM) build $$cached"; TRACING=$(TRACING) $(SAM) build $$cached
	@echo $(TRACING) > .aws-sam/tracing
	$(SAM) deploy --stack-name $(STACK) --region $(REGION) --parameter-overrides Tracing=$(TRACING_MODE)

# Each function logs to /aws/lambda/<stack>/<LogicalId> (its LoggingConfig),
# the API's access log to /aws/apigateway/<stack>/access (FN=api).
logs: sam-cli ## follow a function's log: make logs FN=<LogicalId>|api [STACK=]
	@case " $(FUNCTIONS) api " in *" $(FN) "*) [ -n "$(FN)" ] ;; *) false ;; esac || \
	  { echo "logs: FN=<LogicalId> of a function ($(FUNCTIONS)) or FN=api (the access log)" >&2; exit 2; }
	$(SAM) logs --region $(REGION) --tail --cw-log-group $(if $(filter api,$(FN)),/aws/apigateway/$(STACK)/access,/aws/lambda/$(STACK)/$(FN))

# sam sync updates a function's code and configuration behind
# CloudFormation's back (drift), which no production stack may have: it runs
# only against a development stack, named STACK=<name>-dev.
sync: sam-cli ## iterate on a dev stack: sam sync --watch, STACK=<name>-dev only
	@case "$(STACK)" in *-dev) ;; *) echo "sync: refused: STACK=$(STACK) is not a development stack; sam sync leaves a stack drifted from its template, so it runs only on one named <name>-dev (make sync STACK=$$USER-dev)" >&2; exit 2 ;; esac
	TRACING=$(TRACING) $(SAM) sync --watch --stack-name $(STACK) --region $(REGION) --parameter-overrides Tracing=$(TRACING_MODE)

# make destroy deletes the stack; its tables and files bucket stay (Retain).
# DELETE_DATA=<the stack's name again> deletes them too: found before the
# stack goes (cmd/teardown find, into TEARDOWN_FILE, which make clean
# keeps), deleted once it is gone (cmd/teardown delete). A deletion that
# failed halfway is taken up again by the same command: find then says the
# stack is gone already (status 3) and the file names what is left.
destroy: sam-cli ## delete the stack (STACK=); DELETE_DATA=<stack name again> also deletes its tables and bucket
	@if [ -n "$(DELETE_DATA)" ] && [ "$(DELETE_DATA)" != "$(STACK)" ]; then \
	  echo "destroy: refused: DELETE_DATA=$(DELETE_DATA) is not the stack's name ($(STACK)): type it again to delete its tables and bucket" >&2; exit 2; fi
ifneq ($(DELETE_DATA),)
	$(GO) build -o $(TEARDOWN) ./cmd/teardown
	$(TEARDOWN) find --stack $(STACK) --region $(REGION) --out $(TEARDOWN_FILE); rc=$$?; \
	  if [ $$rc = 0 ]; then $(SAM) delete --stack-name $(STACK) --region $(REGION) --no-prompts; elif [ $$rc != 3 ]; then exit $$rc; fi
	$(TEARDOWN) delete --from $(TEARDOWN_FILE) --region $(REGION) --confirm $(DELETE_DATA)
else
	$(SAM) delete --stack-name $(STACK) --region $(REGION) --no-prompts
endif

clean: ## remove build output
	rm -rf $(filter-out .build/tools .build/teardown,$(wildcard .build/*)) .aws-sam

local-db: $(DYNALITE) $(VERSITYGW) ## run only the local DynamoDB on 127.0.0.1:8000 (tables, catalogue, dev token), for sam local
	@echo "local: building cmd/local (with an empty Go cache: 33 s after versitygw's build, about 2.5 min alone, on 2 shared cores)"
	@$(LOCAL_BUILD)
	@LOCAL_STARTED_AT=$(MAKE_STARTED) exec $(LOCAL_BIN) -db-only

# cmd/bench is built as cmd/local is (CGO_ENABLED=0, -trimpath), which are
# also the flags of the functions' host builds and of the go test -bench it
# runs: the standard library and the AWS SDK are compiled once for all of
# them, not once more for a `go run` with cgo.
BENCH_BIN       ?= .build/bench

.PHONY: bench
bench: $(DYNALITE) $(VERSITYGW) ## measure cold start, size, warm cost, DynamoDB units and cost per million requests
	@CGO_ENABLED=0 $(PROGRESS) -hide -n $$(CGO_ENABLED=0 $(GO) list -deps ./cmd/bench | wc -l) "bench: building cmd/bench" -- \
	  $(GO) build -trimpath -v -o $(BENCH_BIN) ./cmd/bench
	$(BENCH_BIN) $(BENCH_FLAGS)
