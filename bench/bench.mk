# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# bench/: the data path against libmlx5 and UCX (rfbench), the device model
# end to end (emu_model), probes and real clients.  Included by the top
# Makefile after emu/emu.mk.

# Benchmark: rdmafast against libmlx5 in one run (bench/rfbench.c). On the
# emulated HCA the device model stays off; the harness writes the CQEs.
BENCH_SRCS := bench/rfbench.c bench/setup.c bench/ops.c bench/cqe.c bench/report.c \
              bench/ucx.c bench/fleet.c bench/tm.c
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

# The cache simulation counts the lines a post or poll of the --fleet rows
# (bench/fleet.c) misses after the eviction: L1d and L2 as on the Xeon of
# docs/benchmark-history.md, the L2 as the last level, whatever the host.
BENCH_CACHE_SIM = --cache-sim=yes --I1=32768,8,64 --D1=49152,12,64 --LL=2097152,16,64

bench: $(BENCH_BIN) $(BUILD)/bench/emu_model $(if $(filter hw,$(RF_DEVICE)),,emu)
	rm -f $(BUILD)/bench/callgrind.out*
	$(BENCH_ENV) $(RF_RUN) valgrind -q --tool=callgrind --collect-atstart=no $(BENCH_CACHE_SIM) \
	    --callgrind-out-file=$(BUILD)/bench/callgrind.out $(BENCH_BIN) --instr --fleet
	$(BENCH_ENV) $(RF_RUN) $(BENCH_BIN) --callgrind $(BUILD)/bench/callgrind.out \
	    --json $(BUILD)/bench/report.json --svg $(BUILD)/bench/report.svg --fleet
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

# The device model end to end (docs/emu-measurements.md).
# Not a test: the end-to-end figures beside their goals (bench/emu_model.c).
.PHONY: bench-emu
$(BUILD)/bench/emu_model: bench/emu_model.c bench/bring_up.h emu/wire/stats.h $(HEADERS)
	@mkdir -p $(@D)
	$(CC) -O2 -g -std=gnu11 $(WARN) -D_GNU_SOURCE $(RF_CPPFLAGS) -Iemu -o $@ $< -libverbs -lmlx5 -ldl

bench-emu: emu $(BUILD)/bench/emu_model
	timeout 120 $(EMU_LAUNCHER) -- $(BUILD)/bench/emu_model 2
