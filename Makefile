# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# rdmafast: one plain Makefile, no configure step.
#
#   make            build the emulated HCA, the examples and the tests
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
all:

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
# Unit tests: every tests/unit/test_*.c linked into one Criterion binary, built
# three ways (-O2, -O0, and -O1 with AddressSanitizer + UBSan) because
# results must not depend on optimisation and the sanitizers see what -O2
# hides.
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS := $(BUILD)/tests/O2/rftest $(BUILD)/tests/O0/rftest $(BUILD)/tests/san/rftest
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

$(BUILD)/tests/O2/rftest: TFLAGS := -O2 -g
$(BUILD)/tests/O0/rftest: TFLAGS := -O0 -g
$(BUILD)/tests/san/rftest: TFLAGS := $(SAN_FLAGS)
$(UNIT_BINS): $(UNIT_SRCS) $(HEADERS) tests/unit/rftest.h
	@mkdir -p $(@D)
	$(CC) -std=c11 $(TFLAGS) $(WARN) -pedantic $(RF_CPPFLAGS) $(VERBS_CPPFLAGS) $(CRIT_CFLAGS) \
	    -o $@ $(UNIT_SRCS) $(CRIT_LIBS) $(VERBS_LIBS)

# The checked build (-DRF_CHECKED, rdmafast/checked.h): every unit test
# again with the checks compiled in (their results must not change), and
# tests/unit/checked/, a suite per rule whose report hook records instead
# of aborting. RF_CHECKED_IDLE_POLLS lowered so that the no-ring test
# polls 64 times, not a million.
CHECKED_SRCS  := $(sort $(wildcard tests/unit/checked/test_*.c))
CHECKED_FLAGS := -DRF_CHECKED -DRF_CHECKED_IDLE_POLLS=64
CHECKED_UNIT  := $(BUILD)/tests/checked/rftest

$(CHECKED_UNIT): $(UNIT_SRCS) $(CHECKED_SRCS) $(HEADERS) tests/unit/rftest.h
	@mkdir -p $(@D)
	$(CC) -std=c11 -O2 -g $(CHECKED_FLAGS) $(WARN) -pedantic $(RF_CPPFLAGS) $(VERBS_CPPFLAGS) \
	    $(CRIT_CFLAGS) -o $@ $(UNIT_SRCS) $(CHECKED_SRCS) $(CRIT_LIBS) $(VERBS_LIBS)

UNIT_BINS += $(CHECKED_UNIT)

# Each suite of tests/unit/checked/ fails when its rule's check is left
# out (RF_CHECKED_SKIP), and no other suite does.
.PHONY: checked-selftest
checked-selftest:
	@mkdir -p $(BUILD)/tests/checked-skip
	@for r in $$(sed -n 's/^\tRF_CHK_\([A-Z_]*\)\( = 1\)*,.*/\1/p' include/rdmafast/checked.h); do \
	    i=$$((i + 1)); suite=checked_$$(echo $$r | tr A-Z a-z); \
	    bin=$(BUILD)/tests/checked-skip/$$suite; \
	    $(CC) -std=c11 -O1 $(CHECKED_FLAGS) -DRF_CHECKED_SKIP='(1U << '$$i')' $(WARN) -pedantic \
	        $(RF_CPPFLAGS) $(CRIT_CFLAGS) -o $$bin $(CHECKED_SRCS) $(CRIT_LIBS) || exit 1; \
	    failed=$$($$bin --jobs=2 2>&1 | sed -n 's/.*\[FAIL\] \([a-z_]*\)::.*/\1/p' | sort -u); \
	    if [ "$$failed" != "$$suite" ]; then \
	        echo "checked-selftest: without rule $$r failed: '$$failed', wanted only $$suite"; exit 1; \
	    fi; \
	    echo "checked-selftest: without its check, $$suite fails and no other suite"; \
	done

unit-bins: $(UNIT_BINS)

unit-test: $(UNIT_BINS)
	@for t in $(UNIT_BINS); do \
	    echo "== $$t"; tools/run-bounded.sh 300 $$t --jobs=2 || exit 1; \
	done

# ---------------------------------------------------------------------------
# Header checks: every public header included alone, first, into an empty
# translation unit, as C11, C17, C++11 and C++17, by gcc and by clang, and
# in the checked build (-DRF_CHECKED) as C11 by gcc and C++11 by clang.
HDR_STAMPS := $(patsubst include/%.h,$(BUILD)/hdrcheck/%.ok,$(HEADERS))
HDR_CSTD   := c11 c17
HDR_CXXSTD := c++11 c++17

$(BUILD)/hdrcheck/%.ok: include/%.h $(HEADERS)
	@mkdir -p $(@D)
	@printf '#include <%s>\n#include <%s>\nint rf_hdrcheck_$(subst /,_,$(subst .,_,$*));\n' "$*.h" "$*.h" > $(@:.ok=.c)
	@for cc in gcc clang; do for std in $(HDR_CSTD); do \
	    $$cc -std=$$std $(WARN) -pedantic $(RF_CPPFLAGS) -fsyntax-only $(@:.ok=.c) || exit 1; \
	done; done
	@for cxx in g++ clang++; do for std in $(HDR_CXXSTD); do \
	    $$cxx -std=$$std $(WARN) -pedantic $(RF_CPPFLAGS) -fsyntax-only -x c++ $(@:.ok=.c) || exit 1; \
	done; done
	@gcc -std=c11 -DRF_CHECKED $(WARN) -pedantic $(RF_CPPFLAGS) -fsyntax-only $(@:.ok=.c)
	@clang++ -std=c++11 -DRF_CHECKED $(WARN) -pedantic $(RF_CPPFLAGS) -fsyntax-only -x c++ $(@:.ok=.c)
	@echo "header ok: $*.h (gcc, clang; $(HDR_CSTD) $(HDR_CXXSTD); checked)"
	@touch $@

check-headers: $(HDR_STAMPS) $(BUILD)/hdrcheck/verbs_namespace.ok

# rdmafast/verbs.h under strict C11 and C++11: glibc's byte-order names lent
# to mlx5dv.h and taken back, its inline setters still linking and right.
$(BUILD)/hdrcheck/verbs_namespace.ok: tests/hdr/verbs_namespace.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) -std=c11 $(WARN) -pedantic $(RF_CPPFLAGS) -o $(@:.ok=) $< $(VERBS_LIBS) && $(@:.ok=)
	$(CXX) -std=c++11 $(WARN) -pedantic $(RF_CPPFLAGS) -x c++ -o $(@:.ok=)_cxx $< $(VERBS_LIBS) && $(@:.ok=)_cxx
	@touch $@

# The include graph of the public headers: no cycle, rq.h/srq.h/mad.h free
# of the send queue and the CQ, hw/ free of everything but hw/ (the rules
# are in the script, which first proves that each of them can fail).
.PHONY: check-includes
check-includes:
	@sh tools/check-includes.sh --self-test
	sh tools/check-includes.sh include

# ---------------------------------------------------------------------------
# End-to-end tests: rdmafast driving real libibverbs/libmlx5 queues, on the
# emulated HCA by default (RF_DEVICE=hw runs them on a real ConnectX).
E2E_SRCS := $(sort $(wildcard tests/e2e/*.c))
E2E_BIN  := $(BUILD)/tests/e2e/rfe2e
E2E_LIBS := $(VERBS_LIBS) -lrdmacm	# test_e2e_cm.c connects with rdma_cm
RF_RUN    = $(if $(filter hw,$(RF_DEVICE)),,$(EMU_LAUNCHER) --)

$(E2E_BIN): $(E2E_SRCS) $(HEADERS) $(wildcard tests/e2e/*.h)
	@mkdir -p $(@D)
	$(CC) -std=c11 $(CFLAGS) $(WARN) -pedantic $(RF_CPPFLAGS) $(VERBS_CPPFLAGS) $(CRIT_CFLAGS) \
	    -o $@ $(E2E_SRCS) $(CRIT_LIBS) $(E2E_LIBS)

# The same suite in the checked build (-DRF_CHECKED): a report that a
# test did not announce aborts it (tests/e2e/test_e2e_checked.c).
E2E_CHECKED := $(BUILD)/tests/e2e-checked/rfe2e

e2e-test: $(if $(E2E_SRCS),$(E2E_BIN) $(E2E_CHECKED)) $(if $(filter hw,$(RF_DEVICE)),,emu)
	$(if $(E2E_SRCS),timeout 600 $(RF_RUN) $(E2E_BIN) --jobs=1)
	$(if $(E2E_SRCS),timeout 600 $(RF_RUN) $(E2E_CHECKED) --jobs=1)

$(E2E_CHECKED): $(E2E_SRCS) $(HEADERS) $(wildcard tests/e2e/*.h)
	@mkdir -p $(@D)
	$(CC) -std=c11 $(CFLAGS) -DRF_CHECKED $(WARN) -pedantic $(RF_CPPFLAGS) $(VERBS_CPPFLAGS) \
	    $(CRIT_CFLAGS) -o $@ $(E2E_SRCS) $(CRIT_LIBS) $(E2E_LIBS)

# ---------------------------------------------------------------------------
# Examples: each examples/NAME.c is a standalone program, build/examples/NAME.
EXAMPLE_SRCS := $(sort $(wildcard examples/*.c))
EXAMPLE_BINS := $(patsubst examples/%.c,$(BUILD)/examples/%,$(EXAMPLE_SRCS))

$(BUILD)/examples/%: examples/%.c $(HEADERS) $(wildcard examples/*.h)
	@mkdir -p $(@D)
	$(CC) -std=c11 $(CFLAGS) $(WARN) -pedantic $(RF_CPPFLAGS) $(VERBS_CPPFLAGS) -o $@ $< $(VERBS_LIBS)

# cm_pingpong connects with the RDMA connection manager
$(BUILD)/examples/cm_pingpong: VERBS_LIBS += -lrdmacm

examples: $(EXAMPLE_BINS)
all: examples

# The showcase: two processes on the emulated HCA (examples/run.sh). The
# first command of a newcomer: it installs what it needs, as make test does.
run: deps
	@$(MAKE) --no-print-directory all
	@RF_BUILD=$(BUILD) sh examples/run.sh

# Every example on the emulated HCA (or RF_DEVICE=hw), the showcase's and
# those with more processes or longer waits (examples/run.sh --all).
.PHONY: examples-run
examples-run: examples $(if $(filter hw,$(RF_DEVICE)),,emu)
	@RF_BUILD=$(BUILD) sh examples/run.sh --all

# The examples again in the checked build (-DRF_CHECKED, rdmafast/checked.h),
# every one of them run (examples/run.sh --all): a broken rule aborts the
# program that broke it. Part of make test.
EXAMPLE_CHECKED_BINS := $(patsubst examples/%.c,$(BUILD)/examples-checked/%,$(EXAMPLE_SRCS))

$(BUILD)/examples-checked/%: examples/%.c $(HEADERS) $(wildcard examples/*.h)
	@mkdir -p $(@D)
	$(CC) -std=c11 $(CFLAGS) -DRF_CHECKED $(WARN) -pedantic $(RF_CPPFLAGS) $(VERBS_CPPFLAGS) \
	    -o $@ $< $(VERBS_LIBS)

$(BUILD)/examples-checked/cm_pingpong: VERBS_LIBS += -lrdmacm

.PHONY: examples-checked examples-checked-run
examples-checked: $(EXAMPLE_CHECKED_BINS)

examples-checked-run: examples-checked $(if $(filter hw,$(RF_DEVICE)),,emu)
	@RF_BUILD=$(BUILD) RF_EXAMPLES=$(BUILD)/examples-checked sh examples/run.sh --all

# The README's complete example, cut out between its marker comments,
# built as a user would build it (strict C11, no feature macros) and run
# as its two processes on the emulated HCA.
README_EX := $(BUILD)/readme/example

$(README_EX): README.md $(HEADERS)
	@mkdir -p $(@D)
	sed -n '/^<!-- example: begin -->$$/,/^<!-- example: end -->$$/p' README.md | \
	    sed '/^<!--/d; /^```/d' > $@.c
	@test -s $@.c || { echo "readme-test: no example between the markers in README.md"; exit 1; }
	$(CC) -std=c11 -Wall -Wextra -Werror -pedantic $(RF_CPPFLAGS) -o $@ $@.c $(VERBS_LIBS)

readme-test: $(README_EX) $(if $(filter hw,$(RF_DEVICE)),,emu)
	@port=$${RF_PORT:-$$(( 30000 + $$$$ % 20000 ))}; \
	timeout 60 $(RF_RUN) $(README_EX) $$port & spid=$$!; \
	timeout 60 $(RF_RUN) $(README_EX) $$port 127.0.0.1; crc=$$?; \
	wait $$spid; src=$$?; \
	if [ $$src -ne 0 ] || [ $$crc -ne 0 ]; then \
	    echo "readme-test: the README example failed (server $$src, client $$crc)"; exit 1; \
	fi; echo "readme-test: the README example builds and runs"

# ---------------------------------------------------------------------------
# Manual pages: man/NAME.SECTION.md (pandoc markdown, as rdma-core writes
# its pages) rendered to build/man/NAME.SECTION. pandoc 2.17 writes fonts
# mandoc does not know (\f[C], \f[V]) and a .PP after each heading, which
# mandoc -T lint reports; the sed and awk below write the same page in
# plain man(7), with .nh so that no identifier is hyphenated. Every name in
# a page's NAME line gets a one-line .so page at install time, so that
# man rf_sq_post_write finds rf_sq_post(3); man-test installs them and
# fails when man NAME finds nothing for a public name of the headers, or
# when two pages claim one name.
MAN_SRCS  := $(sort $(wildcard man/*.md))
MAN_PAGES := $(patsubst man/%.md,$(BUILD)/man/%,$(MAN_SRCS))
# The names a page documents: its NAME line, before the " - ".
MAN_NAMES  = sed -n '/^\# NAME/,/^\# /{/^[a-z_]/{s/ *\\* *-.*//;s/,/ /g;p;q}}'
# What man-test holds to a page each (tools/public-names.sh): detail/ is private.
PUBLIC_HEADERS := $(filter-out include/rdmafast/detail/%,$(HEADERS))
MAN_DATE  := $(shell d=$$(git log -1 --format=%cs -- man 2>/dev/null); echo $${d:-$$(date +%F)})

$(BUILD)/man/%: man/%.md
	@mkdir -p $(@D)
	pandoc -s -f markdown -t man -M date="$(MAN_DATE)" -M footer="rdmafast $(VERSION)" \
	    -M header="rdmafast" $< | \
	    sed -e 's/\\f\[[CV]\]/\\f[CR]/g' -e 's/\\f\[V\([BI]\)\]/\\f[C\1]/g' -e 's/^\.hy$$/.nh/' | \
	    awk 'prev ~ /^\.S[HS] / && $$0 == ".PP" { next } { print; prev = $$0 }' > $@

man: $(MAN_PAGES)

man-test: $(MAN_PAGES)
	mandoc -T lint -W warning $(MAN_PAGES)
	@for p in $(MAN_PAGES); do \
	    out=$$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l $$p 2>&1 >/dev/null); \
	    if [ -n "$$out" ]; then echo "$$p: $$out"; exit 1; fi; \
	done
	@echo "man-test: $(words $(MAN_PAGES)) pages render without warnings"
	@d=$$(mktemp -d "$${TMPDIR:-/tmp}/rdmafast-man.XXXXXX"); trap 'rm -rf "$$d"' EXIT; \
	$(MAKE) --no-print-directory install-man DESTDIR=$$d MANDIR=/man > /dev/null || exit 1; \
	dup=$$(for src in $(MAN_SRCS); do $(MAN_NAMES) $$src; done | tr " " "\n" | sort | uniq -d); \
	[ -z "$$dup" ] || { echo "man-test: in the NAME line of two pages:" $$dup; exit 1; }; \
	names=$$(tools/public-names.sh $(PUBLIC_HEADERS)); missing=""; \
	for n in $$names; do \
	    MANPATH=$$d/man man -w $$n > /dev/null 2>&1 || missing="$$missing $$n"; \
	done; \
	[ -z "$$missing" ] || { echo "man-test: man NAME finds no page for:$$missing"; \
	    echo "man-test: add each to the NAME line of the page that documents it"; exit 1; }; \
	echo "man-test: man NAME finds a page for each of the $$(echo $$names | wc -w) public names (tools/public-names.sh)"
all: man

# ---------------------------------------------------------------------------
# Benchmark: rdmafast against libmlx5 in one run (bench/rfbench.c). On the
# emulated HCA the device model stays off; the harness writes the CQEs.
BENCH_SRCS := bench/rfbench.c bench/setup.c bench/ops.c bench/cqe.c bench/report.c \
              bench/ucx.c
BENCH_BIN  := $(BUILD)/bench/rfbench
# UCX's rc_mlx5 as a peer when its UCT headers are there (bench/ucx.c);
# rfbench exports its mlx5dv_init_obj() so that UCX's calls come to it.
BENCH_UCX  := $(shell pkg-config --exists ucx-uct 2>/dev/null && echo yes)
BENCH_UCX_CFLAGS = $(if $(BENCH_UCX),-DRFBENCH_UCX $(shell pkg-config --cflags ucx-uct))
BENCH_UCX_EXPORT = -Wl,--export-dynamic-symbol=mlx5dv_init_obj
BENCH_UCX_LIBS   = $(if $(BENCH_UCX),$(shell pkg-config --libs ucx-uct) -ldl $(BENCH_UCX_EXPORT))
# -gdwarf-4 as in CFLAGS: valgrind reads it whatever the compiler.
BENCH_ENV   = $(if $(filter hw,$(RF_DEVICE)),,RFEMU_DEVICE=off)

$(BENCH_BIN): $(BENCH_SRCS) $(wildcard bench/*.h) $(HEADERS)
	@mkdir -p $(@D)
	$(CC) -std=c11 -O2 -gdwarf-4 $(WARN) -pedantic $(RF_CPPFLAGS) $(VERBS_CPPFLAGS) \
	    $(BENCH_UCX_CFLAGS) -o $@ $(BENCH_SRCS) $(VERBS_LIBS) $(BENCH_UCX_LIBS)

bench: $(BENCH_BIN) $(BUILD)/bench/emu_model $(if $(filter hw,$(RF_DEVICE)),,emu)
	rm -f $(BUILD)/bench/callgrind.out*
	$(BENCH_ENV) $(RF_RUN) valgrind -q --tool=callgrind --collect-atstart=no \
	    --callgrind-out-file=$(BUILD)/bench/callgrind.out $(BENCH_BIN) --instr
	$(BENCH_ENV) $(RF_RUN) $(BENCH_BIN) --callgrind $(BUILD)/bench/callgrind.out \
	    --json $(BUILD)/bench/report.json --svg $(BUILD)/bench/report.svg
	@echo
	timeout 300 $(RF_RUN) $(BUILD)/bench/emu_model 2

# rfbench's UCX column measured, and "-" when UCX fails to open; rdmafast
# within its instruction limits, counted under callgrind (make test).
BENCH_TEST_BIN := $(BUILD)/tests/bench/rfbench-test
$(BENCH_TEST_BIN): tests/bench/test_bench_ucx.c tests/bench/test_bench_instr.c
	@mkdir -p $(@D)
	$(CC) -std=c11 $(CFLAGS) $(WARN) -pedantic $(CRIT_CFLAGS) \
	    -DRFBENCH_BIN='"$(abspath $(BENCH_BIN))"' -o $@ $^ $(CRIT_LIBS)

bench-test: $(BENCH_TEST_BIN) $(BENCH_BIN) emu
	timeout 600 $(EMU_LAUNCHER) -- $(BENCH_TEST_BIN) --jobs=1

# The stores of a ringing post alone, without library or emulator
# (bench/store_probe.c; not part of make bench).
bench-probe:
	@mkdir -p $(BUILD)/bench
	$(CC) -std=c11 -O2 $(WARN) -pedantic -o $(BUILD)/bench/store_probe bench/store_probe.c
	$(BUILD)/bench/store_probe

# What this host puts under a two-process busy-polling round trip for each
# way of driving a device, with none of the device's work (bench/wake_probe.c;
# not part of make bench; docs/emu-measurements.md, "Wake-up latency").
bench-wake-probe:
	@mkdir -p $(BUILD)/bench
	$(CC) -std=gnu11 -O2 $(WARN) -pedantic -o $(BUILD)/bench/wake_probe bench/wake_probe.c -lpthread
	$(BUILD)/bench/wake_probe

# Real clients under rfemu, two hosts on 127.0.0.1 each: ucx_perftest's UCT
# am_lat/put_lat (rc_mlx5, dc_mlx5) against perftest's ib_send_lat and
# ib_write_lat, Open MPI's pml ucx against ob1/openib; one table of
# latencies, ratios and issue 29's goal (bench/clients.sh; not part of make
# bench; docs/emu-measurements.md, "Real clients (make bench-clients)").
bench-clients: emu
	RF_BUILD=$(BUILD) bench/clients.sh

# The same built by clang, in a tree of its own (a CC change alone rebuilds
# nothing): rfbench then holds the data path to gcc's limits plus 10%.
bench-clang:
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/clang CC=clang CXX=clang++ bench

# ---------------------------------------------------------------------------
# arm64 (not part of make test): cross/aarch64.mk, included at the end.

# ---------------------------------------------------------------------------
test: deps
	@$(MAKE) --no-print-directory check-headers check-includes check-layout asm-test unit-test \
	    checked-selftest emu-test e2e-test examples-checked-run bench-test man-test readme-test \
	    install-test

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

# Each page into man<section>/, and beside it a .so page for every other
# name it documents.
install-man: $(MAN_PAGES)
	@for src in $(MAN_SRCS); do \
	    page=$$(basename $$src .md); sec=$${page##*.}; name=$${page%.*}; \
	    d=$(DESTDIR)$(MANDIR)/man$$sec; install -d $$d; \
	    echo "install -m 644 $(BUILD)/man/$$page $$d/"; \
	    install -m 644 $(BUILD)/man/$$page $$d/ || exit 1; \
	    for n in $$($(MAN_NAMES) $$src); do \
	        [ "$$n" = "$$name" ] || echo ".so man$$sec/$$page" > $$d/$$n.$$sec || exit 1; \
	    done; \
	done

uninstall-man:
	@for src in $(MAN_SRCS); do \
	    page=$$(basename $$src .md); sec=$${page##*.}; d=$(DESTDIR)$(MANDIR)/man$$sec; \
	    for n in $$($(MAN_NAMES) $$src); do \
	        rm -f $$d/$$n.$$sec; \
	    done; \
	    rm -f $$d/$$page; \
	done

clean:
	rm -rf $(BUILD)

include emu/emu.mk
include fuzz/fuzz.mk
include san/san.mk
include stress/stress.mk
include cross/aarch64.mk
