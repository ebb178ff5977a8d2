# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# rdmafast: plain make, no configure step. This file holds what concerns
# the whole tree (dependencies, all, test, install); each folder's targets
# are in a fragment beside it, included at the end: tests/tests.mk,
# examples/examples.mk, man/man.mk, emu/emu.mk, bench/bench.mk,
# fuzz/fuzz.mk, san/san.mk, stress/stress.mk, cross/aarch64.mk.
#
#   make            build the emulated HCA, the examples and the man pages
#   make test       install missing Debian packages, then run every test
#   make check      clang static analyzer over the whole build (zero reports)
#   make check-layout  emu/'s folders include and link each other as a DAG (part of make test)
#   make install    headers, rdmafast.pc, man pages (needs pandoc), the emulator,
#                   the examples and docs the pages cite (PREFIX, DESTDIR)
#   make uninstall  remove what install put there
#   make install-test  install into a temporary DESTDIR and PREFIX, run what was installed
#   make deps       install (as root) or name the missing Debian packages
#   make run        install missing Debian packages, then the two-process showcase
#   make examples-run  every example on the emulated HCA (examples/run.sh --all)
#   make examples-checked-run  the same built with -DRF_CHECKED (part of make test)
#   make man        render the manual pages (man/*.md) into build/man/
#   make bench      rdmafast against libmlx5 and UCX: build/bench/report.{json,svg}
#   make bench-clang  the same built by clang, in build/clang/
#   make bench-probe  the stores of a ringing post alone (bench/store_probe.c)
#   make bench-wake-probe  the host's floor under a busy-polling round trip (bench/wake_probe.c)
#   make bench-clients  ucx_perftest, perftest and Open MPI latencies on the emulated HCA (bench/clients.sh)
#   make test-aarch64  everything built for arm64 and tested under qemu-user (cross/aarch64.mk)
#   make fuzz       the libFuzzer targets, FUZZ_SECONDS each (fuzz/fuzz.mk)
#   make clean      remove build/

PREFIX       ?= /usr/local
INCLUDEDIR   ?= $(PREFIX)/include
LIBDIR       ?= $(PREFIX)/lib
BINDIR       ?= $(PREFIX)/bin
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
MANDIR       ?= $(PREFIX)/share/man
DOCDIR       ?= $(PREFIX)/share/doc/rdmafast

BUILD       := build
CC          ?= cc
CXX         ?= c++
# DWARF 4: valgrind 3.19 (rfemu -- valgrind, make bench) cannot read clang's DWARF 5
CFLAGS      ?= -O2 -g -gdwarf-4
WARN        := -Wall -Wextra -Werror
RF_CPPFLAGS := -Iinclude

VERSION := $(shell sed -n 's/^\#define RF_VERSION_\(MAJOR\|MINOR\|PATCH\) *\([0-9]*\).*/\2/p' \
                 include/rdmafast/version.h | paste -sd.)

HEADERS := $(sort $(wildcard include/rdmafast/*.h include/rdmafast/hw/*.h include/rdmafast/verbs/*.h \
                               include/rdmafast/detail/*.h))

.PHONY: all test check install uninstall clean deps check-headers unit-bins \
        unit-test e2e-test examples run bench bench-test bench-clang bench-probe bench-wake-probe bench-clients test-aarch64 check-layout \
        man man-test readme-test \
        install-man uninstall-man install-doc uninstall-doc install-test
all: emu examples man

# ---------------------------------------------------------------------------
# Dependencies. The list is what a fresh Debian 12 needs; deps installs what
# dpkg does not show as installed, as root, or says what to run otherwise.
DEPS_PKGS := make gcc g++ clang clang-tools pkg-config valgrind \
             libibverbs-dev ibverbs-providers ibverbs-utils libcriterion-dev \
             pandoc mandoc libclang-rt-dev \
             infiniband-diags perftest ucx-utils librdmacm-dev rdmacm-utils \
             libucx-dev
# (make test-aarch64 has its own: DEPS_AARCH64_PKGS in cross/aarch64.mk)

deps: PKGS = $(DEPS_PKGS)
deps:
	@missing=""; for p in $(PKGS); do \
	    dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' \
	        || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
	    echo "deps: installing$$missing"; \
	    { [ -n "$$RF_APT_UPDATED" ] || apt-get update -qq; } && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	else \
	    echo "deps: missing Debian packages:$$missing"; \
	    echo "deps: run as root: apt-get update && apt-get install -y$$missing"; \
	    exit 1; \
	fi

CRIT_CFLAGS = $(shell pkg-config --cflags criterion 2>/dev/null)
CRIT_LIBS   = $(shell pkg-config --libs criterion 2>/dev/null || echo -lcriterion)
VERBS_LIBS  := -libverbs -lmlx5
# mlx5dv.h's inline setters call glibc's htobe32() & co., which strict -std=c11
# hides; whatever includes mlx5dv.h is built with _DEFAULT_SOURCE.
VERBS_CPPFLAGS := -D_DEFAULT_SOURCE

# ---------------------------------------------------------------------------
# The showcase: two processes on the emulated HCA (examples/run.sh). The
# first command of a newcomer: it installs what it needs, as make test does.
run: deps
	@$(MAKE) --no-print-directory all
	@RF_BUILD=$(BUILD) sh examples/run.sh

# ---------------------------------------------------------------------------
test: deps
	@$(MAKE) --no-print-directory check-headers check-includes check-layout asm-test unit-test \
	    checked-selftest emu-test e2e-test examples-checked-run bench-test man-test readme-test \
	    doc-length-test install-test

# scan-build re-runs the whole build from scratch with the analyzer as CC.
check: deps
	rm -rf $(BUILD)/scan
	scan-build --status-bugs -o $(BUILD)/scan-report \
	    $(MAKE) --no-print-directory BUILD=$(BUILD)/scan all \
	        $(BUILD)/scan/tests/O0/rftest $(if $(E2E_SRCS),$(BUILD)/scan/tests/e2e/rfe2e) \
	        $(BUILD)/scan/readme/example

# ---------------------------------------------------------------------------
install: install-emu install-man install-doc
	install -d $(DESTDIR)$(INCLUDEDIR)/rdmafast/hw $(DESTDIR)$(INCLUDEDIR)/rdmafast/detail \
	    $(DESTDIR)$(INCLUDEDIR)/rdmafast/verbs $(DESTDIR)$(PKGCONFIGDIR)
	install -m 644 $(wildcard include/rdmafast/*.h) $(DESTDIR)$(INCLUDEDIR)/rdmafast/
	install -m 644 $(wildcard include/rdmafast/hw/*.h) $(DESTDIR)$(INCLUDEDIR)/rdmafast/hw/
	install -m 644 $(wildcard include/rdmafast/detail/*.h) $(DESTDIR)$(INCLUDEDIR)/rdmafast/detail/
	install -m 644 $(wildcard include/rdmafast/verbs/*.h) $(DESTDIR)$(INCLUDEDIR)/rdmafast/verbs/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(VERSION)|' rdmafast.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/rdmafast.pc

uninstall: uninstall-emu uninstall-man uninstall-doc
	rm -rf $(DESTDIR)$(INCLUDEDIR)/rdmafast
	rm -f $(DESTDIR)$(PKGCONFIGDIR)/rdmafast.pc

# What the manual pages and the installed headers cite by its path in this
# tree (examples/atomics.c, emu/*.md, docs/*.md, bench/store_probe.c),
# installed under the same path below DOCDIR, so that a citation read from
# an installed page is found there (rdmafast(7), FILES).
DOC_FILES := README.md CHANGELOG.md LICENSE $(wildcard emu/*.md) bench/store_probe.c \
             $(wildcard docs/*.md) tests/README.md tests/emu/README.md \
             $(wildcard examples/*.c examples/*.h) examples/README.md examples/run.sh

install-doc:
	@for f in $(DOC_FILES); do \
	    install -d $(DESTDIR)$(DOCDIR)/$$(dirname $$f) && \
	    install -m 644 $$f $(DESTDIR)$(DOCDIR)/$$f || exit 1; \
	done
	@echo "install-doc: $(words $(DOC_FILES)) files in $(DESTDIR)$(DOCDIR)"

uninstall-doc:
	rm -rf $(DESTDIR)$(DOCDIR)

# make install into a temporary DESTDIR with a PREFIX other than the build's,
# as "make; make install PREFIX=/opt/x" does, then use what was installed:
# the installed rfemu finds its own librfemu.so (not the build's prefix)
# and runs ibv_devices on the emulated HCA; every file the installed pages
# and headers cite is there; installed examples build from the installed
# headers and pkg-config file alone; make uninstall leaves nothing.
INSTALL_TEST_PREFIX := /opt/rdmafast-install-test
install-test: all
	@d=$$(mktemp -d "$${TMPDIR:-/tmp}/rdmafast-install.XXXXXX"); p=$$d$(INSTALL_TEST_PREFIX); \
	trap 'rm -rf "$$d"' EXIT; \
	$(MAKE) --no-print-directory install DESTDIR=$$d PREFIX=$(INSTALL_TEST_PREFIX) > $$d.log 2>&1 \
	    || { cat $$d.log; rm -f $$d.log; echo "install-test: make install failed"; exit 1; }; \
	rm -f $$d.log; \
	out=$$(env -u RFEMU_LIB RFEMU_STATE_DIR=$$d/state $$p/bin/rfemu -- ibv_devices 2>&1) \
	    || { echo "$$out"; echo "install-test: the installed rfemu failed"; exit 1; }; \
	echo "$$out" | grep -q mlx5_0 \
	    || { echo "$$out"; echo "install-test: the installed rfemu shows no mlx5_0"; exit 1; }; \
	missing=$$(cd $$p && for f in $$(grep -ho '\<\(examples\|emu\|docs\|bench\)/[A-Za-z0-9_.-]*\.\(c\|h\|md\)' \
	        share/man/man*/* include/rdmafast -r | sort -u); do \
	    [ -f share/doc/rdmafast/$$f ] || echo $$f; done); \
	[ -z "$$missing" ] || { echo "install-test: cited, not installed:" $$missing; exit 1; }; \
	export PKG_CONFIG_PATH=$$p/lib/pkgconfig; \
	pc="pkg-config --define-variable=includedir=$$p/include"; \
	for ex in rc_pingpong atomics; do \
	    $(CC) -std=c11 -D_DEFAULT_SOURCE $(WARN) -pedantic \
	        $$($$pc --cflags rdmafast) -o $$d/$$ex $$p/share/doc/rdmafast/examples/$$ex.c \
	        $$($$pc --libs rdmafast) \
	    || { echo "install-test: the installed $$ex.c does not build from the installed headers"; exit 1; }; \
	done; \
	$(MAKE) --no-print-directory uninstall DESTDIR=$$d PREFIX=$(INSTALL_TEST_PREFIX) > /dev/null; \
	left=$$(find $$p -type f); \
	[ -z "$$left" ] || { echo "install-test: uninstall left" $$left; exit 1; }; \
	echo "install-test: installed under DESTDIR, PREFIX=$(INSTALL_TEST_PREFIX): rfemu runs ibv_devices, every cited file is there, the installed examples build, uninstall removes it all"

clean:
	rm -rf $(BUILD)

include tests/tests.mk
include examples/examples.mk
include man/man.mk
include emu/emu.mk
include bench/bench.mk
include fuzz/fuzz.mk
include san/san.mk
include stress/stress.mk
include cross/aarch64.mk
