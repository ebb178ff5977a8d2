# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# libFuzzer targets, run by `make fuzz`: each for FUZZ_SECONDS (default 60)
# from its seed corpus fuzz/corpus/NAME/, new inputs kept in
# $(BUILD)/fuzz/NAME.corpus/. A finding stops the run with a non-zero exit
# and leaves the reproducer in $(BUILD)/fuzz/NAME.artifacts/; replay it with
# `$(BUILD)/fuzz/NAME FILE`. Built by clang with ASan, UBSan (fatal) and
# LeakSanitizer. One block per target below; each adds itself to `fuzz`.
# Included by the top Makefile (BUILD, RF_CPPFLAGS).

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_CFLAGS  := -std=gnu11 -g -O1 -fno-omit-frame-pointer \
                -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_RUN_FLAGS := -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
                  -print_final_stats=1

.PHONY: fuzz

# ---- kernel_cmd: the fake uverbs kernel on its command fd -----------------
# The fake kernel's folders (emu.mk's EMU_KERNEL_DIRS: no device model, no
# launcher) linked into the fuzzer: its interposers are the program's, as
# under LD_PRELOAD. Its subnet state goes to $RFEMU_STATE_DIR, else
# build/fuzz/state.
FUZZ_KERNEL_SRCS := $(foreach d,$(EMU_KERNEL_DIRS),$(sort $(wildcard emu/$(d)/*.c)))

$(FUZZ_DIR)/kernel_cmd: fuzz/kernel_cmd.c $(FUZZ_KERNEL_SRCS) $(EMU_HDRS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(RF_CPPFLAGS) -Iemu -D_GNU_SOURCE -o $@ \
	    fuzz/kernel_cmd.c $(FUZZ_KERNEL_SRCS) -ldl -lpthread

.PHONY: fuzz-kernel_cmd
fuzz-kernel_cmd: $(FUZZ_DIR)/kernel_cmd
	@mkdir -p $(FUZZ_DIR)/kernel_cmd.corpus $(FUZZ_DIR)/kernel_cmd.artifacts $(FUZZ_DIR)/state
	RFEMU_STATE_DIR=$${RFEMU_STATE_DIR:-$(abspath $(FUZZ_DIR))/state} \
	    $(FUZZ_DIR)/kernel_cmd $(FUZZ_RUN_FLAGS) \
	    -artifact_prefix=$(FUZZ_DIR)/kernel_cmd.artifacts/ \
	    $(FUZZ_DIR)/kernel_cmd.corpus fuzz/corpus/kernel_cmd

fuzz: fuzz-kernel_cmd
