# codeinterp: a sandboxed, stateful Python interpreter for AI agents.
#
#   make          build/libcodeinterp.so, .a, codeinterp-worker, codeinterp-mcp, examples
#   make deps     install the Debian packages the build and tests need, and the
#                 analyst's package set (tools/analysis_packages.txt; Debian's
#                 nodejs and npm when there is no node), and the MCP tests' npm
#                 packages (bindings/mcp/test)
#   make demo-deps  only the Debian packages the build and the demo need
#   make demo     the finance team's variance report, actual against budget
#   make demo-macro  the variance of US macroeconomic growth rates, on real data
#   make check    build and run every test
#   make check SANITIZE=1   the same, host library and tests under ASan and UBSan (build-san/)
#   make valgrind the tests of the normal build under valgrind's memcheck
#   make check-header check-abi check-man check-install check-python-sources check-demo   one check alone
#   make check-python check-go check-rust check-mcp   one binding's tests (bindings/)
#   make install  install under PREFIX (default /usr/local); DESTDIR stages
#   make uninstall  remove what make install put
#   make fuzz     fuzz the host's frame decoders for FUZZ_TIME s (clang; see fuzz/)
#   make soak     SOAK_SESSIONS sessions under mixed faults for SOAK_SECONDS s (test/soak.c)
#   make bench    figures against a Jupyter kernel and plain python3 (make bench-deps first)
#   make check-jupyter   real notebooks run in a Jupyter kernel and in codeinterp, compared
#   make clean    remove build/

CC            ?= cc
PYTHON_CONFIG ?= /usr/bin/python3-config
BUILD         := build
CFLAGS        ?= -O2 -g
WARN          := -Wall -Wextra -Wshadow -Wno-unused-parameter
# What the host library links: JSON (the package manifest, and the MCP
# server) from libjansson, Ed25519 and SHA-256 from libsodium, the HTTP
# requests the host makes for cells (ci_config_allow_url) with libcurl,
# the wheels it unpacks for cells (ci_config_set_wheelhouse) with libarchive.
LIB_LIBS      := -ljansson -lsodium -lcrypto -lcurl -larchive -lpthread
BASE_CFLAGS   := -std=c11 -D_GNU_SOURCE -fPIC -fvisibility=hidden -Iinclude -Ilib $(WARN)
DEPFLAGS       = -MMD -MP

# ------------------------------------------------------------- sanitizers
# make check SANITIZE=1 builds the host library, the examples and the
# tests with AddressSanitizer (LeakSanitizer included) and
# UndefinedBehaviorSanitizer into build-san/, so a normal build and a
# sanitized one never mix objects, and runs every test program with any
# finding fatal (the options below). The worker is built without them,
# with the normal flags: it embeds CPython and runs under a seccomp filter
# and RLIMIT_AS, and ASan's runtime (its terabytes of shadow mappings, its
# own system calls at exit, its reports) would trip both. The tests reach
# it as usual, at build-san/codeinterp-worker.
ifeq ($(SANITIZE),1)
BUILD         := build-san
SAN_FLAGS      = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
override CFLAGS  += $(SAN_FLAGS)
override LDFLAGS += $(SAN_FLAGS)
# No finding is only a warning: the first one, a leak at exit included,
# ends the program, which fails the test. abort_on_error gives a clear
# SIGABRT; ASan turns core dumps off itself (disable_coredump).
export ASAN_OPTIONS  := halt_on_error=1:abort_on_error=1:detect_leaks=1:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1:print_summary=1
export UBSAN_OPTIONS := halt_on_error=1:abort_on_error=1:print_stacktrace=1:report_error_type=1
# The fake workers of test_protocol and test_faults (the test program
# itself, started with the worker's fixed environment) run with ASan's
# defaults, which end them at a finding too: the test then fails.
# The checks that are not test programs (header, ABI, man, install) test
# no code of the library, and the bindings load the library through an
# FFI that an ASan build would need its runtime preloaded for; the normal
# make check runs them.
CHECK_EXTRA   :=
endif
BINDING_CHECKS := check-python check-go check-rust check-mcp
CHECK_EXTRA   ?= check-header check-abi check-man check-install check-python-sources check-jupyter-fast \
                 check-demo $(BINDING_CHECKS)

VERSION_MAJOR := $(shell sed -n 's/^\#define CI_VERSION_MAJOR \([0-9]*\)/\1/p' include/codeinterp.h)
VERSION_MINOR := $(shell sed -n 's/^\#define CI_VERSION_MINOR \([0-9]*\)/\1/p' include/codeinterp.h)
VERSION_PATCH := $(shell sed -n 's/^\#define CI_VERSION_PATCH \([0-9]*\)/\1/p' include/codeinterp.h)
VERSION       := $(VERSION_MAJOR).$(VERSION_MINOR).$(VERSION_PATCH)
SONAME        := libcodeinterp.so.$(VERSION_MAJOR)

# An uninstalled build finds its worker here; $CODEINTERP_WORKER overrides.
WORKER_PATH   ?= $(abspath $(BUILD))/codeinterp-worker

LIB_SRC    := $(wildcard lib/*.c)
LIB_OBJ    := $(LIB_SRC:%.c=$(BUILD)/%.o)
WORKER_SRC := $(wildcard lib/worker/*.c)
WORKER_OBJ := $(WORKER_SRC:%.c=$(BUILD)/%.o)
EXAMPLES   := $(patsubst examples/%.c,$(BUILD)/%,$(wildcard examples/*.c))
TESTS      := $(patsubst test/%.c,$(BUILD)/test/%,$(wildcard test/test_*.c test/attacks/test_*.c))
TEST_HELPERS := $(filter-out test/test_%.c test/soak.c,$(wildcard test/*.c))
MCP_SRC    := $(wildcard bindings/mcp/*.c)
MCP_DEPS   := $(MCP_SRC) bindings/mcp/mcp.h include/codeinterp.h
MCP_TEST   := bindings/mcp/test

PY_CFLAGS  = $(shell $(PYTHON_CONFIG) --embed --includes)
PY_LDFLAGS = $(shell $(PYTHON_CONFIG) --embed --ldflags)

.PHONY: all deps demo-deps demo demo-macro check clean install uninstall FORCE
.PHONY: check-header check-abi check-man check-install check-python-sources check-demo
.PHONY: check-bindings check-python check-go check-rust check-mcp
all: $(BUILD)/libcodeinterp.so $(BUILD)/libcodeinterp.a $(BUILD)/codeinterp-worker \
     $(BUILD)/codeinterp-mcp $(BUILD)/codeinterp-manifest $(BUILD)/codeinterp-audit $(EXAMPLES)

$(BUILD)/lib/%.o: lib/%.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(DEPFLAGS) -DCI_WORKER_PATH='"$(WORKER_PATH)"' -c $< -o $@

$(BUILD)/lib/worker/%.o: lib/worker/%.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(DEPFLAGS) $(PY_CFLAGS) -I$(BUILD)/gen -c $< -o $@

# The worker's Python and codeinterp-manifest's discovery program are
# real files, linted and tested as such (check-python-sources), that
# tools/embed.sh turns into C arrays: build/gen/NAME_py.h defines NAME_py.
WORKER_PY  := $(wildcard lib/worker/*.py)
EMBED_PY   := $(WORKER_PY) tools/manifest/discover.py
$(BUILD)/gen/%_py.h: lib/worker/%.py tools/embed.sh
	@mkdir -p $(dir $@)
	sh tools/embed.sh $*_py $< $@
$(BUILD)/gen/%_py.h: tools/manifest/%.py tools/embed.sh
	@mkdir -p $(dir $@)
	sh tools/embed.sh $*_py $< $@
$(BUILD)/lib/worker/interp.o: $(WORKER_PY:lib/worker/%.py=$(BUILD)/gen/%_py.h)

$(BUILD)/libcodeinterp.so.$(VERSION): $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,-z,relro,-z,now $(LDFLAGS) -o $@ $^ $(LIB_LIBS)

$(BUILD)/libcodeinterp.so: $(BUILD)/libcodeinterp.so.$(VERSION)
	ln -sf libcodeinterp.so.$(VERSION) $(BUILD)/$(SONAME)
	ln -sf libcodeinterp.so.$(VERSION) $@

$(BUILD)/libcodeinterp.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

# The worker is the only binary that links libpython and libseccomp. It
# shares four host sources, the package manifest's file list and check,
# the error channel it reports through, the start of a helper thread and
# the bounded read of a descriptor, compiled with the worker's flags
# (never the sanitizers', below).
WORKER_SHARED_OBJ := $(BUILD)/worker/manifest_files.o $(BUILD)/worker/err.o \
                     $(BUILD)/worker/thread.o $(BUILD)/worker/read_all.o
$(BUILD)/worker/%.o: lib/%.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/codeinterp-worker: $(WORKER_OBJ) $(WORKER_SHARED_OBJ)
	$(CC) -Wl,-z,relro,-z,now $(LDFLAGS) -o $@ $^ $(PY_LDFLAGS) -lseccomp -lsodium

# codeinterp-manifest (tools/manifest/): keys, and signed package
# manifests made from what is installed. Key generation, secret keys and
# signing are its own objects, never the library's (check-abi proves
# it); for the document and its verification it links the static
# library, so "verify" runs the code ci_session_new() runs.
MANIFEST_SRC := $(wildcard tools/manifest/*.c)
MANIFEST_OBJ := $(MANIFEST_SRC:%.c=$(BUILD)/%.o)
$(BUILD)/tools/manifest/%.o: tools/manifest/%.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(DEPFLAGS) -I$(BUILD)/gen -c $< -o $@
$(BUILD)/tools/manifest/create.o: $(BUILD)/gen/discover_py.h
$(BUILD)/codeinterp-manifest: $(MANIFEST_OBJ) $(BUILD)/libcodeinterp.a
	$(CC) $(LDFLAGS) -o $@ $(MANIFEST_OBJ) $(BUILD)/libcodeinterp.a $(LIB_LIBS)

# codeinterp-audit (tools/audit/): checks an audit log's chain. It links
# nothing of the library's but its header of the log's constants.
$(BUILD)/codeinterp-audit: tools/audit/main.c lib/audit.h include/codeinterp.h
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< -ljansson -lsodium

$(BUILD)/%: examples/%.c $(BUILD)/libcodeinterp.so
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $< -L$(BUILD) -Wl,-rpath,'$$ORIGIN' -lcodeinterp \
	    $(EXAMPLE_LIBS)
# tool_agent's host function reads its arguments with jansson; its
# loopback service is a thread.
$(BUILD)/tool_agent: EXAMPLE_LIBS := -ljansson -lpthread

# The MCP server (bindings/mcp/), linked as the examples are; JSON comes
# from Debian's libjansson.
$(BUILD)/codeinterp-mcp: $(MCP_DEPS) $(BUILD)/libcodeinterp.so
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(MCP_SRC) -L$(BUILD) -Wl,-rpath,'$$ORIGIN' \
	    -lcodeinterp -ljansson -lpthread

# Tests link the static library, so they can reach internal functions too.
# Their Python cells of more than a line are files in test/cells, read
# from the source tree wherever a test runs (h_cell, test/helpers.h).
TEST_HEADERS := $(wildcard test/*.h test/attacks/*.h) include/codeinterp.h lib/proto.h lib/worker_start.h
TEST_CELLS   := -DCI_TEST_CELLS='"$(abspath test/cells)"'
$(BUILD)/test/%: test/%.c $(TEST_HELPERS) $(TEST_HEADERS) $(BUILD)/libcodeinterp.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(TEST_DEFS) $(TEST_CELLS) -Itest -o $@ $< $(TEST_HELPERS) $(BUILD)/libcodeinterp.a -lcmocka $(LIB_LIBS)
# test_scenario reads the scenario every binding's tests run
# (test/scenario/steps.json) from the source tree, from wherever it runs.
$(BUILD)/test/test_scenario: TEST_DEFS = -DCI_SCENARIO_FILE='"$(abspath test/scenario/steps.json)"'
# test_audit checks logs with the codeinterp-audit just built.
$(BUILD)/test/test_audit: TEST_DEFS = -DCI_AUDIT_TOOL='"$(abspath $(BUILD))/codeinterp-audit"'
$(BUILD)/test/test_audit: $(BUILD)/codeinterp-audit
# test_wheelhouse builds its wheels with test/wheels/build.py (run from the
# source tree, under /usr/bin/python3) and lists and signs them with the
# codeinterp-manifest just built.
$(BUILD)/test/test_wheelhouse: $(BUILD)/codeinterp-manifest

# ------------------------------------------------------------------ deps
# What the build and the demo need: the C toolchain, python3-config and
# libpython3.11 for the worker, the host's libraries (JSON, Ed25519, HTTP,
# wheels, and OpenSSL's SHA-256 for snapshots), the worker's seccomp, and
# what every session imports (dill pickles a session's state for
# ci_session_snapshot). The finance demo writes its report with tabulate (Markdown) and
# XlsxWriter (Excel), and reads it back with openpyxl.
DEMO_PACKAGES := gcc make pkg-config python3-dev libseccomp-dev libjansson-dev libsodium-dev \
                 libcurl4-openssl-dev libssl-dev libarchive-dev python3-numpy python3-pandas python3-matplotlib python3-ipython \
                 python3-tabulate python3-xlsxwriter python3-openpyxl python3-dill
# What the tests add: cmocka for the test programs, g++ for the header's
# C++ check, pytest and pyflakes for the Python sources and the Python
# binding (mypy, pip, setuptools, wheel and venv for its install check, and
# for test_wheelhouse to build its wheels; packaging for manifest create
# --wheelhouse to read their requirements),
# Go and Rust (and clippy) for theirs, groff for check-man to render the
# man pages (a minimal image has none), and the CA certificates npm ci
# needs to reach the registry over TLS.
TEST_PACKAGES := g++ libcmocka-dev python3-pytest pyflakes3 golang-go cargo rustc groff-base \
                 ca-certificates python3-mypy python3-pip python3-setuptools python3-wheel \
                 python3-venv rust-clippy python3-packaging
# The analyst's package set, for cells to import: tools/analysis_packages.txt
# names each with its Debian package (test_packages imports them all).
ANALYSIS_PACKAGES := $(shell awk '!/^\#/ && NF {print $$2}' tools/analysis_packages.txt)
# The MCP tests' Node.js (18 or later) and npm: Debian's, installed only
# when there is no node at all, so a Node.js of another origin is kept.
NODE_PACKAGES := nodejs npm
DEB_PACKAGES  := $(DEMO_PACKAGES) $(TEST_PACKAGES)

# Installs those of the Debian packages $(1) that are missing, running
# apt-get update first only then.
define install_missing
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi
endef

demo-deps:
	$(call install_missing,$(DEMO_PACKAGES))

# The MCP tests drive the server with the official TypeScript SDK, pinned
# in $(MCP_TEST)/package-lock.json: npm ci installs it from the npm
# registry when node_modules is missing or older than the lock file.
deps: demo-deps
	$(call install_missing,$(TEST_PACKAGES) $(ANALYSIS_PACKAGES) $(if $(shell command -v node 2> /dev/null),,$(NODE_PACKAGES)))
	@command -v npm > /dev/null || \
	  { echo "make deps: the MCP tests ($(MCP_TEST)) need npm, and $$(command -v node) ($$(node --version)) has none beside it: install its npm" >&2; exit 1; }
	@if [ ! -d $(MCP_TEST)/node_modules ] || [ $(MCP_TEST)/package-lock.json -nt $(MCP_TEST)/node_modules ]; then \
	  echo 'npm ci in $(MCP_TEST)'; \
	  cd $(MCP_TEST) && npm_config_update_notifier=false npm ci --no-audit --no-fund && touch node_modules; \
	fi

# ------------------------------------------------------------------ demo
# The finance team's variance report: four quarterly general-ledger
# exports and a budget (examples/data/make_finance_data.py wrote them),
# consolidated and compared by the cells of examples/variance/.
FINANCE_DATA := $(sort $(wildcard examples/data/gl_actuals_*.csv)) examples/data/budget_2025.csv
demo: demo-deps
	$(MAKE) all
	$(BUILD)/scripted_agent examples/variance $(BUILD)/demo $(FINANCE_DATA)

# The second example: the variance of US macroeconomic growth rates.
demo-macro: demo-deps
	$(MAKE) all
	$(BUILD)/scripted_agent examples/macro $(BUILD)/demo-macro examples/data/macrodata.csv

# ----------------------------------------------------------------- check
# Each test binary runs under its own timeout, so a hang fails the suite
# instead of stalling it. The C test programs run first and their result
# is printed before the CHECK_EXTRA checks run, each in a make of its own,
# so that one that fails (a binding's missing toolchain) names itself and
# neither hides the C results nor stops the others; the last line counts
# both, and any failure fails make check. A test skips only what needs a
# layer or a resource this machine lacks (a best-effort layer the kernel
# or a container refuses, as test/probe.c finds, root, a writable
# /usr...), and appends one line saying so to $(TEST_SKIPS) (helpers.h,
# h_skip_because; the CHECK_EXTRA checks get it too, and test/install.sh
# appends to it); the list is printed before the count.
TEST_TIMEOUT ?= 240
TEST_SKIPS   := $(abspath $(BUILD))/test-skips.txt
# Prints $(TEST_SKIPS), if anything was skipped.
define print_skips
	if [ -s $(TEST_SKIPS) ]; then \
	  echo "skipped, for want of what each names ($(TEST_SKIPS)):"; \
	  sed 's/^/  SKIPPED: /' $(TEST_SKIPS); \
	fi
endef
check: deps
	$(MAKE) all $(TESTS)
	@rm -f $(TEST_SKIPS); failed=""; for t in $(TESTS); do \
	  echo "== $$t"; \
	  CI_TEST_SKIPS=$(TEST_SKIPS) timeout -k 5 $(TEST_TIMEOUT) $$t || failed="$$failed $$(basename $$t)"; \
	done; \
	if [ -n "$$failed" ]; then echo "test programs FAILED:$$failed"; \
	else echo "all $(words $(TESTS)) test programs passed"; fi; \
	xfailed=""; for x in $(CHECK_EXTRA); do \
	  echo "== make $$x"; \
	  CI_TEST_SKIPS=$(TEST_SKIPS) $(MAKE) --no-print-directory $$x || { xfailed="$$xfailed $$x"; echo "== make $$x FAILED"; }; \
	done; \
	nfail=$$(echo $$failed $$xfailed | wc -w); \
	npass=$$(( $(words $(TESTS) $(CHECK_EXTRA)) - nfail )); \
	$(print_skips); \
	if [ -n "$$failed$$xfailed" ]; then echo "FAILED:$$failed$$xfailed"; fi; \
	echo "check: $$npass passed, $$nfail failed"; \
	[ -z "$$failed$$xfailed" ]

# Checks that are not test programs. The header alone must compile as
# C89 and as C++ (its one C99 type, ci_uint64, is declared __extension__).
check-header:
	echo '#include <codeinterp.h>' | $(CC) -std=c89 -pedantic -Werror -Wall -Wextra -Iinclude -x c -fsyntax-only -
	echo '#include <codeinterp.h>' | $(CXX) -pedantic -Werror -Wall -Wextra -Iinclude -x c++ -fsyntax-only -

check-abi: $(BUILD)/libcodeinterp.so
	sh test/abi.sh $(BUILD)/libcodeinterp.so include/codeinterp.h

check-man:
	sh test/man.sh include/codeinterp.h man

# The worker's Python files and codeinterp-manifest's: pyflakes, then
# their unit tests (test/python/), under Debian's python3. Unbuffered
# (-u): the runner under test flushes sys.__stdout__, the stream pytest's
# own progress goes to, so a progress line pytest left in its buffer
# would land in the fd 1 a test captures (capfd) whenever stdout is not a
# terminal and PYTHONUNBUFFERED is not set.
# The C tests' cells (test/cells) get pyflakes too, with CELL_NAMES as
# builtins: the names a test assigns in a line before a cell, those a
# cell run before it defines (h_cells: sc, has, try_), and those the
# worker gives every cell (display, get_ipython, and the host
# functions of test_functions' session).
CELL_NAMES   := HOST_PID LANDLOCK NAME try_ size display sc has \
                readable_regions FDS PAIRS ENV_PAIR NAME_PAIR ARG_PAIR \
                SYS_CLONE SYS_FALLOCATE SYS_FCHMOD SYS_FCHMODAT SYS_CREAT \
                SYS_OPEN SYS_UMASK SYS_LINKAT SYS_MKNOD SYS_MKNODAT \
                SYS_RENAMEAT2 echo value fail slow silent big HostFunctionError \
                worker bad go late q call lookup WHEEL PACKAGE HEAP_ADDR CANARY_FD PTY \
                HEAP_PAIR SYS_SYSINFO PORT queued WHERE LEVELS WS SOCK_PATH ABSTRACT \
                get_ipython TAG TARGET CANARY SESSION_DIR NAME_CRC fetch REQUESTS SITE \
                secret_op
comma        := ,
space        := $(subst ,, )
check-python-sources:
	pyflakes3 $(EMBED_PY) test/python test/jupyter test/demo test/wheels examples/data/make_finance_data.py
	PYFLAKES_BUILTINS=$(subst $(space),$(comma),$(strip $(CELL_NAMES))) pyflakes3 test/cells
	PYTHONDONTWRITEBYTECODE=1 timeout -k 5 $(TEST_TIMEOUT) /usr/bin/python3 -u -m pytest -q \
	    -c test/python/pytest.ini --rootdir test/python test/python

# make demo's finance job, examples/tool_agent.c and
# examples/branching_agent.c against plain pandas and Python outside the
# sandbox, and the demo's sample data against the script that
# wrote it (test/demo/).
check-demo: all
	PYTHONDONTWRITEBYTECODE=1 BUILD=$(BUILD) timeout -k 5 $(TEST_TIMEOUT) /usr/bin/python3 -m pytest -q \
	    -p no:cacheprovider --rootdir test/demo test/demo

check-install:
	MAKE='$(MAKE)' TREE_WORKER='$(WORKER_PATH)' sh test/install.sh

# The bindings' own test suites, each against this build tree's library.
check-bindings: $(BINDING_CHECKS)
$(BINDING_CHECKS): all
	BUILD=$(BUILD) sh bindings/$(@:check-%=%)/check.sh

# ------------------------------------------------ sanitizers and valgrind
# SANITIZE=1 (above): the worker and its objects keep the normal flags.
$(BUILD)/codeinterp-worker $(WORKER_OBJ) $(WORKER_SHARED_OBJ): SAN_FLAGS :=

.PHONY: clean-san
clean-san:
	rm -rf build-san
clean: clean-san

# make valgrind runs every test program of the normal build under
# memcheck: any error, or a block definitely lost, fails it. The test
# programs are traced into their own re-executions (the attack suites
# re-execute themselves with secrets; test_sandbox starts a host that
# dies), but not into a worker, the real one or test_protocol's fake one,
# both started with "--parent": valgrind's own mappings and system calls
# would trip the worker's RLIMIT_AS and seccomp filter, and CPython is
# not the host's code. valgrind 3.19 does not know openat2(2) or
# pidfd_open(2) and fails both with ENOSYS, so under it the library
# resolves names through lib/resolve.c's walk and watches its workers
# by asking, every 50 ms; both are as on Linux before 5.6 and 5.3.
# It needs no suppressions. CODEINTERP_TEST_VALGRIND=1 tells a test it
# runs under valgrind (test_sandbox cannot probe Landlock through it).
# valgrind is not a dependency of make check: valgrind-deps installs it.
VALGRIND         ?= valgrind
VALGRIND_FLAGS   ?= --tool=memcheck --error-exitcode=99 --leak-check=full \
                    --errors-for-leak-kinds=definite --show-leak-kinds=definite \
                    --trace-children=yes --trace-children-skip-by-arg=--parent \
                    --num-callers=30 -q
VALGRIND_TIMEOUT ?= 900
VALGRIND_PACKAGES := valgrind
.PHONY: valgrind valgrind-deps
valgrind-deps:
	$(call install_missing,$(VALGRIND_PACKAGES))

valgrind: deps valgrind-deps
	@if [ "$(SANITIZE)" = 1 ]; then echo 'make valgrind: not with SANITIZE=1 (ASan and valgrind exclude each other)' >&2; exit 1; fi
	$(MAKE) all $(TESTS)
	@rm -f $(TEST_SKIPS); failed=""; for t in $(TESTS); do \
	  echo "== valgrind $$t"; \
	  CI_TEST_SKIPS=$(TEST_SKIPS) CODEINTERP_TEST_VALGRIND=1 timeout -k 5 $(VALGRIND_TIMEOUT) $(VALGRIND) $(VALGRIND_FLAGS) $$t || failed="$$failed $$(basename $$t)"; \
	done; \
	$(print_skips); \
	if [ -n "$$failed" ]; then echo "FAILED under valgrind:$$failed"; exit 1; fi; \
	echo "all test programs passed under valgrind"

# --------------------------------------------------------------- install
# The GNU directory variables, lower or upper case, as in zstd's Makefile.
prefix       ?= /usr/local
PREFIX       ?= $(prefix)
exec_prefix  ?= $(PREFIX)
EXEC_PREFIX  ?= $(exec_prefix)
libdir       ?= $(EXEC_PREFIX)/lib
LIBDIR       ?= $(libdir)
includedir   ?= $(PREFIX)/include
INCLUDEDIR   ?= $(includedir)
bindir       ?= $(EXEC_PREFIX)/bin
BINDIR       ?= $(bindir)
libexecdir   ?= $(EXEC_PREFIX)/libexec
LIBEXECDIR   ?= $(libexecdir)
datarootdir  ?= $(PREFIX)/share
mandir       ?= $(datarootdir)/man
MANDIR       ?= $(mandir)
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
MAN3DIR      := $(MANDIR)/man3
MAN1DIR      := $(MANDIR)/man1
INSTALL         ?= install
INSTALL_PROGRAM ?= $(INSTALL) -m 755
INSTALL_DATA    ?= $(INSTALL) -m 644

MAN_PAGES := $(wildcard man/*.3)
MAN1_PAGES := $(wildcard man/man1/*.1)

# The library runs the worker at a path compiled in (CI_WORKER_PATH). The
# build tree's library names build/codeinterp-worker, so the tests and
# examples run the worker just built; the installed library is built from
# the same sources into build/install/, naming the worker's installed path.
# A lookup relative to the library at run time (dladdr) would break for a
# static link and for a LIBEXECDIR that is not beside LIBDIR. DESTDIR only
# stages the files and is never compiled in. build/install/worker-path
# holds the path, so a new PREFIX or LIBEXECDIR rebuilds those objects.
INSTALLED_WORKER = $(LIBEXECDIR)/codeinterp/codeinterp-worker
INSTALL_OBJ      := $(LIB_SRC:%.c=$(BUILD)/install/%.o)

$(BUILD)/install/worker-path: FORCE
	@case '$(INSTALLED_WORKER)' in /*) ;; *) echo 'LIBEXECDIR must be absolute' >&2; exit 1 ;; esac
	@mkdir -p $(dir $@)
	@echo '$(INSTALLED_WORKER)' | cmp -s - $@ || echo '$(INSTALLED_WORKER)' > $@

$(BUILD)/install/lib/%.o: lib/%.c $(BUILD)/install/worker-path
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(DEPFLAGS) -DCI_WORKER_PATH='"$(INSTALLED_WORKER)"' -c $< -o $@

$(BUILD)/install/libcodeinterp.so.$(VERSION): $(INSTALL_OBJ)
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,-z,relro,-z,now $(LDFLAGS) -o $@ $^ $(LIB_LIBS)

$(BUILD)/install/libcodeinterp.a: $(INSTALL_OBJ)
	rm -f $@
	ar rcs $@ $^

# The installed codeinterp-mcp links the installed library and finds it
# in LIBDIR (its rpath); build/install/libdir holds that path, so a new
# LIBDIR relinks it.
$(BUILD)/install/libdir: FORCE
	@case '$(LIBDIR)' in /*) ;; *) echo 'LIBDIR must be absolute' >&2; exit 1 ;; esac
	@mkdir -p $(dir $@)
	@echo '$(LIBDIR)' | cmp -s - $@ || echo '$(LIBDIR)' > $@

$(BUILD)/install/codeinterp-mcp: $(MCP_DEPS) $(BUILD)/install/libcodeinterp.so.$(VERSION) $(BUILD)/install/libdir
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(MCP_SRC) \
	    $(BUILD)/install/libcodeinterp.so.$(VERSION) -Wl,-rpath,'$(LIBDIR)' $(LIB_LIBS)

# pkg-config's file, from codeinterp.pc.in; the directories under PREFIX
# are written relative to ${prefix}, so pkg-config --define-prefix works.
$(BUILD)/install/codeinterp.pc: codeinterp.pc.in FORCE
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|' \
	    -e 's|@LIBDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))|' \
	    -e 's|@INCLUDEDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))|' \
	    -e 's|@VERSION@|$(VERSION)|' $< > $@

install: $(BUILD)/install/libcodeinterp.so.$(VERSION) $(BUILD)/install/libcodeinterp.a \
         $(BUILD)/install/codeinterp.pc $(BUILD)/codeinterp-worker $(BUILD)/install/codeinterp-mcp \
         $(BUILD)/codeinterp-manifest $(BUILD)/codeinterp-audit
	$(INSTALL) -d -m 755 '$(DESTDIR)$(LIBDIR)' '$(DESTDIR)$(INCLUDEDIR)' '$(DESTDIR)$(PKGCONFIGDIR)' \
	    '$(DESTDIR)$(LIBEXECDIR)/codeinterp' '$(DESTDIR)$(MAN3DIR)' '$(DESTDIR)$(BINDIR)' \
	    '$(DESTDIR)$(MAN1DIR)'
	$(INSTALL_PROGRAM) $(BUILD)/install/libcodeinterp.so.$(VERSION) '$(DESTDIR)$(LIBDIR)'
	ln -sf libcodeinterp.so.$(VERSION) '$(DESTDIR)$(LIBDIR)/$(SONAME)'
	ln -sf libcodeinterp.so.$(VERSION) '$(DESTDIR)$(LIBDIR)/libcodeinterp.so'
	$(INSTALL_DATA) $(BUILD)/install/libcodeinterp.a '$(DESTDIR)$(LIBDIR)'
	$(INSTALL_DATA) include/codeinterp.h '$(DESTDIR)$(INCLUDEDIR)'
	$(INSTALL_DATA) $(BUILD)/install/codeinterp.pc '$(DESTDIR)$(PKGCONFIGDIR)'
	$(INSTALL_PROGRAM) $(BUILD)/codeinterp-worker '$(DESTDIR)$(LIBEXECDIR)/codeinterp'
	$(INSTALL_DATA) $(MAN_PAGES) '$(DESTDIR)$(MAN3DIR)'
	$(INSTALL_PROGRAM) $(BUILD)/install/codeinterp-mcp '$(DESTDIR)$(BINDIR)'
	$(INSTALL_PROGRAM) $(BUILD)/codeinterp-manifest '$(DESTDIR)$(BINDIR)'
	$(INSTALL_PROGRAM) $(BUILD)/codeinterp-audit '$(DESTDIR)$(BINDIR)'
	$(INSTALL_DATA) $(MAN1_PAGES) '$(DESTDIR)$(MAN1DIR)'
	$(LDCONFIG_IF_LIVE)

# The dynamic loader's cache (ldconfig(8)) is refreshed after an install
# into the live system by root, so a program linked against the new
# library runs at once from /usr/local/lib; never for a staged DESTDIR,
# and not where /etc, which holds the cache, is read-only (a container's
# root, with PREFIX somewhere writable), which the install then says.
LDCONFIG_IF_LIVE = @if [ -z '$(DESTDIR)' ] && [ "$$(id -u)" = 0 ] && command -v ldconfig > /dev/null; then \
	  if [ -w /etc ]; then ldconfig; \
	  else echo "/etc is read-only: ldconfig's cache is not refreshed"; fi; fi

# Removes the files install put and the worker's own directory; the
# shared directories (lib, include, man3...) stay.
uninstall:
	rm -f '$(DESTDIR)$(LIBDIR)/libcodeinterp.so.$(VERSION)' '$(DESTDIR)$(LIBDIR)/$(SONAME)' \
	      '$(DESTDIR)$(LIBDIR)/libcodeinterp.so' '$(DESTDIR)$(LIBDIR)/libcodeinterp.a' \
	      '$(DESTDIR)$(INCLUDEDIR)/codeinterp.h' '$(DESTDIR)$(PKGCONFIGDIR)/codeinterp.pc' \
	      '$(DESTDIR)$(INSTALLED_WORKER)' '$(DESTDIR)$(BINDIR)/codeinterp-mcp' \
	      '$(DESTDIR)$(BINDIR)/codeinterp-manifest' '$(DESTDIR)$(BINDIR)/codeinterp-audit'
	rmdir '$(DESTDIR)$(LIBEXECDIR)/codeinterp' 2>/dev/null || true
	for p in $(notdir $(MAN_PAGES)); do rm -f '$(DESTDIR)$(MAN3DIR)/'"$$p"; done
	for p in $(notdir $(MAN1_PAGES)); do rm -f '$(DESTDIR)$(MAN1DIR)/'"$$p"; done
	$(LDCONFIG_IF_LIVE)

# ------------------------------------------------------------------ fuzz
# fuzz/fuzz_frames.c feeds the host's frame reader and decoders what a
# hostile worker could write on the channel (its header describes the
# input). make fuzz builds it with clang's libFuzzer, ASan and UBSan from
# objects of lib/ of its own in build-fuzz/, and runs it for FUZZ_TIME
# seconds on build-fuzz/corpus/, a copy of the seeds (fuzz/corpus/frames,
# written by fuzz/make_seeds.py) and regressions, so new inputs stay out
# of the tree. Anything found fails it, and the input is left in
# build-fuzz/artifacts/: fix the bug, then copy the input into
# fuzz/regressions/. make check runs the seeds and fuzz/regressions/
# through the same target built with gcc and fuzz/standalone.c (no clang),
# under ASan and UBSan unless FUZZ_CHECK_SAN is set empty.
FUZZ_CC        ?= clang
FUZZ_TIME      ?= 600
FUZZ_MAX_LEN   ?= 65536
FUZZ_FLAGS     ?=
FUZZ_BUILD     := build-fuzz
FUZZ_SEEDS     := fuzz/corpus/frames
FUZZ_REGRESS   := fuzz/regressions
FUZZ_HEADERS   := fuzz/fuzz_frames.c $(wildcard lib/*.h) include/codeinterp.h
FUZZ_CFLAGS    := -std=c11 -D_GNU_SOURCE -Iinclude -Ilib $(WARN) -g -O1 -fno-omit-frame-pointer \
                  -fsanitize=address,undefined -fno-sanitize-recover=all \
                  -DCI_WORKER_PATH='"/nonexistent/codeinterp-worker"'
FUZZ_LIB_OBJ   := $(LIB_SRC:%.c=$(FUZZ_BUILD)/%.o)
FUZZ_CHECK_SAN ?= -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_DEB       := clang libclang-rt-dev

.PHONY: fuzz fuzz-deps check-fuzz
fuzz-deps:
	$(call install_missing,$(FUZZ_DEB))

$(FUZZ_BUILD)/lib/%.o: lib/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(DEPFLAGS) -c $< -o $@

$(FUZZ_BUILD)/libcodeinterp-fuzz.a: $(FUZZ_LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(FUZZ_BUILD)/fuzz_frames: $(FUZZ_HEADERS) $(FUZZ_BUILD)/libcodeinterp-fuzz.a
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ fuzz/fuzz_frames.c \
	    $(FUZZ_BUILD)/libcodeinterp-fuzz.a $(LIB_LIBS)

# -timeout: one input taking a second is a hang in the decoder.
fuzz: fuzz-deps
	$(MAKE) $(FUZZ_BUILD)/fuzz_frames
	@mkdir -p $(FUZZ_BUILD)/corpus $(FUZZ_BUILD)/artifacts
	@for f in $(FUZZ_SEEDS)/* $(FUZZ_REGRESS)/*; do \
	  if [ -f "$$f" ]; then cp "$$f" $(FUZZ_BUILD)/corpus/ || exit 1; fi; \
	done
	$(FUZZ_BUILD)/fuzz_frames -max_total_time=$(FUZZ_TIME) -max_len=$(FUZZ_MAX_LEN) \
	    -timeout=10 -dict=fuzz/frames.dict -artifact_prefix=$(FUZZ_BUILD)/artifacts/ \
	    -print_final_stats=1 $(FUZZ_FLAGS) $(FUZZ_BUILD)/corpus

$(BUILD)/fuzz/fuzz_frames: $(FUZZ_HEADERS) fuzz/standalone.c $(LIB_SRC) $(wildcard lib/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(FUZZ_CHECK_SAN) -DCI_WORKER_PATH='"/nonexistent/codeinterp-worker"' \
	    -o $@ fuzz/fuzz_frames.c fuzz/standalone.c $(LIB_SRC) $(LIB_LIBS)

# Part of make check: every seed and regression input, once.
check-fuzz: deps
	$(MAKE) $(BUILD)/fuzz/fuzz_frames
	$(BUILD)/fuzz/fuzz_frames $(FUZZ_SEEDS) $(FUZZ_REGRESS)
check: check-fuzz

.PHONY: fuzz-clean
fuzz-clean:
	rm -rf $(FUZZ_BUILD)
clean: fuzz-clean

-include $(FUZZ_LIB_OBJ:.o=.d)

# ------------------------------------------------------------------ soak
# test/soak.c: SOAK_SESSIONS sessions driven by a few threads for
# SOAK_SECONDS s with ordinary cells, timeouts, memory errors, outputs
# over the limit, figures, files and killed workers; it checks that every
# cell got one result of the expected status and that the host's RSS,
# descriptors and child processes come back (see the file's comment).
# Not part of make check: it is not named test_*.c.
SOAK_SECONDS  ?= 300
SOAK_SESSIONS ?= 50
.PHONY: soak
soak: deps
	$(MAKE) all $(BUILD)/soak
	SOAK_SECONDS=$(SOAK_SECONDS) SOAK_SESSIONS=$(SOAK_SESSIONS) $(BUILD)/soak

$(BUILD)/soak: test/soak.c include/codeinterp.h $(BUILD)/libcodeinterp.a
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(TEST_CELLS) $(LDFLAGS) -o $@ $< $(BUILD)/libcodeinterp.a $(LIB_LIBS)

# ----------------------------------------------------------------- bench
# bench/: session start, cell round trip, idle memory, BENCH_SESSIONS
# concurrent sessions, a pandas workload and 100 MiB file moves, against
# a Jupyter kernel and plain python3 where they compare (Debian's
# /usr/bin/python3 with the packages of bench-deps). Prints one table of
# medians with the issue's targets; asserts nothing about time.
BENCH_SESSIONS ?= 1000
BENCH_PYTHON   ?= /usr/bin/python3
BENCH_PACKAGES := python3-ipykernel python3-jupyter-client
# The signed manifest make bench times covers the analyst's set.
BENCH_MANIFEST_PACKAGES ?= $(shell awk '!/^\#/ && NF == 3 {print $$3}' tools/analysis_packages.txt | paste -sd, -)
.PHONY: bench bench-deps
bench-deps:
	$(call install_missing,$(BENCH_PACKAGES))

# The tree before the IPython layer, BENCH_BASELINE (from git), is built
# in $(BUILD)/bench/baseline and its own bench runs in the same make bench,
# after this tree's, so the report can set the two side by side.
BENCH_BASELINE ?= 6c7e8ea
BENCH_BASE_DIR := $(BUILD)/bench/baseline

bench:
	$(MAKE) all $(BUILD)/bench/bench
	@if [ ! -f $(BENCH_BASE_DIR)/Makefile ]; then \
	  mkdir -p $(BENCH_BASE_DIR) && git archive $(BENCH_BASELINE) | tar -x -C $(BENCH_BASE_DIR); fi
	$(MAKE) -C $(BENCH_BASE_DIR) all build/bench/bench
	BENCH_SESSIONS=$(BENCH_SESSIONS) BENCH_MANIFEST_PACKAGES=$(BENCH_MANIFEST_PACKAGES) \
	    $(BUILD)/bench/bench bench/workload.py > $(BUILD)/bench/codeinterp.tsv
	cd $(BENCH_BASE_DIR) && BENCH_SESSIONS=$(BENCH_SESSIONS) build/bench/bench bench/workload.py \
	    > ../baseline.tsv
	$(BENCH_PYTHON) bench/jupyter_bench.py bench/workload.py > $(BUILD)/bench/jupyter.tsv
	@$(BENCH_PYTHON) bench/report.py $(BUILD)/bench/codeinterp.tsv $(BUILD)/bench/jupyter.tsv \
	    $(BUILD)/bench/baseline.tsv | tee $(BUILD)/bench/report.txt

$(BUILD)/bench/bench: bench/bench.c include/codeinterp.h $(BUILD)/libcodeinterp.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libcodeinterp.a $(LIB_LIBS)

# --------------------------------------------------------- check-jupyter
# test/jupyter/: runs real notebook code from Debian's documentation
# packages (the pandas user guide and its style.ipynb, sympy's example
# notebooks, IPython's docs) cell by cell in a Jupyter kernel and in a
# codeinterp session, and prints every cell that differs and the match
# rate; it fails below JUPYTER_MIN_RATE percent (JUPYTER_ARGS adds --fast,
# --json FILE, --notebook NAME; see test/jupyter/differential.py). make
# check runs check-jupyter-fast, the corpus's fast subset (about 20 s).
# Its packages (the documentation ones are large) are installed by these
# targets, not by make deps.
JUPYTER_PYTHON   ?= /usr/bin/python3
JUPYTER_ARGS     ?=
JUPYTER_MIN_RATE ?= 97
JUPYTER_PACKAGES := python3-ipykernel python3-jupyter-client python3-nbformat python3-jinja2 \
                    python3-scipy python3-sympy python-pandas-doc python-sympy-doc python-ipython-doc
.PHONY: check-jupyter check-jupyter-fast
check-jupyter:
	$(call install_missing,$(DEB_PACKAGES) $(JUPYTER_PACKAGES))
	$(MAKE) all
	$(JUPYTER_PYTHON) test/jupyter/differential.py --min-rate $(JUPYTER_MIN_RATE) $(JUPYTER_ARGS) $(BUILD)

check-jupyter-fast:
	$(MAKE) check-jupyter JUPYTER_ARGS='--fast --quiet $(JUPYTER_ARGS)'

FORCE:

clean:
	rm -rf $(BUILD)

-include $(LIB_OBJ:.o=.d) $(WORKER_OBJ:.o=.d) $(WORKER_SHARED_OBJ:.o=.d) $(INSTALL_OBJ:.o=.d) \
         $(MANIFEST_OBJ:.o=.d)
