# SPDX-License-Identifier: MIT
# resolute - make targets.  `make help` lists them.

PREFIX    ?= /usr/local
DESTDIR   ?=
LIBDIR    ?= $(PREFIX)/lib/resolute
BINDIR    ?= $(PREFIX)/bin
DATADIR   ?= $(PREFIX)/share/resolute
MANDIR    ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc

CC        ?= cc
WERROR    ?= -Werror
OPT       ?= -O2 -g
SAN       ?=
VERSION   := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

WARN  = -Wall -Wextra $(WERROR) -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wformat=2 -Wvla -Wimplicit-fallthrough
CPPFLAGS += -D_GNU_SOURCE -DRS_VERSION='"$(VERSION)"'
CFLAGS   += -std=c11 $(OPT) $(WARN) -fPIC -fvisibility=hidden \
	-fno-strict-aliasing $(SAN)
LDLIBS_LIB = -ldl -lpthread -lyaml
LDLIBS_CLI = -lyaml -ldl -lpthread -lm
CMOCKA_LIBS = -lcmocka -lm

B ?= build
Q = $(if $(V),,@)

# The tree says where code runs.  src/core/ is pure: the policy, backoff,
# budgets, shared memory, clock, log, names, stats; the command-line tool and
# the unit tests link it and nothing else.  src/preload/ lives inside other
# programs: the exported names, the real-call table, start-up, the descriptor
# table and the engines.  Each layer is split into sub-layers, one folder
# each (doc/architecture.md names them and their order).  Sources include
# headers by bare name, with one -I per folder; core is compiled with core's
# folders alone, so that it cannot include a preload header; `make lint`
# checks the order of the sub-layers and the symbols too.
DIRS_CORE    := $(sort $(dir $(wildcard src/core/*/*.h src/core/*/*.c)))
DIRS_PRELOAD := $(sort $(dir $(wildcard src/preload/*/*.h src/preload/*/*.c)))
SRC_CORE    := $(sort $(wildcard src/core/*/*.c))
SRC_PRELOAD := $(sort $(wildcard src/preload/*/*.c))
# The HTTP tracker (src/core/http/http.c) is linked with llhttp into one
# object whose llhttp symbols are renamed, see $(B)/obj/core/http/http_llhttp.o
# below.
OBJ_CORE    := $(patsubst src/%.c,$(B)/obj/%.o,$(filter-out src/core/http/http.c,$(SRC_CORE))) \
	$(B)/obj/core/http/http_llhttp.o $(B)/obj/core/policy/default_policy.o
OBJ_PRELOAD := $(patsubst src/%.c,$(B)/obj/%.o,$(SRC_PRELOAD))
OBJ_LIB     := $(OBJ_CORE) $(OBJ_PRELOAD)
# Debian's node-llhttp ships llhttp's C sources; LLHTTP_SRC/LLHTTP_INC point
# elsewhere for another copy of the same version.
LLHTTP_SRC  ?= /usr/share/llhttp
LLHTTP_INC  ?= /usr/share/include/llhttp
INC_CORE    := $(patsubst %/,-I%,$(DIRS_CORE)) -I$(LLHTTP_INC)
INC_PRELOAD := $(patsubst %/,-I%,$(DIRS_CORE) $(DIRS_PRELOAD)) -I$(LLHTTP_INC)

CLI_SRC   := $(sort $(wildcard src/cli/*.c))
CLI_OBJ   := $(patsubst src/%.c,$(B)/obj/%.o,$(CLI_SRC))
UNIT_SRC  := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN  := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC))
# Engine tests (tests/engine/test_*.c) run the preload engines in-process
# against scripted fakes: every preload object except the boundary
# (interpose*.o), the real-call table (real.o) and start-up (init.o,
# runtime.o), which tests/engine/fake_*.c stand in for.  The linker's --wrap redirects the
# engines' clock, getpeername, sleeps and counters to the fakes as well, so no
# production source changes for the tests.  They land in $(B)/tests/ and
# so run with the unit tests.
ENGINE_SRC  := $(sort $(wildcard tests/engine/test_*.c))
ENGINE_BIN  := $(patsubst tests/engine/%.c,$(B)/tests/%,$(ENGINE_SRC))
FAKE_SRC    := $(sort $(filter-out $(ENGINE_SRC),$(wildcard tests/engine/*.c)))
FAKE_OBJ    := $(patsubst tests/engine/%.c,$(B)/obj/engine/%.o,$(FAKE_SRC))
FAKED_OBJ   := $(addprefix $(B)/obj/preload/,entry/interpose.o \
	entry/interpose_exec.o entry/interpose_io.o state/real.o state/init.o \
	state/runtime.o)
ENGINE_OBJ  := $(filter-out $(FAKED_OBJ),$(OBJ_PRELOAD)) $(OBJ_CORE)
ENGINE_WRAP := -Wl,--wrap=rs_clock_now_ms -Wl,--wrap=rs_clock_coarse_ms \
	-Wl,--wrap=getpeername -Wl,--wrap=rs_stats_add \
	-Wl,--wrap=rs_stats_add_pair \
	-Wl,--wrap=clock_nanosleep -Wl,--wrap=rs_clock_later_ts
ITEST_SRC := $(sort $(wildcard tests/integration/*.c))
ITEST_BIN := $(patsubst tests/integration/%.c,$(B)/itests/%,$(ITEST_SRC))

.PHONY: all lib cli tests test test-peer unit integration demo demo-deadline bench install \
	uninstall asan tsan valgrind fuzz format format-check lint clean help \
	deps coverage unit-tests deb build-deps test-deps soak soak-ci

all: lib cli ## build build/libresolute.so and build/resolute

lib: $(B)/libresolute.so
cli: $(B)/resolute

$(B)/obj/core/%.o: src/core/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS) $(INC_CORE) $(CFLAGS) -MMD -MP -c -o $@ $<

$(B)/obj/preload/%.o: src/preload/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS) $(INC_PRELOAD) $(CFLAGS) -MMD -MP -c -o $@ $<

# llhttp (strict mode) as its authors ship it: their code, their warnings,
# so it is built without ours.  The tracker and llhttp become one object in
# which every llhttp symbol is renamed rs_llhttp_*: hidden and not exported
# (libresolute.map) already, the names also cannot meet a host program's own
# llhttp or http_parser in a static link (the CLI, the tests).
LLHTTP_OBJ := $(B)/obj/llhttp/llhttp.o $(B)/obj/llhttp/api.o $(B)/obj/llhttp/http.o

$(B)/obj/llhttp/%.o: $(LLHTTP_SRC)/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) -DLLHTTP_STRICT_MODE=1 -I$(LLHTTP_INC) $(OPT) -fPIC \
		-fvisibility=hidden $(SAN) -w -c -o $@ $<

$(B)/obj/core/http/http_llhttp.o: $(B)/obj/core/http/http.o $(LLHTTP_OBJ)
	@$(if $(Q),echo "  LD -r   $@")
	$(Q)$(CC) -r -nostdlib -o $@.tmp $^
	$(Q)nm -g --defined-only $@.tmp | awk '$$3 ~ /^llhttp/ { print $$3, "rs_" $$3 }' >$@.syms
	$(Q)objcopy --redefine-syms=$@.syms $@.tmp $@
	$(Q)rm -f $@.tmp

# The default policy is compiled in from policy/default.yaml (one source of
# truth); the assembler's .incbin embeds the file byte for byte.
$(B)/obj/core/policy/default_policy.o: src/core/policy/default_policy.S policy/default.yaml
	@mkdir -p $(@D)
	@$(if $(Q),echo "  AS      $<")
	$(Q)$(CC) -c -fPIC -o $@ $<

$(B)/libresolute.so: $(OBJ_LIB) src/preload/entry/libresolute.map
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared $(SAN) $(LDFLAGS) -Wl,--version-script=src/preload/entry/libresolute.map \
		-Wl,-z,now -Wl,-z,relro -Wl,-soname,libresolute.so \
		-o $@ $(OBJ_LIB) $(LDLIBS_LIB)

# The tool is one object per subcommand (src/cli/*.c) over the pure modules.
$(B)/obj/cli/%.o: src/cli/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS) $(INC_CORE) -DRS_LIBDIR='"$(LIBDIR)"' $(CFLAGS) \
		-fvisibility=default -MMD -MP -c -o $@ $<

$(B)/resolute: $(CLI_OBJ) $(OBJ_CORE)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(CLI_OBJ) $(OBJ_CORE) $(LDLIBS_CLI)

$(B)/tests/%: tests/unit/%.c $(OBJ_CORE)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(INC_CORE) -Itests $(CFLAGS) -Wno-missing-prototypes -MMD -MP \
		-o $@ $< $(OBJ_CORE) $(LDLIBS_CLI) $(CMOCKA_LIBS)

$(B)/obj/engine/%.o: tests/engine/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS) $(INC_PRELOAD) -Itests/engine $(CFLAGS) \
		-Wno-missing-prototypes -MMD -MP -c -o $@ $<

$(B)/tests/test_engine_%: tests/engine/test_engine_%.c $(FAKE_OBJ) $(ENGINE_OBJ)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(INC_PRELOAD) -Itests/engine $(CFLAGS) \
		-Wno-missing-prototypes -MMD -MP $(ENGINE_WRAP) -o $@ $< \
		$(FAKE_OBJ) $(ENGINE_OBJ) $(LDLIBS_LIB) $(CMOCKA_LIBS)

# Integration test programs are plain clients: they link nothing of ours and
# get the library through LD_PRELOAD, as any program would.  Built with
# _FORTIFY_SOURCE=2 so that the fortified entry points are exercised.
$(B)/itests/%: tests/integration/%.c tests/integration/peer.h
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) -D_GNU_SOURCE -D_FORTIFY_SOURCE=2 -Itests $(filter-out -fvisibility=hidden,$(CFLAGS)) \
		-Wno-missing-prototypes -MMD -MP -o $@ $< $(CMOCKA_LIBS) -lpthread

tests: $(UNIT_BIN) $(ENGINE_BIN) $(ITEST_BIN)

# Before the first compiler run, what the build will include and compile is
# looked for where the build looks (the same CC, CPPFLAGS and llhttp paths),
# and whatever is missing is named by its Debian package, with the command
# to install it (scripts/build-deps.sh), rather than met as a compiler
# error.  Order-only: the check runs on every make that compiles, and never
# makes anything out of date.
build-deps:
	$(Q)CC="$(CC)" CPPFLAGS="$(CPPFLAGS)" LLHTTP_INC="$(LLHTTP_INC)" \
		LLHTTP_SRC="$(LLHTTP_SRC)" scripts/build-deps.sh
test-deps:
	$(Q)CC="$(CC)" CPPFLAGS="$(CPPFLAGS)" LLHTTP_INC="$(LLHTTP_INC)" \
		LLHTTP_SRC="$(LLHTTP_SRC)" scripts/build-deps.sh test
$(OBJ_LIB) $(CLI_OBJ) $(LLHTTP_OBJ) $(B)/obj/core/http/http.o: | build-deps
$(UNIT_BIN) $(ENGINE_BIN) $(FAKE_OBJ) $(ITEST_BIN): | test-deps

unit-tests: $(UNIT_BIN) $(ENGINE_BIN)

deps: ## install the build and test packages (as root), or say how
	$(Q)scripts/deps.sh

test: deps ## build, then run every test (unit, integration, real programs)
	$(Q)$(MAKE) --no-print-directory all tests
	$(Q)scripts/run-tests.sh

unit: all tests
	$(Q)scripts/run-tests.sh unit

integration: all tests
	$(Q)scripts/run-tests.sh integration

demo: deps ## show curl surviving a flaky server, with and without resolute
	$(Q)$(MAKE) --no-print-directory all $(B)/itests/peer
	$(Q)scripts/demo.sh

demo-deadline: all ## one deadline across three services (SPEC 10), bare vs library
	$(Q)scripts/demo-deadline.sh

BENCH_SRC := $(sort $(wildcard bench/*.c))
BENCH_BIN := $(patsubst bench/%.c,$(B)/bench/%,$(BENCH_SRC))

$(B)/bench/%: bench/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) -D_GNU_SOURCE -O2 -g -Wall -Wextra $(WERROR) -o $@ $< -lpthread \
		$(if $(findstring tls_,$*),-lssl -lcrypto)

bench: all $(BENCH_BIN) $(B)/itests/peer ## benchmarks: figures with and without the library, as ratios
	$(Q)scripts/deps.sh bench || echo "bench: some rows will be skipped"
	$(Q)if [ -x scripts/bench.sh ]; then scripts/bench.sh; fi
	$(Q)scripts/bench-sidecar.sh
	$(Q)scripts/bench-http.sh
	$(Q)if command -v valgrind >/dev/null 2>&1; then B=$(B) scripts/bench-ir.sh; fi

# Line coverage of src/ from the unit and engine tests alone (no preloading,
# no network): an instrumented build of its own, the unit suite, then a
# per-file table and a floor for the engines (scripts/coverage.sh).  Profile
# counters are updated atomically: some unit tests run threads.  The tests
# run one at a time (RS_JOBS=1): they take a second in all, and no two
# processes then merge their counters into the same .gcda file at once.
COV_B := build-cov

coverage: ## per-file line coverage of src/ from the unit and engine tests
	$(Q)rm -rf $(COV_B)/obj/*/*.gcda $(COV_B)/obj/*/*/*.gcda
	$(Q)$(MAKE) --no-print-directory B=$(COV_B) OPT="-O0 -g" SAN="--coverage -fprofile-update=atomic" \
		unit-tests
	$(Q)B=$(COV_B) RS_JOBS=1 scripts/run-tests.sh unit
	$(Q)B=$(COV_B) scripts/coverage.sh

asan: ## the whole test suite under ASan+UBSan
	$(Q)$(MAKE) --no-print-directory B=build-asan OPT="-O1 -g" \
		SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
		all tests
	$(Q)B=build-asan RS_ASAN=1 scripts/run-tests.sh

# The soak (tests/soak/run.sh, doc/reliability.md): real servers and
# clients under rotating faults, with and without the library, in private
# namespaces; the table, the checks and $(B)/soak/soak.svg at the end.
soak: all ## SOAK_SECONDS (1800) of real traffic under rotating faults, library vs bare (root)
	$(Q)B=$(B) tests/soak/run.sh

# The short form CI runs: 90 s (one bare cycle whole, the next one's
# restart and dead address), then 40 s with make asan's build, whose
# reports fail it.  About two and a half minutes in all.
soak-ci: all ## the soak's short form: 90 s, then 40 s under ASan (build-asan)
	$(Q)SOAK_SECONDS=90 SOAK_FAULT_S=3 B=$(B) tests/soak/run.sh
	$(Q)$(MAKE) --no-print-directory B=build-asan OPT="-O1 -g" \
		SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
		all
	$(Q)SOAK_ASAN=1 SOAK_BARE=0 SOAK_SECONDS=40 SOAK_FAULT_S=3 B=build-asan \
		SOAK_OUT=$(B)/soak-asan tests/soak/run.sh

test-peer: all ## CPython's socket test suite bare and under the library, compared case by case
	$(Q)RS_LIB=$(CURDIR)/$(B)/libresolute.so scripts/peer-suite.sh

tsan: ## the threaded integration tests under ThreadSanitizer (build-tsan)
	$(Q)$(MAKE) --no-print-directory B=build-tsan OPT="-O1 -g" \
		SAN="-fsanitize=thread -fno-omit-frame-pointer" all tests
	$(Q)B=build-tsan scripts/tsan.sh

# One test at a time (RS_JOBS=1): under valgrind they are CPU-bound, and some
# time what they do to the millisecond (test_engine_resolve's fake sleep,
# test_budget's children killed 0.5-5.5 ms after fork); three at once on two
# cores made them miss.
valgrind: all tests ## the unit tests under valgrind
	$(Q)RS_VALGRIND=1 RS_JOBS=1 scripts/run-tests.sh unit

fuzz: ## libFuzzer: policy loader, match grammar, HTTP tracker; FUZZ_SECONDS each (60)
	$(Q)B=$(B) FUZZ_SECONDS=$(or $(FUZZ_SECONDS),60) scripts/fuzz.sh

install: all ## install under $(DESTDIR)$(PREFIX)
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(SYSCONFDIR)/resolute
	install -m 0644 $(B)/libresolute.so $(DESTDIR)$(LIBDIR)/libresolute.so
	install -m 0755 $(B)/resolute $(DESTDIR)$(BINDIR)/resolute
	install -m 0644 policy/default.yaml $(DESTDIR)$(DATADIR)/default.yaml
	install -m 0644 man/resolute.1 $(DESTDIR)$(MANDIR)/man1/resolute.1
	install -m 0644 man/resolute-policy.5 $(DESTDIR)$(MANDIR)/man5/resolute-policy.5
	test -e $(DESTDIR)$(SYSCONFDIR)/resolute/policy.yaml || \
		install -m 0644 policy/default.yaml $(DESTDIR)$(SYSCONFDIR)/resolute/policy.yaml

uninstall: ## remove what install put (keeps /etc/resolute/policy.yaml)
	rm -f $(DESTDIR)$(LIBDIR)/libresolute.so $(DESTDIR)$(BINDIR)/resolute \
		$(DESTDIR)$(DATADIR)/default.yaml \
		$(DESTDIR)$(MANDIR)/man1/resolute.1 $(DESTDIR)$(MANDIR)/man5/resolute-policy.5
	-rmdir $(DESTDIR)$(LIBDIR) $(DESTDIR)$(DATADIR) 2>/dev/null

# The package is built from a copy of the tree in $(B)/deb/src, because
# dpkg-buildpackage writes its results into the parent directory of the
# tree it builds; the .deb is then copied to $(B)/.  The version is that of
# debian/changelog, which must agree with VERSION.
DEB_DIR := $(B)/deb

deb: ## the Debian package: $(B)/resolute_VERSION_ARCH.deb (dpkg-buildpackage)
	$(Q)v=$$(dpkg-parsechangelog -SVersion) && [ "$$v" = "$(VERSION)" ] || \
		{ echo "debian/changelog has $$v, VERSION has $(VERSION)" >&2; exit 1; }
	$(Q)rm -rf $(DEB_DIR) $(B)/resolute_*.deb && mkdir -p $(DEB_DIR)/src
	$(Q)tar --exclude=./build --exclude='./build-*' --exclude=./.git -cf - . | \
		tar -C $(DEB_DIR)/src -xf -
	$(Q)cd $(DEB_DIR)/src && dpkg-buildpackage -b -us -uc >../build.log 2>&1 || \
		{ tail -40 ../build.log >&2; exit 1; }
	$(Q)cp $(DEB_DIR)/resolute_*.deb $(B)/
	$(Q)ls $(B)/resolute_*.deb

format: ## reformat the C sources
	clang-format -i src/*/*/*.[ch] src/cli/*.[ch] tests/unit/*.c tests/integration/*.[ch]

format-check:
	clang-format --dry-run --Werror src/*/*/*.[ch] src/cli/*.[ch]

lint: ## cppcheck, shellcheck, the no-interposed-calls rule, the layering, SPDX tags
	cppcheck --quiet --error-exitcode=1 --std=c11 -D_GNU_SOURCE \
		--suppress=missingIncludeSystem --inline-suppr \
		$(patsubst %/,-I%,$(DIRS_CORE) $(DIRS_PRELOAD)) src
	shellcheck -S warning scripts/*.sh .ci/run tests/programs/*.sh tests/soak/*.sh
	scripts/lint-calls.sh
	B=$(B) scripts/lint-layers.sh
	scripts/lint-spdx.sh

clean:
	rm -rf build build-*

help: ## this list
	@grep -E '^[a-z-]+:.*## ' Makefile | sed 's/:.*## /\t/' | expand -t 16

-include $(wildcard $(B)/obj/*/*.d $(B)/obj/*/*/*.d $(B)/tests/*.d $(B)/itests/*.d $(B)/*.d)
