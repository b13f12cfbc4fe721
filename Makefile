# codeinterp: a sandboxed, stateful Python interpreter for AI agents.
#
#   make          build/libcodeinterp.so, .a, codeinterp-worker, examples
#   make deps     install the Debian packages the build and tests need
#   make demo     the quarterly-variance agent on real data
#   make check    build and run every test
#   make check-header check-abi check-man check-install   one check alone
#   make install  install under PREFIX (default /usr/local); DESTDIR stages
#   make uninstall  remove what make install put
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

.PHONY: all deps demo check clean install uninstall FORCE
.PHONY: check-header check-abi check-man check-install
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
DEB_PACKAGES := gcc g++ make pkg-config python3-dev libseccomp-dev libcmocka-dev \
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
	$(MAKE) check-header check-abi check-man check-install
	@failed=""; for t in $(TESTS); do \
	  echo "== $$t"; \
	  timeout -k 5 $(TEST_TIMEOUT) $$t || failed="$$failed $$(basename $$t)"; \
	done; \
	if [ -n "$$failed" ]; then echo "FAILED:$$failed"; exit 1; fi; \
	echo "all test programs passed"

# Checks that are not test programs. The header alone must compile as
# C89 and as C++ (its one C99 type, ci_uint64, is declared __extension__).
check-header:
	echo '#include <codeinterp.h>' | $(CC) -std=c89 -pedantic -Werror -Wall -Wextra -Iinclude -x c -fsyntax-only -
	echo '#include <codeinterp.h>' | $(CXX) -pedantic -Werror -Wall -Wextra -Iinclude -x c++ -fsyntax-only -

check-abi: $(BUILD)/libcodeinterp.so
	sh test/abi.sh $(BUILD)/libcodeinterp.so include/codeinterp.h

check-man:
	sh test/man.sh include/codeinterp.h man

check-install:
	MAKE='$(MAKE)' TREE_WORKER='$(WORKER_PATH)' sh test/install.sh

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
libexecdir   ?= $(EXEC_PREFIX)/libexec
LIBEXECDIR   ?= $(libexecdir)
datarootdir  ?= $(PREFIX)/share
mandir       ?= $(datarootdir)/man
MANDIR       ?= $(mandir)
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
MAN3DIR      := $(MANDIR)/man3
INSTALL         ?= install
INSTALL_PROGRAM ?= $(INSTALL) -m 755
INSTALL_DATA    ?= $(INSTALL) -m 644

MAN_PAGES := $(wildcard man/*.3)

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
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,-z,relro,-z,now $(LDFLAGS) -o $@ $^ -lpthread

$(BUILD)/install/libcodeinterp.a: $(INSTALL_OBJ)
	rm -f $@
	ar rcs $@ $^

# pkg-config's file, from codeinterp.pc.in; the directories under PREFIX
# are written relative to ${prefix}, so pkg-config --define-prefix works.
$(BUILD)/install/codeinterp.pc: codeinterp.pc.in FORCE
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|' \
	    -e 's|@LIBDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))|' \
	    -e 's|@INCLUDEDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))|' \
	    -e 's|@VERSION@|$(VERSION)|' $< > $@

install: $(BUILD)/install/libcodeinterp.so.$(VERSION) $(BUILD)/install/libcodeinterp.a \
         $(BUILD)/install/codeinterp.pc $(BUILD)/codeinterp-worker
	$(INSTALL) -d -m 755 '$(DESTDIR)$(LIBDIR)' '$(DESTDIR)$(INCLUDEDIR)' '$(DESTDIR)$(PKGCONFIGDIR)' \
	    '$(DESTDIR)$(LIBEXECDIR)/codeinterp' '$(DESTDIR)$(MAN3DIR)'
	$(INSTALL_PROGRAM) $(BUILD)/install/libcodeinterp.so.$(VERSION) '$(DESTDIR)$(LIBDIR)'
	ln -sf libcodeinterp.so.$(VERSION) '$(DESTDIR)$(LIBDIR)/$(SONAME)'
	ln -sf libcodeinterp.so.$(VERSION) '$(DESTDIR)$(LIBDIR)/libcodeinterp.so'
	$(INSTALL_DATA) $(BUILD)/install/libcodeinterp.a '$(DESTDIR)$(LIBDIR)'
	$(INSTALL_DATA) include/codeinterp.h '$(DESTDIR)$(INCLUDEDIR)'
	$(INSTALL_DATA) $(BUILD)/install/codeinterp.pc '$(DESTDIR)$(PKGCONFIGDIR)'
	$(INSTALL_PROGRAM) $(BUILD)/codeinterp-worker '$(DESTDIR)$(LIBEXECDIR)/codeinterp'
	$(INSTALL_DATA) $(MAN_PAGES) '$(DESTDIR)$(MAN3DIR)'

# Removes the files install put and the worker's own directory; the
# shared directories (lib, include, man3...) stay.
uninstall:
	rm -f '$(DESTDIR)$(LIBDIR)/libcodeinterp.so.$(VERSION)' '$(DESTDIR)$(LIBDIR)/$(SONAME)' \
	      '$(DESTDIR)$(LIBDIR)/libcodeinterp.so' '$(DESTDIR)$(LIBDIR)/libcodeinterp.a' \
	      '$(DESTDIR)$(INCLUDEDIR)/codeinterp.h' '$(DESTDIR)$(PKGCONFIGDIR)/codeinterp.pc' \
	      '$(DESTDIR)$(INSTALLED_WORKER)'
	rmdir '$(DESTDIR)$(LIBEXECDIR)/codeinterp' 2>/dev/null || true
	for p in $(notdir $(MAN_PAGES)); do rm -f '$(DESTDIR)$(MAN3DIR)/'"$$p"; done

FORCE:

clean:
	rm -rf $(BUILD)

-include $(LIB_OBJ:.o=.d) $(WORKER_OBJ:.o=.d) $(INSTALL_OBJ:.o=.d)
