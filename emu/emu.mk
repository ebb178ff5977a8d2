# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# The emulated mlx5 HCA: librfemu.so (an LD_PRELOAD library: the fake uverbs
# kernel and the device model) and its launcher rfemu.  Included by the top Makefile,
# which defines BUILD, CC, CFLAGS, WARN, PREFIX, LIBDIR, BINDIR, DESTDIR.

EMU_LIB      := $(BUILD)/librfemu.so
EMU_LAUNCHER := $(BUILD)/rfemu
EMU_LIBDIR   := $(LIBDIR)/rdmafast

# One folder per layer (emu/DESIGN.md).  The device model is the folders
# device/ and wire/; EMU_NO_DEV=1 builds the rest alone, with the weak no-op
# device of emu/kernel/hooks.c.
EMU_KERNEL_DIRS := base subnet kernel mad cm interpose
EMU_DEVICE_DIRS := wire device
EMU_LIB_DIRS := $(EMU_KERNEL_DIRS) $(if $(filter 1,$(EMU_NO_DEV)),,$(EMU_DEVICE_DIRS))
EMU_LIB_SRCS := $(foreach d,$(EMU_LIB_DIRS),$(sort $(wildcard emu/$(d)/*.c)))
EMU_HDRS     := $(wildcard emu/*/*.h)
EMU_LIB_OBJS := $(patsubst emu/%.c,$(BUILD)/emu/%.o,$(EMU_LIB_SRCS))
EMU_CFLAGS   := -std=gnu11 $(WARN) $(RF_CPPFLAGS) -Iemu -D_GNU_SOURCE -fPIC -fvisibility=default

# tests/emu/ mirrors emu/: kernel/ tests the fake kernel's commands and
# rules, device/ the device model, cm/ the connection manager;
# tests/emu/emu_test.h serves them all; tests/emu/qp_bring_up.h (plain
# libibverbs, no rdmafast) brings up their QPs, the helpers' and those of
# the fuzz harness (fuzz/emu_harness.h).
EMU_TEST_DIRS := kernel device cm
EMU_TEST_SRCS := $(foreach d,$(EMU_TEST_DIRS),$(sort $(wildcard tests/emu/$(d)/*.c)))
# helper_*.c: programs the tests start as other hosts, built beside them
EMU_TEST_HELPER_SRCS := $(foreach d,$(EMU_TEST_DIRS),$(wildcard tests/emu/$(d)/helper_*.c))
EMU_TEST_BINS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(filter-out $(EMU_TEST_HELPER_SRCS),$(EMU_TEST_SRCS)))
EMU_TEST_HELPERS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(EMU_TEST_HELPER_SRCS))
EMU_TEST_TIMEOUT ?= 300
CRITERION_FLAGS = $(shell pkg-config --cflags --libs criterion 2>/dev/null || echo -lcriterion)

.PHONY: emu emu-test check-layout install-emu uninstall-emu
emu: $(EMU_LIB) $(EMU_LAUNCHER)

$(BUILD)/emu/%.o: emu/%.c $(EMU_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(EMU_CFLAGS) -MMD -MP -c -o $@ $<

# What the library exports to the program it is preloaded into: emu/librfemu.map.
EMU_LIB_LDFLAGS := -shared -Wl,-z,defs -Wl,--version-script=emu/librfemu.map
$(EMU_LIB): $(EMU_LIB_OBJS) emu/librfemu.map
	$(CC) $(CFLAGS) $(EMU_LIB_LDFLAGS) -o $@ $(EMU_LIB_OBJS) -ldl -lpthread

# The launcher finds its library beside itself (the build tree), else at
# BINDIR's path to EMU_LIBDIR from its own directory (installed, under
# whatever PREFIX: make, then make install PREFIX=/opt/x), else at the
# EMU_LIBDIR of the build.
EMU_LIB_RELATIVE = $(shell realpath -m --relative-to='$(BINDIR)' '$(EMU_LIBDIR)')/librfemu.so

$(EMU_LAUNCHER): emu/launcher/rfemu.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 -D_GNU_SOURCE $(WARN) \
		-DRFEMU_LIB_DEFAULT='"$(EMU_LIBDIR)/librfemu.so"' \
		-DRFEMU_LIB_RELATIVE='"$(EMU_LIB_RELATIVE)"' -o $@ $<

# Tests and helpers may include emu/'s wire/packet.h and wire/stats.h, which
# depend on nothing else: a test forges packets and reads the counters.
$(BUILD)/tests/emu/%: tests/emu/%.c $(wildcard tests/emu/*.h tests/emu/*/*.h) $(EMU_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 $(WARN) -Itests/emu -Iemu -Iinclude -o $@ $< \
		$(CRITERION_FLAGS) -lrdmacm -libverbs -lmlx5 -lpthread

$(EMU_TEST_HELPERS): $(BUILD)/tests/emu/%: tests/emu/%.c tests/emu/qp_bring_up.h $(EMU_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 $(WARN) -Iemu -o $@ $< -lrdmacm -libverbs -lmlx5

# Each test binary runs under the launcher, bounded; any failure fails the target.
emu-test: emu $(EMU_TEST_BINS) $(EMU_TEST_HELPERS)
	@fail=0; for t in $(EMU_TEST_BINS); do \
		echo "== $$t"; \
		timeout $(EMU_TEST_TIMEOUT) $(EMU_LAUNCHER) -- $$t --jobs 1 || fail=1; \
	done; exit $$fail

# The folders of emu/ depend on each other as a DAG, in #includes and in
# symbols (tools/check-layout.sh); the checker first proves it sees cycles.
check-layout: $(EMU_LIB_OBJS)
	@tools/check-layout.sh --self-test
	@CC="$(CC)" tools/check-layout.sh emu $(EMU_LIB_OBJS)

# The emulator's interface: the command, its library, and the header of its
# counters (rfemu(1) STATISTICS), apart from rdmafast's, which know nothing
# of the emulator.
install-emu: emu
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(EMU_LIBDIR) $(DESTDIR)$(INCLUDEDIR)/rfemu
	install -m 0755 $(EMU_LAUNCHER) $(DESTDIR)$(BINDIR)/rfemu
	install -m 0644 $(EMU_LIB) $(DESTDIR)$(EMU_LIBDIR)/librfemu.so
	install -m 0644 emu/wire/stats.h $(DESTDIR)$(INCLUDEDIR)/rfemu/stats.h

uninstall-emu:
	rm -f $(DESTDIR)$(BINDIR)/rfemu $(DESTDIR)$(EMU_LIBDIR)/librfemu.so \
	    $(DESTDIR)$(INCLUDEDIR)/rfemu/stats.h
	-rmdir $(DESTDIR)$(EMU_LIBDIR) $(DESTDIR)$(INCLUDEDIR)/rfemu 2>/dev/null

-include $(EMU_LIB_OBJS:.o=.d)
