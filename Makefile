# codeinterp: a sandboxed, stateful Python interpreter for AI agents.
#
#   make          build/libcodeinterp.so, .a, codeinterp-worker, examples
#   make deps     install the Debian packages the build and tests need
#   make demo     the quarterly-variance agent on real data
#   make check    build and run every test
#   make clean    remove build/

CC            ?= cc
PYTHON_CONFIG ?= /usr/bin/python3-config
BUILD         := build
CFLAGS        ?= -O2 -g
WARN          := -Wall -Wextra -Wshadow -Wno-unused-parameter
BASE_CFLAGS   := -std=c11 -D_GNU_SOURCE -fPIC -fvisibility=hidden -Iinclude -Ilib $(WARN)
DEPFLAGS       = -MMD -MP

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
TEST_HELPERS := $(filter-out test/test_%.c,$(wildcard test/*.c))

PY_CFLAGS  = $(shell $(PYTHON_CONFIG) --embed --includes)
PY_LDFLAGS = $(shell $(PYTHON_CONFIG) --embed --ldflags)

.PHONY: all deps demo check clean
all: $(BUILD)/libcodeinterp.so $(BUILD)/libcodeinterp.a $(BUILD)/codeinterp-worker $(EXAMPLES)

$(BUILD)/lib/%.o: lib/%.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(DEPFLAGS) -DCI_WORKER_PATH='"$(WORKER_PATH)"' -c $< -o $@

$(BUILD)/lib/worker/%.o: lib/worker/%.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(DEPFLAGS) $(PY_CFLAGS) -c $< -o $@

$(BUILD)/libcodeinterp.so.$(VERSION): $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,-z,relro,-z,now $(LDFLAGS) -o $@ $^ -lpthread

$(BUILD)/libcodeinterp.so: $(BUILD)/libcodeinterp.so.$(VERSION)
	ln -sf libcodeinterp.so.$(VERSION) $(BUILD)/$(SONAME)
	ln -sf libcodeinterp.so.$(VERSION) $@

$(BUILD)/libcodeinterp.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

# The worker is the only binary that links libpython and libseccomp.
$(BUILD)/codeinterp-worker: $(WORKER_OBJ)
	$(CC) -Wl,-z,relro,-z,now $(LDFLAGS) -o $@ $^ $(PY_LDFLAGS) -lseccomp

$(BUILD)/%: examples/%.c $(BUILD)/libcodeinterp.so
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $< -L$(BUILD) -Wl,-rpath,'$$ORIGIN' -lcodeinterp

# Tests link the static library, so they can reach internal functions too.
TEST_HEADERS := $(wildcard test/*.h test/attacks/*.h) include/codeinterp.h lib/proto.h
$(BUILD)/test/%: test/%.c $(TEST_HELPERS) $(TEST_HEADERS) $(BUILD)/libcodeinterp.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Itest -o $@ $< $(TEST_HELPERS) $(BUILD)/libcodeinterp.a -lcmocka -lpthread

# ------------------------------------------------------------------ deps
DEB_PACKAGES := gcc make pkg-config python3-dev libseccomp-dev libcmocka-dev \
                python3-numpy python3-pandas python3-matplotlib

deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# ------------------------------------------------------------------ demo
demo: deps
	$(MAKE) all
	$(BUILD)/quarterly_variance examples/data/macrodata.csv $(BUILD)/demo

# ----------------------------------------------------------------- check
# Each test binary runs under its own timeout, so a hang fails the suite
# instead of stalling it.
TEST_TIMEOUT ?= 240
check: deps
	$(MAKE) all $(TESTS)
	@failed=""; for t in $(TESTS); do \
	  echo "== $$t"; \
	  timeout -k 5 $(TEST_TIMEOUT) $$t || failed="$$failed $$(basename $$t)"; \
	done; \
	if [ -n "$$failed" ]; then echo "FAILED:$$failed"; exit 1; fi; \
	echo "all test programs passed"

clean:
	rm -rf $(BUILD)

-include $(LIB_OBJ:.o=.d) $(WORKER_OBJ:.o=.d)
