# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# The emulated mlx5 HCA, part 1: the fake uverbs kernel (librfemu.so, an
# LD_PRELOAD library) and its launcher (rfemu).  Included by the top Makefile,
# which defines BUILD, CC, CFLAGS, WARN, PREFIX, LIBDIR, BINDIR, DESTDIR.

EMU_LIB      := $(BUILD)/librfemu.so
EMU_LAUNCHER := $(BUILD)/rfemu
EMU_LIBDIR   := $(LIBDIR)/rdmafast

EMU_SRCS     := $(wildcard emu/*.c)
EMU_LIB_SRCS := $(filter-out emu/rfemu.c,$(EMU_SRCS))
# EMU_NO_DEV=1 builds part 1 alone, with the weak no-op device (emu/hooks.c)
ifeq ($(EMU_NO_DEV),1)
EMU_LIB_SRCS := $(filter-out emu/dev_%.c,$(EMU_LIB_SRCS))
endif
EMU_LIB_OBJS := $(patsubst emu/%.c,$(BUILD)/emu/%.o,$(EMU_LIB_SRCS))
EMU_CFLAGS   := -std=gnu11 $(WARN) $(RF_CPPFLAGS) -D_GNU_SOURCE -fPIC -fvisibility=default

EMU_TEST_SRCS := $(wildcard tests/emu/*.c)
EMU_TEST_BINS := $(patsubst tests/emu/%.c,$(BUILD)/tests/emu/%,$(filter-out tests/emu/helper_%.c,$(EMU_TEST_SRCS)))
EMU_TEST_HELPERS := $(patsubst tests/emu/%.c,$(BUILD)/tests/emu/%,$(filter tests/emu/helper_%.c,$(EMU_TEST_SRCS)))
EMU_TEST_TIMEOUT ?= 300
CRITERION_FLAGS = $(shell pkg-config --cflags --libs criterion 2>/dev/null || echo -lcriterion)

.PHONY: emu emu-test install-emu uninstall-emu
all: emu
emu: $(EMU_LIB) $(EMU_LAUNCHER)

$(BUILD)/emu/%.o: emu/%.c emu/emu.h emu/internal.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(EMU_CFLAGS) -MMD -MP -c -o $@ $<

$(EMU_LIB): $(EMU_LIB_OBJS)
	$(CC) $(CFLAGS) -shared -Wl,-z,defs -o $@ $^ -ldl -lpthread

$(EMU_LAUNCHER): emu/rfemu.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 -D_GNU_SOURCE $(WARN) \
		-DRFEMU_LIB_DEFAULT='"$(EMU_LIBDIR)/librfemu.so"' -o $@ $<

$(BUILD)/tests/emu/%: tests/emu/%.c $(wildcard tests/emu/*.h) $(wildcard emu/dev_*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 $(WARN) -Iemu -o $@ $< \
		$(CRITERION_FLAGS) -libverbs -lmlx5 -lpthread

$(BUILD)/tests/emu/helper_%: tests/emu/helper_%.c $(wildcard emu/dev_*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 $(WARN) -Iemu -o $@ $< -libverbs

# Each test binary runs under the launcher, bounded; any failure fails the target.
emu-test: emu $(EMU_TEST_BINS) $(EMU_TEST_HELPERS)
	@fail=0; for t in $(EMU_TEST_BINS); do \
		echo "== $$t"; \
		RFEMU_TEST_HELPER_DIR=$(BUILD)/tests/emu \
		timeout $(EMU_TEST_TIMEOUT) $(EMU_LAUNCHER) -- $$t --jobs 1 || fail=1; \
	done; exit $$fail

install-emu: emu
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(EMU_LIBDIR)
	install -m 0755 $(EMU_LAUNCHER) $(DESTDIR)$(BINDIR)/rfemu
	install -m 0644 $(EMU_LIB) $(DESTDIR)$(EMU_LIBDIR)/librfemu.so

uninstall-emu:
	rm -f $(DESTDIR)$(BINDIR)/rfemu $(DESTDIR)$(EMU_LIBDIR)/librfemu.so
	-rmdir $(DESTDIR)$(EMU_LIBDIR) 2>/dev/null

-include $(EMU_LIB_OBJS:.o=.d)

# ---- device model benchmark (emu/README.md) ---------------------------
# Not a test: prints WQEs/s of the model and a two-process ping-pong latency.
.PHONY: bench-emu
$(BUILD)/bench/emu_model: bench/emu_model.c bench/connect.h $(HEADERS)
	@mkdir -p $(@D)
	$(CC) -O2 -g -std=gnu11 $(WARN) -D_GNU_SOURCE $(RF_CPPFLAGS) -o $@ $< -libverbs -lmlx5

bench-emu: emu $(BUILD)/bench/emu_model
	timeout 120 $(EMU_LAUNCHER) -- $(BUILD)/bench/emu_model 2
