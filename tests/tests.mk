# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# tests/: the suites of make test that are not the emulator's (emu/emu.mk
# builds tests/emu/ beside the library it tests): unit tests, header and
# include checks, the barriers in the disassembly, end-to-end tests, the
# README's example.  Included by the top Makefile.

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
# The barriers of the post, ring and poll paths, read in the disassembly of
# tests/asm/paths.c (tests/asm/check-barriers.sh, which first proves that
# doctored copies fail). qemu and the emulator run on the host's memory
# ordering and cannot miss a barrier; this test can. asm-test reads the host
# build (part of make test), asm-test-aarch64 the cross build
# (cross/aarch64.mk).
ASM_HOST := $(shell uname -m)

$(BUILD)/asm/$(ASM_HOST).dis: tests/asm/paths.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) -std=c11 -O2 $(WARN) -pedantic $(RF_CPPFLAGS) -c -o $(@:.dis=.o) $<
	objdump -d --no-show-raw-insn $(@:.dis=.o) > $@

.PHONY: asm-test
asm-test: $(BUILD)/asm/$(ASM_HOST).dis
	@sh tests/asm/check-barriers.sh --self-test $(ASM_HOST) $<

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
# Documents a reader can finish (issue 31): the README at most 300 lines,
# each emu/ document at most 800 (public headers, 600: check-includes.sh).
DOC_LIMITS := README.md:300 $(foreach f,$(wildcard emu/*.md),$(f):800)
.PHONY: doc-length-test
doc-length-test:
	@fail=0; for fl in $(DOC_LIMITS); do \
	    f=$${fl%:*}; max=$${fl##*:}; n=$$(wc -l < $$f); \
	    if [ $$n -gt $$max ]; then \
	        echo "doc-length-test: $$f has $$n lines, more than $$max"; fail=1; \
	    fi; \
	done; [ $$fail = 0 ] && echo "doc-length-test: README.md and emu/*.md within their lengths"

# ---------------------------------------------------------------------------
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
	@port=$${RF_PORT:-$$(( 10000 + $$$$ % 20000 ))}; \
	timeout 60 $(RF_RUN) $(README_EX) $$port & spid=$$!; \
	timeout 60 $(RF_RUN) $(README_EX) $$port 127.0.0.1; crc=$$?; \
	wait $$spid; src=$$?; \
	if [ $$src -ne 0 ] || [ $$crc -ne 0 ]; then \
	    echo "readme-test: the README example failed (server $$src, client $$crc)"; exit 1; \
	fi; echo "readme-test: the README example builds and runs"
