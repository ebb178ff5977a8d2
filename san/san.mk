# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Sanitizer builds of the emulator and of the tests that run on it
# (san/README.md). Included by the top Makefile after emu/emu.mk.
#
#   make sanitize        ASan + UBSan: librfemu.so, rfemu, tests/e2e and
#                        tests/emu under build/san/, then run
#   make sanitize-tsan   ThreadSanitizer: the emulator linked into the
#                        multi-threaded stress test under build/tsan/, run
#
# gcc's shared sanitizer runtimes: an LD_PRELOAD library built with ASan
# needs libasan first in LD_PRELOAD (before librfemu.so, and before libc
# for programs not built with ASan, such as Debian's ibv_*_pingpong that the
# emulator tests exec). The launcher puts its library first, so these runs
# set LD_PRELOAD themselves.

SAN_CC      ?= gcc
SAN_OUT     := $(BUILD)/san
TSAN_OUT    := $(BUILD)/tsan
SAN_CF      := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
TSAN_CF     := -O1 -g -fno-omit-frame-pointer -fsanitize=thread
SAN_ASAN_RT  = $(shell $(SAN_CC) -print-file-name=libasan.so)
# leaks of libibverbs/libmlx5/Criterion themselves are not ours
SAN_ENV      = ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1 \
               LSAN_OPTIONS=suppressions=$(abspath san/lsan.supp):print_suppressions=0 \
               UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
               LD_PRELOAD=$(SAN_ASAN_RT):$(abspath $(SAN_OUT)/librfemu.so)
TSAN_ENV     = TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$(abspath san/tsan.supp)

SAN_EMU_OBJS   := $(patsubst %.c,$(SAN_OUT)/emu/%.o,$(EMU_LIB_SRCS))
TSAN_EMU_OBJS  := $(patsubst %.c,$(TSAN_OUT)/emu/%.o,$(EMU_LIB_SRCS))
SAN_LAUNCHER_SRC := emu/launcher/rfemu.c
SAN_E2E_BIN    := $(SAN_OUT)/tests/e2e/rfe2e
SAN_EMU_TESTS  := $(patsubst %.c,$(SAN_OUT)/%,$(filter-out $(EMU_TEST_HELPER_SRCS),$(EMU_TEST_SRCS)))

.PHONY: sanitize sanitize-bins sanitize-tsan

$(SAN_OUT)/emu/%.o: %.c $(EMU_HDRS) $(HEADERS)
	@mkdir -p $(@D)
	$(SAN_CC) $(SAN_CF) $(EMU_CFLAGS) -c -o $@ $<
$(TSAN_OUT)/emu/%.o: %.c $(EMU_HDRS) $(HEADERS)
	@mkdir -p $(@D)
	$(SAN_CC) $(TSAN_CF) $(EMU_CFLAGS) -c -o $@ $<
$(SAN_OUT)/librfemu.so: $(SAN_EMU_OBJS) emu/librfemu.map
	$(SAN_CC) $(SAN_CF) $(EMU_LIB_LDFLAGS) -o $@ $(SAN_EMU_OBJS) -ldl -lpthread
$(SAN_OUT)/rfemu: $(SAN_LAUNCHER_SRC)
	@mkdir -p $(@D)
	$(SAN_CC) $(SAN_CF) -std=gnu11 -D_GNU_SOURCE $(WARN) -o $@ $<

$(SAN_E2E_BIN): $(E2E_SRCS) $(HEADERS) $(wildcard tests/e2e/*.h)
	@mkdir -p $(@D)
	$(SAN_CC) -std=c11 $(SAN_CF) $(WARN) -pedantic $(RF_CPPFLAGS) $(VERBS_CPPFLAGS) \
	    $(CRIT_CFLAGS) -o $@ $(E2E_SRCS) $(CRIT_LIBS) $(E2E_LIBS)
$(SAN_OUT)/tests/emu/%: tests/emu/%.c $(wildcard tests/emu/*.h tests/emu/*/*.h) $(EMU_HDRS)
	@mkdir -p $(@D)
	$(SAN_CC) $(SAN_CF) -std=gnu11 $(WARN) -Itests/emu -Iemu -Iinclude -o $@ $< $(CRITERION_FLAGS) \
	    -lrdmacm -libverbs -lmlx5 -lpthread

# The helper the tests exec as a second host is the ordinary build: with
# libasan and the sanitized librfemu.so preloaded, the emulator in it is
# checked all the same (an ASan-built helper aborted when exec'd from a
# Criterion worker; not yet understood).
sanitize-bins: $(SAN_OUT)/librfemu.so $(SAN_OUT)/rfemu $(SAN_E2E_BIN) $(SAN_EMU_TESTS) \
               $(EMU_TEST_HELPERS)

# Every binary runs even after a failure; the target fails if any did.  A
# binary that times out runs once more (tools/run-bounded.sh says why).
SAN_TIMEOUT ?= 600

sanitize: deps
	@$(MAKE) --no-print-directory sanitize-bins
	@$(SAN_OUT)/rfemu --help >/dev/null
	@fail=0; for t in $(SAN_E2E_BIN) $(SAN_EMU_TESTS); do \
	    echo "== sanitize $$t"; \
	    $(SAN_ENV) RFEMU_TEST_HELPER_DIR=$(BUILD)/tests/emu/$$(basename $$(dirname $$t)) \
	        tools/run-bounded.sh $(SAN_TIMEOUT) $$t --jobs 1 || fail=1; \
	done; exit $$fail

# ThreadSanitizer on the emulator: the engine thread against the command
# path of every application thread (both in the emulator, instrumented).
# libtsan in LD_PRELOAD before librfemu.so does not work (its open()
# interceptor bypasses the preloaded one: ibv_open_device() fails with
# ENOENT), so the stress test is linked with the instrumented emulator
# objects instead, as fuzz/device_wqe is. stress.c itself is not
# instrumented: its stores into queue memory are the device's DMA partner,
# which no lock orders on hardware either.
TSAN_STRESS := $(TSAN_OUT)/stress
$(TSAN_OUT)/stress.o: stress/stress.c $(HEADERS)
	@mkdir -p $(@D)
	$(SAN_CC) -std=c11 -O1 -g $(WARN) -pedantic $(RF_CPPFLAGS) $(VERBS_CPPFLAGS) -c -o $@ $<
$(TSAN_STRESS): $(TSAN_OUT)/stress.o $(TSAN_EMU_OBJS)
	$(SAN_CC) -fsanitize=thread -Wl,--export-dynamic -o $@ $^ $(VERBS_LIBS) -ldl -lpthread

sanitize-tsan: deps $(TSAN_STRESS)
	$(TSAN_ENV) timeout 900 $(TSAN_STRESS) -n 20000 -t 8
	$(TSAN_ENV) RFEMU_DROP=0.02 RFEMU_FAULT_SEED=3 timeout 900 $(TSAN_STRESS) -n 5000 -t 4 -k rc,xrc
