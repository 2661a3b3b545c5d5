# Unit tests of lvmish, with ASan/UBSan, run on the host:
#   build/tests/test_parse     liblfsnl's BOOKS and UUID parsers, its family version
#                              check, lfsctl's use of the shared rules
#                              (tests/driver/parse.t)
#   build/tests/test_parsers   lfsvol's lfs.conf parser, and its use of the shared
#                              rules (tests/lvmish/parsers.t)
HELPERS += $(B)/test_parse $(B)/test_parsers

LFSVOL_DIR := $(TOP)/lvmish/lfsvol
LFSVOL_PARSE_SRCS := $(addprefix $(LFSVOL_DIR)/,config_get.c config_fabric.c config_shelf.c config.c) $(LFSVOL_DIR)/msg.c $(TOP)/librarian/client/client_addr.c
LFSVOL_PKGS := libconfig jansson

$(B)/test_parse: $(TOP)/tests/lvmish/test_parse.c $(TOP)/lvmish/lib/parse.c \
		$(TOP)/lvmish/lib/family.c $(LIBLFS_HDRS) $(RULES_SRCS) $(RULES_HDRS)
	@mkdir -p $(B)
	$(CC) $(CFLAGS) $(SAN) $(LIBLFS_CFLAGS) $(RULES_CFLAGS) -o $@ $< $(TOP)/lvmish/lib/parse.c \
		$(TOP)/lvmish/lib/family.c $(RULES_SRCS) $(LIBLFS_LIBS)

$(B)/test_parsers: $(TOP)/tests/lvmish/test_parsers.c $(LFSVOL_PARSE_SRCS) $(LFSVOL_DIR)/conf.h $(LFSVOL_DIR)/confparse.h \
		$(LFSVOL_DIR)/msg.h $(RULES_SRCS) $(RULES_HDRS)
	@mkdir -p $(B)
	$(CC) $(CFLAGS) $(SAN) -I$(LFSVOL_DIR) -I$(TOP)/librarian/client $(RULES_CFLAGS) \
		$(shell pkg-config --cflags $(LFSVOL_PKGS)) -o $@ $< $(LFSVOL_PARSE_SRCS) $(RULES_SRCS) \
		$(shell pkg-config --libs $(LFSVOL_PKGS))

# lfsvol with every driver session failing as with an lfs.ko of another
# netlink version (tests/lvmish/skew.t)
HELPERS += $(B)/lfsvol-skew
LFSVOL_ARCHIVE := $(LFSVOL_DIR)/lfsvol.a
$(B)/lfsvol-skew: $(TOP)/tests/lvmish/lfsvol_skew.c $(LFSVOL_ARCHIVE)
	@mkdir -p $(B)
	$(CC) $(CFLAGS) $(LIBLFS_CFLAGS) -o $@ $< -Wl,--wrap=lfs_client_open \
		-Wl,--wrap=lfs_client_open_error $$(cat $(LFSVOL_DIR)/lfsvol-libs.txt)

$(LFSVOL_ARCHIVE): FORCE
	$(MAKE) -C $(LFSVOL_DIR) lfsvol.a
