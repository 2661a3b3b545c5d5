# The C helpers the driver's VM tests run in the guest (tests/driver/*.c),
# built into build/driver-tests/, where the guest scripts find them
# (tests/driver/guest/lib.sh, tests/lib/emachine.sh). They link liblfsnl and
# the shared rules module.
DT_BIN := $(TOP)/build/driver-tests
DT_SRCS := $(wildcard $(TOP)/tests/driver/*.c)
HELPERS += $(patsubst $(TOP)/tests/driver/%.c,$(DT_BIN)/%,$(DT_SRCS))

$(DT_BIN)/%: $(TOP)/tests/driver/%.c $(LIBLFS) $(LIBLFS_HDRS) $(RULES_SRCS) $(RULES_HDRS)
	@mkdir -p $(DT_BIN)
	$(CC) $(CFLAGS) -O2 -g $(LIBLFS_CFLAGS) $(RULES_CFLAGS) -o $@ $< $(RULES_SRCS) $(LIBLFS) \
		$(LIBLFS_LIBS)
