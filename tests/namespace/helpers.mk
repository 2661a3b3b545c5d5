# The filesystem's test helpers (tests/namespace/*.t run them in the VM):
# upcalld, the test upcall server (with liblfsnl from lvmish and the shared
# rules), and the C helpers of the tests, built without sanitizers (they
# run in the guest, where ASan's shadow memory is too much for 1 GiB).
NS_DIR := $(TOP)/tests/namespace
NS_LIBLFS := $(TOP)/lvmish/liblfsnl.a
NS_CFLAGS := -O2 -g -I$(TOP)/driver -I$(TOP)/lvmish/lib $(RULES_CFLAGS) \
	$(shell pkg-config --cflags libnl-genl-3.0)
NS_LIBS := $(shell pkg-config --libs libnl-genl-3.0)
NS_HELPERS := $(B)/upcalld $(B)/fsops $(B)/lfsfuzz
HELPERS += $(NS_HELPERS)

$(B)/upcalld: $(NS_DIR)/upcalld.c $(NS_DIR)/catalog.c $(NS_DIR)/attrs.c $(NS_DIR)/state.c \
		$(NS_DIR)/upcalld.h $(NS_LIBLFS) $(RULES_SRCS) $(RULES_HDRS)
	@mkdir -p $(B)
	$(CC) $(CFLAGS) $(NS_CFLAGS) -o $@ $(NS_DIR)/upcalld.c $(NS_DIR)/catalog.c \
		$(NS_DIR)/attrs.c $(NS_DIR)/state.c $(RULES_SRCS) $(NS_LIBLFS) $(NS_LIBS)

$(B)/fsops $(B)/lfsfuzz: $(B)/%: $(NS_DIR)/%.c $(TOP)/driver/uapi/lfs.h $(TOP)/driver/uapi/lfs_fs.h
	@mkdir -p $(B)
	$(CC) $(CFLAGS) $(NS_CFLAGS) -o $@ $< $(NS_LIBLFS) $(NS_LIBS)

# shmcount: a counter in a MAP_SYNC mapping, written on one node, watched on another
HELPERS += $(B)/shmcount
$(B)/shmcount: $(NS_DIR)/shmcount.c
	@mkdir -p $(B)
	$(CC) $(CFLAGS) $(NS_CFLAGS) -o $@ $<

# stuckio: a write stalled in a userfaultfd page across the lease's deadline
HELPERS += $(B)/stuckio
$(B)/stuckio: $(NS_DIR)/stuckio.c
	@mkdir -p $(B)
	$(CC) $(CFLAGS) $(NS_CFLAGS) -pthread -o $@ $<
