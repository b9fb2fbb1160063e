# boxxkite-netguard
#
#   make            build build/boxxkite-netguard
#   make test       everything: unit, manifests, netns e2e, containerd e2e (root),
#                   ASan/UBSan, valgrind, lint, short fuzzing
#   make unit / make e2e   the fast loops
#   make demo       the main job on a built-in example, in namespaces (root)
#   make asan       the unit tests and the netns e2e under ASan + UBSan
#   make valgrind   every verb and error path under memcheck
#   make mutants    mutation proof: broken plugins must fail named e2e tests
#   make bench      ADD/DEL vs the kernel floor, nft -f and the firewall plugin; scaling;
#                   per-packet cost; concurrency; memory; the node agent's latency per
#                   answer, answers/s, RSS, 10 M parser fuzz runs (root)
#   make soak       the agent soak at full size: 200 learning pods, 1000 ADD/DEL cycles,
#                   abusers, drift with --repair, restarts (root; make e2e runs it short)
#   make lint       clang-format, clang-tidy, cppcheck, include-what-you-use, shellcheck
#                   (configs checked in)
#   make fuzz       every libFuzzer target for FUZZ_SECONDS each
#   make fuzz-deep  every libFuzzer target for FUZZ_RUNS (10 M) executions (not in CI; hours)
#   make static     a static binary for the DaemonSet image; make image (Docker);
#                   make static-check (in make test) checks it
#   make e2e-k8s    a single-node Kubernetes built from source, deploy/ applied for real,
#                   the seed's checks (root; make k8s-build first: ~9 min once)
#   make install    install into $(DESTDIR)$(PREFIX) (default /opt/cni/bin)
#   make clean

PREFIX ?= /opt/cni/bin
CC ?= cc
PKGS := jansson libnftnl libmnl libcurl

OPT ?= -O2 -g
WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wformat=2 -Wno-format-nonliteral
BASE_CFLAGS := -std=gnu11 -D_GNU_SOURCE $(WARN) -D_FORTIFY_SOURCE=2 -fstack-protector-strong -fPIE
CFLAGS ?=
override CFLAGS := $(BASE_CFLAGS) $(OPT) $(shell pkg-config --cflags $(PKGS) 2>/dev/null) $(CFLAGS)
LDFLAGS ?=
override LDFLAGS := -pie -Wl,-z,relro,-z,now $(LDFLAGS)
LDLIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lresolv

# V=1 shows the full compiler lines.
V ?= 0
Q := $(if $(filter 1,$(V)),,@)

BUILD ?= build
BIN := $(BUILD)/boxxkite-netguard
# Every layer's folder (README "Layout"); main.c alone at the top.
LAYERS := base spec policy nft kernel state cni node install agent
LIB_SRC := $(foreach l,$(LAYERS),$(wildcard plugin/$(l)/*.c))
LIB_OBJ := $(patsubst plugin/%.c,$(BUILD)/obj/%.o,$(LIB_SRC))
LIB := $(BUILD)/libnetguard.a

# Unit tests mirror plugin/: test/unit/<layer>/test_*.c, one binary each.
TEST_SRC := $(wildcard test/unit/*/test_*.c)
TEST_BIN := $(patsubst test/unit/%.c,$(BUILD)/test/%,$(TEST_SRC))
# -MMD -MP: each object depends on exactly the headers it includes.
DEPFLAGS = -MMD -MP
TOOLS := $(BUILD)/nprobe $(BUILD)/xsktx $(BUILD)/ngwiden $(BUILD)/sockhold $(BUILD)/dnsload $(BUILD)/gaimusl $(BUILD)/gaigo
# e2e/dnsquery.sh's resolver clients: musl's (musl-tools) and Go's (any Go
# from 1.19; stdlib only, built offline: GOFLAGS=-mod=mod, GOPROXY=off).
MUSL_CC ?= musl-gcc
GO ?= $(shell command -v go || echo /usr/local/go/bin/go)

.PHONY: soak
# The agent under everything at once, full size (issue 23 item 5): 200 learning
# pods, 1000 ADD/DEL cycles, the abusers, drift with --repair, two restarts.
# make e2e (so make test) runs e2e/soak.sh at its short default size.
.DEFAULT_GOAL := all

soak: $(BIN) $(TOOLS)
	@NG_BIN=$(abspath $(BIN)) NPROBE=$(abspath $(BUILD)/nprobe) DNSLOAD=$(abspath $(BUILD)/dnsload) \
		SOAK_PODS=$${SOAK_PODS:-200} SOAK_CYCLES=$${SOAK_CYCLES:-1000} SOAK_QUIET_S=$${SOAK_QUIET_S:-40} \
		SOAK_ABUSE_S=$${SOAK_ABUSE_S:-40} SOAK_AFTER_S=$${SOAK_AFTER_S:-20} scripts/run-root.sh bash e2e/soak.sh

.PHONY: all test test-build unit e2e e2e-cri demo deps asan valgrind fuzz fuzz-deep bench bench-handoff mutants install clean static static-check image manifests e2e-install lint
all: $(BIN)

$(BUILD)/obj/%.o: plugin/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -Iplugin $(DEPFLAGS) -c -o $@ $<

# Made afresh: `ar r` into an old archive would keep the objects of
# sources that were deleted or moved.
$(LIB): $(LIB_OBJ)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# The source revision in build_info (agent/procmetrics.c alone; a tree
# without git says "unknown").
REVISION := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
$(BUILD)/obj/agent/procmetrics.o: CFLAGS += -DNG_REVISION='"$(REVISION)"'

$(BIN): $(BUILD)/obj/main.o $(LIB)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/test/%: test/unit/%.c $(LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  TEST    $@")
	$(Q)$(CC) $(CFLAGS) -Iplugin -Itest/unit $(DEPFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS) -lcmocka

$(BUILD)/nprobe: test/tools/nprobe.c | $(BUILD)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $<

# A process with NET_ADMIN rewriting the tables with libnftnl (e2e/hardening.sh).
$(BUILD)/ngwiden: test/tools/ngwiden.c $(LIB) | $(BUILD)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CFLAGS) -Iplugin $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

$(BUILD)/xsktx: test/tools/xsktx.c | $(BUILD)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $<

# Keeps a packet, raw or AF_XDP socket after dropping every privilege (e2e/verify.sh).
$(BUILD)/sockhold: test/tools/sockhold.c | $(BUILD)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $<

# Many pods' resolvers and applications in one process, a thread per pod (e2e/soak.sh).
$(BUILD)/dnsload: test/tools/dnsload.c | $(BUILD)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -pthread -o $@ $<

$(BUILD)/gaimusl: test/tools/gaimusl.c | $(BUILD)
	@$(if $(Q),echo "  MUSL    $@")
	$(Q)$(MUSL_CC) -static -O2 -Wall -Wextra -Werror -o $@ $<

$(BUILD)/gaigo: test/tools/gaigo/main.go test/tools/gaigo/go.mod | $(BUILD)
	@$(if $(Q),echo "  GO      $@")
	$(Q)cd test/tools/gaigo && CGO_ENABLED=0 GOPROXY=off GOTOOLCHAIN=local GOFLAGS=-mod=mod \
		GOCACHE=$(abspath $(BUILD))/gocache $(GO) build -o $(abspath $@) .

$(BUILD):
	mkdir -p $@

# Installs missing Debian packages (root) or says which are missing.
deps:
	@scripts/deps.sh --e2e --cri

unit: $(TEST_BIN)
	@scripts/run-unit.sh $(TEST_BIN)

e2e: $(BIN) $(TOOLS)
	@NG_BIN=$(abspath $(BIN)) NPROBE=$(abspath $(BUILD)/nprobe) XSKTX=$(abspath $(BUILD)/xsktx) \
		GAIMUSL=$(abspath $(BUILD)/gaimusl) GAIGO=$(abspath $(BUILD)/gaigo) scripts/run-e2e.sh

# containerd 1.6 CRI end-to-end test (root): the runtime kind uses, as the client.
e2e-cri: $(BIN)
	@scripts/run-root.sh e2e/cri/run.sh

# The whole suite, as CI runs it: unit, manifests, netns e2e, containerd CRI
# e2e, the Kubernetes e2e, the mutation proof, the hardening checks
# (ASan/UBSan, valgrind, lint, short fuzzing). The root-only parts say
# SKIPPED without root. Everything the lanes share is built first; then
# four lanes run side by side (scripts/stages.sh: most stages wait, they
# do not compute; serial, the suite took about 50 minutes on 2 cores, in
# lanes about the time of the longest, the mutation proof).
test:
	@scripts/deps.sh --e2e --cri --manifests --lint --fuzz --valgrind
	@MAKE="$(MAKE)" scripts/stages.sh test-build unit \
		--lane e2e \
		--lane mutants \
		--lane e2e-cri e2e-k8s-cached asan valgrind \
		--lane manifests static-check lint fuzz:FUZZ_SECONDS=$(CI_FUZZ_SECONDS)


CI_FUZZ_SECONDS ?= 10

# deploy/: every object against the Kubernetes models, the NetworkPolicy
# rules, the DaemonSets, every kustomization and overlay rendered with
# kubectl kustomize, the ConfigMap's entry through the plugin's own
# validation, the sandbox example under Pod Security restricted.
manifests: $(BIN)
	@scripts/deps.sh --manifests
	@test/manifests/check.sh $(BIN)

# The installer against a temporary conf dir (also run by `make e2e`; no root needed).
e2e-install: $(BIN)
	@e2e/install.sh

VERSION := $(shell sed -n 's/.*NG_VERSION "\(.*\)"/\1/p' plugin/base/version.h)
IMAGE ?= boxxkite-netguard:$(VERSION)
STATIC_BIN := $(BUILD)/static/boxxkite-netguard

# A fully static binary for the DaemonSet image: the installer copies it onto
# nodes whose libc and libraries are unknown. Debian 12 has no libmnl.a:
# deploy/libmnl-static.sh provides one; its libcurl.a needs archives Debian
# does not ship (Kerberos, LDAP, ...): deploy/libcurl-static.sh builds
# Debian's curl source for HTTPS over OpenSSL only, linked with Debian's
# libssl.a and libcrypto.a.
STATIC_PKGS := $(filter-out libcurl,$(PKGS))
static: $(STATIC_BIN)

$(BUILD)/static:
	mkdir -p $@

$(BUILD)/static/libmnl.a: | $(BUILD)/static
	@scripts/deps.sh --static
	deploy/libmnl-static.sh $@

$(BUILD)/static/libcurl.a: | $(BUILD)/static
	@scripts/deps.sh --static
	deploy/libcurl-static.sh $@

$(STATIC_BIN): $(BUILD)/obj/main.o $(LIB) $(BUILD)/static/libmnl.a $(BUILD)/static/libcurl.a
	@$(if $(Q),echo "  LINK    $@ (static)")
	$(Q)$(CC) $(CFLAGS) -static-pie -Wl,-z,relro,-z,now -o $@ $(BUILD)/obj/main.o $(LIB) \
		-L$(BUILD)/static $(shell pkg-config --static --libs $(STATIC_PKGS)) -lcurl \
		$(shell pkg-config --static --libs openssl) -lresolv
	$(Q)$@ version >/dev/null

# make test's check of the static build: it links, is static, and runs the
# installer's dry run with no library of the machine (an empty environment).
static-check: $(STATIC_BIN)
	@scripts/static-check.sh $(STATIC_BIN)

# What more than one lane of make test uses (scripts/stages.sh), built once
# before they start: two makes must never build the same file at once.
test-build: $(BIN) $(TOOLS) $(TEST_BIN) $(STATIC_BIN)

# Mutation proof (root, ~3 min): each small source mutation of the plugin
# (metadata rule skipped, envelope always passes, DEL does nothing...) must
# make named e2e tests fail, and the unmutated plugin must pass them.
mutants: $(BIN) $(TOOLS)
	@scripts/run-root.sh scripts/mutants.sh

# Benchmarks (root, ~3 min): ADD/DEL vs the kernel floor, nft -f and the
# firewall plugin, allowlist scaling, per-packet cost, 100 concurrent ADDs,
# memory, a profile of ADD. Writes test/bench/results-latest.md; run
# `make static` first to include the static build.
bench: $(BIN) $(TOOLS)
	@scripts/deps.sh --e2e --bench
	@test/bench/run.sh
	@NG_BIN=$(abspath $(BIN)) NPROBE=$(abspath $(BUILD)/nprobe) test/bench/agent.sh
	@NG_BIN=$(abspath $(BIN)) NPROBE=$(abspath $(BUILD)/nprobe) test/bench/observer.sh
	@NG_BIN=$(abspath $(BIN)) NPROBE=$(abspath $(BUILD)/nprobe) test/bench/dnsquery.sh
	@NG_BIN=$(abspath $(BIN)) NPROBE=$(abspath $(BUILD)/nprobe) test/bench/dataplane.sh
	@NG_BIN=$(abspath $(BIN)) NPROBE=$(abspath $(BUILD)/nprobe) test/bench/observe.sh
	@NG_BIN=$(abspath $(BIN)) NPROBE=$(abspath $(BUILD)/nprobe) test/bench/livepolicy.sh

# The operating hand-off's cost per invocation (decision record + invocation
# line), with stateDir on tmpfs and absent: issue 15's 0.3 ms budget on ADD;
# then the agent's memory per watched pod (root).
bench-handoff: $(LIB) $(BIN)
	@mkdir -p $(BUILD)/bench
	$(Q)$(CC) $(CFLAGS) -Iplugin $(LDFLAGS) -o $(BUILD)/bench/handoff test/bench/handoff.c $(LIB) $(LDLIBS)
	@$(BUILD)/bench/handoff
	@NG_BIN=$(abspath $(BIN)) test/bench/opsrss.sh

# Formatting (.clang-format), clang-tidy (.clang-tidy), cppcheck, unused
# includes (scripts/iwyu.sh), shellcheck.
lint:
	@scripts/deps.sh --lint
	@scripts/lint.sh

# The DaemonSet image (needs Docker): deploy/Dockerfile runs `make static` in a Debian 12 builder.
image:
	docker build -f deploy/Dockerfile -t $(IMAGE) .

demo:
	@scripts/deps.sh --e2e
	@$(MAKE) --no-print-directory $(BIN) $(TOOLS)
	@e2e/demo.sh

# The unit tests and the netns e2e suite with the plugin built under
# AddressSanitizer + UndefinedBehaviorSanitizer (LeakSanitizer included).
ASAN_MAKE = $(MAKE) --no-print-directory BUILD=build/asan \
	OPT="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	LDFLAGS="-fsanitize=address,undefined"
# The e2e pass under the sanitizers runs quick (E2E_QUICK: agent.sh skips its
# 42 s lifetime soak and adds 20 pods, not 100): it looks for memory errors,
# which the full pass before it has already shown are not about scale.
# e2e/concurrency.sh adds 100 pods at once there (issue 23: no ADD fails for
# another pod's transaction, under the sanitizers' slowness).
asan:
	@$(ASAN_MAKE) unit
	@E2E_QUICK=1 NG_CONC_PODS=100 $(ASAN_MAKE) e2e

# Every verb and error path under valgrind memcheck: 0 errors, 0 bytes
# definitely lost.
valgrind: $(BIN)
	@scripts/deps.sh --valgrind
	@NG_BIN=$(BIN) scripts/valgrind.sh

# libFuzzer targets (clang), one per parser; FUZZ_SECONDS each.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 20
FUZZ_CFLAGS := -std=gnu11 -D_GNU_SOURCE $(WARN) -g -O1 -fno-omit-frame-pointer \
	-fsanitize=address,undefined -fno-sanitize-recover=undefined \
	$(shell pkg-config --cflags $(PKGS) 2>/dev/null)
FUZZ_OBJ := $(patsubst plugin/%.c,$(BUILD)/fuzz/obj/%.o,$(LIB_SRC))
FUZZ_BIN := $(patsubst test/fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard test/fuzz/fuzz_*.c))

$(BUILD)/fuzz/obj/%.o: plugin/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  FUZZCC  $<")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -Iplugin $(DEPFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(BUILD)/fuzz/fuzz_%: test/fuzz/fuzz_%.c $(FUZZ_OBJ)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -Iplugin -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJ) $(LDLIBS)

.SECONDARY: $(FUZZ_OBJ)

fuzz: $(FUZZ_BIN)
	@scripts/run-fuzz.sh $(FUZZ_SECONDS) $(FUZZ_BIN)

# Fuzzing in depth (not in CI): each target for FUZZ_RUNS executions, FUZZ_JOBS
# at a time; the table goes to test/bench/fuzz-deep-latest.md, logs and any
# crash input to $(BUILD)/fuzz-deep/.
FUZZ_RUNS ?= 10000000
FUZZ_JOBS ?= 1
FUZZ_DEEP_OUT ?= test/bench/fuzz-deep-latest.md
fuzz-deep: $(FUZZ_BIN)
	@mkdir -p $(BUILD)/fuzz-deep
	@RUNS=$(FUZZ_RUNS) JOBS=$(FUZZ_JOBS) KEEP=$(BUILD)/fuzz-deep scripts/run-fuzz.sh 0 $(FUZZ_BIN) \
		>$(BUILD)/fuzz-deep/table.txt; rc=$$?; \
	{ echo "# make fuzz-deep"; echo; \
	  echo "$$(date -u +%FT%TZ), commit $$(git rev-parse --short HEAD 2>/dev/null), $$(nproc) cores (shared), FUZZ_JOBS=$(FUZZ_JOBS), -runs=$(FUZZ_RUNS)"; \
	  echo; echo '```'; cat $(BUILD)/fuzz-deep/table.txt; echo '```'; } >$(FUZZ_DEEP_OUT); \
	cat $(FUZZ_DEEP_OUT); exit $$rc

install: $(BIN)
	install -d $(DESTDIR)$(PREFIX)
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/boxxkite-netguard

-include $(LIB_OBJ:.o=.d) $(BUILD)/obj/main.d $(TEST_BIN:=.d) $(FUZZ_OBJ:.o=.d)

clean:
	rm -rf $(BUILD) build

# ---- A single-node Kubernetes built from source (e2e/k8s/, root) -----------
# k8s-build: the pinned release's binaries (e2e/k8s/module/go.mod), built
# once through the Go module proxy and cached by version under
# /var/cache/boxxkite-netguard/k8s/ with the pinned Helm (about 17 min of CPU
# cold, 8-9 min on 2 idle cores; 20 s with a warm Go cache; instant once
# built). e2e-k8s-smoke: the cluster up inside network namespaces, the checks
# every later test relies on, down again. e2e-k8s: the smoke, then deploy/
# applied for real and the seed's checks (e2e/k8s/deploy.sh), one summary.
# e2e-k8s-cached (a stage of make test): e2e-k8s when the binaries are
# cached, else a plain SKIPPED line (.ci/run builds them before make test:
# a cold build would take make test well past 30 minutes).
.PHONY: k8s-build e2e-k8s e2e-k8s-smoke e2e-k8s-cached lint-k8s
k8s-build:
	@scripts/run-root.sh scripts/k8s-deps.sh
	@scripts/run-root.sh e2e/k8s/build.sh >/dev/null

e2e-k8s-smoke: k8s-build
	@scripts/run-root.sh e2e/k8s/smoke.sh

e2e-k8s: k8s-build $(STATIC_BIN)
	@NG_STATIC=$(abspath $(STATIC_BIN)) scripts/run-root.sh e2e/k8s/run.sh

e2e-k8s-cached: $(STATIC_BIN)
	@if [ "$$(id -u)" -ne 0 ]; then echo "e2e-k8s: SKIPPED (needs root: run sudo make test)"; \
	elif e2e/k8s/build.sh --check >/dev/null 2>&1; then \
		scripts/k8s-deps.sh && NG_STATIC=$(abspath $(STATIC_BIN)) e2e/k8s/run.sh; \
	else echo "e2e-k8s: SKIPPED (the Kubernetes binaries are not built: sudo make k8s-build, once; .ci/run does)"; fi

lint-k8s:
	@shellcheck -x e2e/k8s/*.sh scripts/k8s-*.sh && echo "lint-k8s: clean"
