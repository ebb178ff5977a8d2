# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Stress (stress/stress.c; not part of make test). Included by the top
# Makefile after emu/emu.mk.
#
#   make stress                       10^6 messages over 8 threads (RC, UC,
#                                     UD, XRC), then RC and XRC on a lossy wire
#   make stress STRESS_OPS=100000     the short form for CI
STRESS_OPS      ?= 1000000
STRESS_LOSSY    ?= $(shell echo $$(( $(STRESS_OPS) / 10 )))
STRESS_THREADS  ?= 8
STRESS_BIN      := $(BUILD)/stress/stress
STRESS_FAULTS   := RFEMU_DROP=0.01 RFEMU_CORRUPT=0.01 RFEMU_FAULT_SEED=14

.PHONY: stress
$(STRESS_BIN): stress/stress.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) -std=c11 $(CFLAGS) $(WARN) -pedantic $(RF_CPPFLAGS) $(VERBS_CPPFLAGS) \
	    -o $@ $< $(VERBS_LIBS) -lpthread

stress: $(STRESS_BIN) emu
	timeout 900 $(EMU_LAUNCHER) -- $(STRESS_BIN) -n $(STRESS_OPS) -t $(STRESS_THREADS)
	$(STRESS_FAULTS) timeout 900 $(EMU_LAUNCHER) -- $(STRESS_BIN) -n $(STRESS_LOSSY) \
	    -t 4 -k rc,xrc
