# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Fuzzing: libFuzzer targets built by Debian's clang with AddressSanitizer
# and UndefinedBehaviorSanitizer (fuzz/README.md). Included by the top
# Makefile after emu/emu.mk.
#
#   make fuzz                    every target FUZZ_SECONDS (60) seconds
#   make fuzz FUZZ_SECONDS=15    the short form CI runs
#   make fuzz-cq_decode          one target
#   make fuzz-seeds              the seeds device_wqe and wire_packet write
#
# A finding (crash, sanitizer report, failed check, an input running longer
# than FUZZ_TIMEOUT seconds) stops that target's run, fails make fuzz, and leaves
# its reproducer as $(FUZZ_OUT)/findings/<target>/crash-* (or timeout-*);
# replay it with `$(FUZZ_OUT)/<target> <file>`. New inputs go to
# $(FUZZ_OUT)/corpus/<target>/; the committed corpus in fuzz/corpus/<target>/
# is only read.
#
# One block per target below, each adding itself to FUZZ_TARGETS: a new
# target is a new block.

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_TIMEOUT ?= 10
FUZZ_OUT     := $(BUILD)/fuzz
FUZZ_SAN     := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS  := -O1 -g -fno-omit-frame-pointer $(WARN) $(RF_CPPFLAGS)
FUZZ_TARGETS :=

.PHONY: fuzz fuzz-bins

# $(call fuzz_run,TARGET,EXTRA LIBFUZZER FLAGS)
define fuzz_run
	@mkdir -p $(FUZZ_OUT)/corpus/$(1) $(FUZZ_OUT)/findings/$(1)
	@echo "== fuzz $(1): $(FUZZ_SECONDS) s, findings in $(FUZZ_OUT)/findings/$(1)/"
	$(FUZZ_OUT)/$(1) -max_total_time=$(FUZZ_SECONDS) -timeout=$(FUZZ_TIMEOUT) \
	    -print_final_stats=1 -artifact_prefix=$(FUZZ_OUT)/findings/$(1)/ $(2) \
	    $(FUZZ_OUT)/corpus/$(1) fuzz/corpus/$(1)
endef

# ---- cq_decode: rf_cq_poll/peek/decode/advance over arbitrary CQ contents
FUZZ_TARGETS += cq_decode
$(FUZZ_OUT)/cq_decode: fuzz/cq_decode.c fuzz/input.h $(HEADERS)
	@mkdir -p $(@D)
	$(FUZZ_CC) -std=c11 $(FUZZ_CFLAGS) $(FUZZ_SAN) -o $@ $<
fuzz-cq_decode: $(FUZZ_OUT)/cq_decode
	$(call fuzz_run,cq_decode)

# ---- rf_api: posts, rings, polls, attaches on host-memory queues, checked
# against a model of what each call returns and writes (no device)
FUZZ_TARGETS += rf_api
$(FUZZ_OUT)/rf_api: fuzz/rf_api.c fuzz/input.h $(HEADERS)
	@mkdir -p $(@D)
	$(FUZZ_CC) -std=c11 $(FUZZ_CFLAGS) $(FUZZ_SAN) -o $@ $<
fuzz-rf_api: $(FUZZ_OUT)/rf_api
	$(call fuzz_run,rf_api)

# ---- device_wqe: the device model fed arbitrary WQEs and doorbell records.
# The emulator's objects are built again with the fuzzer's instrumentation
# and linked in; --export-dynamic lets libibverbs/libmlx5 bind to their
# open/write/fstat... as to librfemu.so's under LD_PRELOAD.
FUZZ_TARGETS  += device_wqe
FUZZ_EMU_OBJS := $(patsubst %.c,$(FUZZ_OUT)/emu/%.o,$(EMU_LIB_SRCS))
$(FUZZ_OUT)/emu/%.o: %.c $(EMU_HDRS) $(HEADERS)
	@mkdir -p $(@D)
	$(FUZZ_CC) -O1 -g -fno-omit-frame-pointer $(EMU_CFLAGS) \
	    -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -c -o $@ $<
$(FUZZ_OUT)/device_wqe: fuzz/device_wqe.c fuzz/emu_harness.h tests/emu/qp_bring_up.h $(FUZZ_EMU_OBJS)
	@mkdir -p $(@D)
	$(FUZZ_CC) -std=gnu11 $(FUZZ_CFLAGS) -D_GNU_SOURCE $(FUZZ_SAN) -Wl,--export-dynamic \
	    -o $@ $(filter-out %.h,$^) -libverbs -lmlx5 -ldl -lpthread
fuzz-device_wqe: $(FUZZ_OUT)/device_wqe
	$(call fuzz_run,device_wqe,-rss_limit_mb=4096)

# ---- wire_packet: arbitrary packets to a host over its wire socket
# (emulator linked in as for device_wqe, fuzz/emu_harness.h the setup both
# share; wire/packet.h for the packet header)
FUZZ_TARGETS += wire_packet
$(FUZZ_OUT)/wire_packet: fuzz/wire_packet.c fuzz/emu_harness.h tests/emu/qp_bring_up.h $(FUZZ_EMU_OBJS)
	@mkdir -p $(@D)
	$(FUZZ_CC) -std=gnu11 $(FUZZ_CFLAGS) -D_GNU_SOURCE -Iemu $(FUZZ_SAN) -Wl,--export-dynamic \
	    -o $@ $(filter-out %.h,$^) -libverbs -lmlx5 -ldl -lpthread
fuzz-wire_packet: $(FUZZ_OUT)/wire_packet
	$(call fuzz_run,wire_packet,-rss_limit_mb=4096)

# ---- cqe_oracle: the same CQE bytes through libmlx5's ibv_poll_cq() and
# rf_cq_poll(), every shared field compared (emulator linked in, as for
# device_wqe: libmlx5 needs a device context)
FUZZ_TARGETS += cqe_oracle
$(FUZZ_OUT)/cqe_oracle: fuzz/cqe_oracle.c fuzz/emu_harness.h tests/emu/qp_bring_up.h \
		tests/e2e/cqe_oracle.h $(FUZZ_EMU_OBJS) $(HEADERS)
	@mkdir -p $(@D)
	$(FUZZ_CC) -std=gnu11 $(FUZZ_CFLAGS) -D_GNU_SOURCE $(FUZZ_SAN) -Wl,--export-dynamic \
	    -o $@ fuzz/cqe_oracle.c $(FUZZ_EMU_OBJS) -libverbs -lmlx5 -ldl -lpthread
fuzz-cqe_oracle: $(FUZZ_OUT)/cqe_oracle
	$(call fuzz_run,cqe_oracle,-rss_limit_mb=4096)

# ---- kernel_cmd: the fake uverbs kernel on its command fd, alone (emu.mk's
# EMU_KERNEL_DIRS: no device model): arbitrary command sequences, pointers
# wild or into read-write, read-only, PROT_NONE and unmapped pages. Its
# interposers are the program's, as under LD_PRELOAD; LeakSanitizer checks
# that closing the fd releases everything. Subnet state: $RFEMU_STATE_DIR,
# else $(FUZZ_OUT)/state.
FUZZ_TARGETS += kernel_cmd
FUZZ_KERNEL_SRCS := $(foreach d,$(EMU_KERNEL_DIRS),$(sort $(wildcard emu/$(d)/*.c)))
$(FUZZ_OUT)/kernel_cmd: fuzz/kernel_cmd.c fuzz/kernel_arena.h $(FUZZ_KERNEL_SRCS) $(EMU_HDRS)
	@mkdir -p $(@D)
	$(FUZZ_CC) -std=gnu11 $(FUZZ_CFLAGS) $(FUZZ_SAN) -Iemu -D_GNU_SOURCE -o $@ \
	    fuzz/kernel_cmd.c $(FUZZ_KERNEL_SRCS) -ldl -lpthread
fuzz-kernel_cmd: $(FUZZ_OUT)/kernel_cmd
	@mkdir -p $(FUZZ_OUT)/state
	RFEMU_STATE_DIR=$${RFEMU_STATE_DIR:-$(abspath $(FUZZ_OUT))/state} \
	    $(MAKE) --no-print-directory fuzz-run-kernel_cmd
fuzz-run-kernel_cmd:
	$(call fuzz_run,kernel_cmd,-rss_limit_mb=2048)

# ---- kernel_ioctl: the same fake kernel on RDMA_VERBS_IOCTL (emu/kernel/
# ioctl.c): arbitrary calls, pointers as for kernel_cmd (fuzz/kernel_arena.h)
FUZZ_TARGETS += kernel_ioctl
$(FUZZ_OUT)/kernel_ioctl: fuzz/kernel_ioctl.c fuzz/kernel_arena.h $(FUZZ_KERNEL_SRCS) $(EMU_HDRS)
	@mkdir -p $(@D)
	$(FUZZ_CC) -std=gnu11 $(FUZZ_CFLAGS) $(FUZZ_SAN) -Iemu -D_GNU_SOURCE -o $@ \
	    fuzz/kernel_ioctl.c $(FUZZ_KERNEL_SRCS) -ldl -lpthread
fuzz-kernel_ioctl: $(FUZZ_OUT)/kernel_ioctl
	@mkdir -p $(FUZZ_OUT)/state
	RFEMU_STATE_DIR=$${RFEMU_STATE_DIR:-$(abspath $(FUZZ_OUT))/state} \
	    $(MAKE) --no-print-directory fuzz-run-kernel_ioctl
fuzz-run-kernel_ioctl:
	$(call fuzz_run,kernel_ioctl,-rss_limit_mb=2048)

# ---- cm_ucma: the fake rdma_cm (emu/cm/) on two event channels: arbitrary
# ucma commands, pointers as for kernel_cmd (fuzz/kernel_arena.h); closing
# the channels destroys everything (LeakSanitizer). Connections go through
# the subnet in $RFEMU_STATE_DIR, else $(FUZZ_OUT)/state.
FUZZ_TARGETS += cm_ucma
$(FUZZ_OUT)/cm_ucma: fuzz/cm_ucma.c fuzz/kernel_arena.h $(FUZZ_KERNEL_SRCS) $(EMU_HDRS)
	@mkdir -p $(@D)
	$(FUZZ_CC) -std=gnu11 $(FUZZ_CFLAGS) $(FUZZ_SAN) -Iemu -D_GNU_SOURCE -o $@ \
	    fuzz/cm_ucma.c $(FUZZ_KERNEL_SRCS) -ldl -lpthread
fuzz-cm_ucma: $(FUZZ_OUT)/cm_ucma
	@mkdir -p $(FUZZ_OUT)/state
	RFEMU_STATE_DIR=$${RFEMU_STATE_DIR:-$(abspath $(FUZZ_OUT))/state} \
	    $(MAKE) --no-print-directory fuzz-run-cm_ucma
fuzz-run-cm_ucma:
	$(call fuzz_run,cm_ucma,-rss_limit_mb=2048)

# ---- umad: /dev/infiniband/umad0 (emu/mad/umad.c) and the MAD agents,
# alone with the fake kernel: arbitrary registrations, MADs and reads on two
# files; closing them frees everything (LeakSanitizer). Subnet state:
# $RFEMU_STATE_DIR, else $(FUZZ_OUT)/state.
FUZZ_TARGETS += umad
$(FUZZ_OUT)/umad: fuzz/umad.c fuzz/kernel_arena.h $(FUZZ_KERNEL_SRCS) $(EMU_HDRS)
	@mkdir -p $(@D)
	$(FUZZ_CC) -std=gnu11 $(FUZZ_CFLAGS) $(FUZZ_SAN) -Iemu -D_GNU_SOURCE -o $@ \
	    fuzz/umad.c $(FUZZ_KERNEL_SRCS) -ldl -lpthread
fuzz-umad: $(FUZZ_OUT)/umad
	@mkdir -p $(FUZZ_OUT)/state
	RFEMU_STATE_DIR=$${RFEMU_STATE_DIR:-$(abspath $(FUZZ_OUT))/state} \
	    $(MAKE) --no-print-directory fuzz-run-umad
fuzz-run-umad:
	$(call fuzz_run,umad,-rss_limit_mb=2048)

# ---- the seeds device_wqe and wire_packet write themselves (with this
# process's keys and QPNs, host 1 of an empty subnet): `make fuzz-seeds`
# writes them into fuzz/corpus/ beside the campaigns' merged inputs (named
# by their SHA-1), `make fuzz-check-seeds` (part of make fuzz) fails when a
# committed seed is not what the target writes today, as after a change to
# the packet or WQE layout.
FUZZ_SEEDED := device_wqe wire_packet
.PHONY: fuzz-seeds fuzz-check-seeds
# $(call fuzz_write_seeds,DIR): every FUZZ_SEEDED target's seeds into DIR/<target>/
define fuzz_write_seeds
	@for t in $(FUZZ_SEEDED); do \
	    st=$$(mktemp -d) && mkdir -p $(1)/$$t && \
	    RFEMU_STATE_DIR=$$st FUZZ_WRITE_SEEDS=$(1)/$$t $(FUZZ_OUT)/$$t; \
	    rc=$$?; rm -rf $$st; [ $$rc = 0 ] || exit 1; \
	done
endef
fuzz-seeds: $(addprefix $(FUZZ_OUT)/,$(FUZZ_SEEDED))
	$(call fuzz_write_seeds,fuzz/corpus)
fuzz-check-seeds: $(addprefix $(FUZZ_OUT)/,$(FUZZ_SEEDED))
	@rm -rf $(FUZZ_OUT)/seeds
	$(call fuzz_write_seeds,$(FUZZ_OUT)/seeds)
	@for t in $(FUZZ_SEEDED); do \
	    for f in $(FUZZ_OUT)/seeds/$$t/*; do \
	        cmp -s $$f fuzz/corpus/$$t/$${f##*/} || \
	        { echo "fuzz/corpus/$$t/$${f##*/}: not what $$t writes today (make fuzz-seeds)"; exit 1; }; \
	    done; \
	done

# ---------------------------------------------------------------------------
fuzz-bins: $(addprefix $(FUZZ_OUT)/,$(FUZZ_TARGETS))
# Every target runs even after another's finding; the target fails if any had one.
fuzz: deps
	@$(MAKE) --no-print-directory fuzz-bins
	@$(MAKE) --no-print-directory fuzz-check-seeds
	@fail=""; for t in $(FUZZ_TARGETS); do \
	    $(MAKE) --no-print-directory fuzz-$$t || fail="$$fail $$t"; \
	done; \
	if [ -n "$$fail" ]; then echo "fuzz: findings in:$$fail (see $(FUZZ_OUT)/findings/)"; exit 1; fi
