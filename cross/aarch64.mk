# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# arm64: everything make builds, cross-built with Debian's aarch64-linux-gnu
# toolchain against the arm64 multiarch libraries, and run under qemu-user.
# Included by the top Makefile after emu/emu.mk.
#
#   make deps-aarch64    (root) the arm64 architecture, the packages, binfmt
#   make test-aarch64    build, then run the unit, emulator and e2e tests and
#                        the examples for arm64; prints what passed
#
# How it runs: qemu-user through binfmt_misc, not an explicit
# "qemu-aarch64 PROG". The emulator's launcher sets LD_PRELOAD and execs its
# command, the tests exec helpers and Debian's ibv_*_pingpong, and
# Criterion's runner starts its test workers: every one of those execs an
# arm64 ELF, which the kernel can only start when binfmt names qemu for it.
# With binfmt, Criterion's own runner works, so the unit tests use it too.
# qemu passes its host environment to the guest, so the arm64 LD_PRELOAD
# reaches the arm64 process (and the x86 qemu binary's own loader, which
# refuses the arm64 library with one "cannot be preloaded" line; the test
# script filters those lines).
#
# Not everything can be installed side by side. libcriterion3 needs
# libnanomsg5, and ibverbs-utils ships /usr/bin programs: neither is
# Multi-Arch "same", so installing the arm64 package would remove the amd64
# one (and break make test). Those are fetched with apt-get download and
# unpacked into $(AARCH64_ROOT) instead, found through an rpath and PATH.

AARCH64      := aarch64-linux-gnu
AARCH64_DIR  ?= $(BUILD)/cross/aarch64
AARCH64_ROOT  = $(AARCH64_DIR)/root
AARCH64_LIBS  = $(abspath $(AARCH64_ROOT))/usr/lib/$(AARCH64)

# installed with apt (Multi-Arch: same, or amd64 tools)
DEPS_AARCH64_PKGS := gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu \
                     qemu-user qemu-user-binfmt binfmt-support \
                     libc6:arm64 libibverbs-dev:arm64 ibverbs-providers:arm64 \
                     librdmacm-dev:arm64 libgit2-1.5:arm64 libffi8:arm64
# unpacked under $(AARCH64_ROOT): they cannot be co-installed with amd64
AARCH64_UNPACK_PKGS := libcriterion3:arm64 libnanomsg5:arm64 ibverbs-utils:arm64 \
                       rdmacm-utils:arm64

# DT_RPATH (not RUNPATH) so that libcriterion finds libnanomsg too.
AARCH64_CRIT  = -L$(AARCH64_LIBS) -l:libcriterion.so.3 \
                -Wl,--disable-new-dtags,-rpath,$(AARCH64_LIBS),-rpath-link,$(AARCH64_LIBS)

# The normal rules, with another compiler, build directory and Criterion.
AARCH64_MAKE = $(MAKE) --no-print-directory BUILD=$(AARCH64_DIR) AARCH64_DIR=$(AARCH64_DIR) \
               CC=$(AARCH64)-gcc CRIT_CFLAGS= CRIT_LIBS='$(AARCH64_CRIT)' \
               CRITERION_FLAGS='$(AARCH64_CRIT)'
AARCH64_X     = $(patsubst $(BUILD)/%,$(AARCH64_DIR)/%,$(1))
AARCH64_BINS  = $(call AARCH64_X,$(EMU_LIB) $(EMU_LAUNCHER) $(EMU_TEST_BINS) \
                  $(EMU_TEST_HELPERS) $(E2E_BIN) $(EXAMPLE_BINS) $(BUILD)/tests/O2/rftest)

.PHONY: deps-aarch64 build-aarch64 test-aarch64 aarch64-root

# As root: add the architecture (once), install what is missing, mount
# binfmt_misc and enable qemu for arm64 ELF files. Each step looks first,
# so a second run changes nothing.
deps-aarch64:
	@missing=""; for p in $(DEPS_AARCH64_PKGS); do \
	    dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' \
	        || missing="$$missing $$p"; \
	done; \
	e=/proc/sys/fs/binfmt_misc/qemu-aarch64; \
	if [ "$$(id -u)" != 0 ]; then \
	    [ -z "$$missing" ] && grep -qx enabled $$e 2>/dev/null && exit 0; \
	    echo "deps-aarch64: missing:$${missing:- none}; binfmt for qemu-aarch64:" \
	         "$$(head -1 $$e 2>/dev/null || echo absent)"; \
	    echo "deps-aarch64: run as root: make deps-aarch64 (adds the arm64 architecture," \
	         "installs the packages, enables binfmt for qemu-aarch64)"; exit 1; \
	fi; \
	update=$$RF_APT_UPDATED; \
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then \
	    echo "deps-aarch64: dpkg --add-architecture arm64"; \
	    dpkg --add-architecture arm64 || exit 1; update=""; \
	fi; \
	if [ -n "$$missing" ]; then \
	    echo "deps-aarch64: installing$$missing"; \
	    { [ -n "$$update" ] || apt-get update -qq; } && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing || exit 1; \
	fi; \
	if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then \
	    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || exit 1; \
	fi; \
	if [ -e $$e ] && ! grep -qx enabled $$e; then echo 1 > $$e || exit 1; fi; \
	if [ ! -e $$e ]; then \
	    echo "deps-aarch64: update-binfmts --enable qemu-aarch64"; \
	    update-binfmts --enable qemu-aarch64 || exit 1; \
	fi

# apt-get download runs as _apt when it can write the directory.
$(AARCH64_ROOT)/.unpacked:
	@rm -rf $(AARCH64_DIR)/debs $(AARCH64_ROOT)
	@mkdir -p $(AARCH64_DIR)/debs $(AARCH64_ROOT)
	@chmod 777 $(AARCH64_DIR)/debs
	cd $(AARCH64_DIR)/debs && apt-get download -q $(AARCH64_UNPACK_PKGS)
	@for d in $(AARCH64_DIR)/debs/*.deb; do dpkg-deb -x $$d $(AARCH64_ROOT) || exit 1; done
	@touch $@

aarch64-root: $(AARCH64_ROOT)/.unpacked

# Each public header alone, as C11 with -pedantic, by the cross compiler:
# the arm64 branches of hw/ compile.
$(AARCH64_DIR)/headers.ok: $(HEADERS)
	@mkdir -p $(@D)
	@for h in $(HEADERS:include/%=%); do \
	    printf '#include <%s>\nint rf_hdrcheck;\n' $$h | \
	    $(AARCH64)-gcc -std=c11 $(WARN) -pedantic $(RF_CPPFLAGS) -fsyntax-only -x c - || exit 1; \
	done
	@echo "header ok: $(words $(HEADERS)) headers for $(AARCH64)"
	@touch $@

build-aarch64: deps-aarch64 aarch64-root $(AARCH64_DIR)/headers.ok
	+@$(AARCH64_MAKE) $(AARCH64_BINS)

test-aarch64: build-aarch64 asm-test-aarch64
	@RF_BUILD=$(AARCH64_DIR) RF_AARCH64_ROOT=$(AARCH64_ROOT) \
	    RF_UNIT='$(call AARCH64_X,$(BUILD)/tests/O2/rftest)' \
	    RF_EMU_TESTS='$(call AARCH64_X,$(EMU_TEST_BINS))' RF_E2E='$(call AARCH64_X,$(E2E_BIN))' \
	    sh cross/test-aarch64.sh

# ---------------------------------------------------------------------------
# The barriers in the cross build's disassembly (the host's: asm-test in
# tests/tests.mk, which says how).
$(BUILD)/asm/aarch64-cross.dis: tests/asm/paths.c $(HEADERS)
	@mkdir -p $(@D)
	$(AARCH64)-gcc -std=c11 -O2 $(WARN) -pedantic $(RF_CPPFLAGS) -c -o $(@:.dis=.o) $<
	$(AARCH64)-objdump -d --no-show-raw-insn $(@:.dis=.o) > $@

.PHONY: asm-test-aarch64
asm-test-aarch64: $(BUILD)/asm/aarch64-cross.dis
	@sh tests/asm/check-barriers.sh --self-test aarch64 $<
