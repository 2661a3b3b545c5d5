# The shared rules module (common/lfs_rules.h): every userspace component
# compiles these sources in; include this file and add $(RULES_SRCS) and
# $(RULES_CFLAGS).
RULES_DIR := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
RULES_SRCS := $(RULES_DIR)/names.c $(RULES_DIR)/policy.c $(RULES_DIR)/size.c $(RULES_DIR)/text.c \
	$(RULES_DIR)/args.c
RULES_HDRS := $(RULES_DIR)/lfs_rules.h $(RULES_DIR)/../driver/uapi/lfs.h $(RULES_DIR)/../driver/uapi/lfs_fs.h
# the release (VERSION at the top), which every program's --version prints
LFS_VERSION := $(shell cat $(RULES_DIR)/../VERSION 2>/dev/null || echo 0)
# what a program linking the librarian's client library (liblibrarian.a)
# links besides jansson and OpenSSL: yajl, its JSON parser (client_json.c),
# the static archive, so that no program needs libyajl2 where it runs
LIBLIBRARIAN_LIBS := -l:libyajl_s.a
RULES_CFLAGS := -I$(RULES_DIR) -I$(RULES_DIR)/../driver -DLFS_VERSION='"$(LFS_VERSION)"'
