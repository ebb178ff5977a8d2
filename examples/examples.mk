# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# examples/: each examples/NAME.c a standalone program, built plain and
# checked, and run on the emulated HCA (examples/run.sh).  Included by the
# top Makefile.

EXAMPLE_SRCS := $(sort $(wildcard examples/*.c))
EXAMPLE_BINS := $(patsubst examples/%.c,$(BUILD)/examples/%,$(EXAMPLE_SRCS))

$(BUILD)/examples/%: examples/%.c $(HEADERS) $(wildcard examples/*.h)
	@mkdir -p $(@D)
	$(CC) -std=c11 $(CFLAGS) $(WARN) -pedantic $(RF_CPPFLAGS) $(VERBS_CPPFLAGS) -o $@ $< $(VERBS_LIBS)

# cm_pingpong connects with the RDMA connection manager
$(BUILD)/examples/cm_pingpong: VERBS_LIBS += -lrdmacm

examples: $(EXAMPLE_BINS)

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
