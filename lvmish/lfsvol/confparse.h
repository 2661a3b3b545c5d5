/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The reading of lfs.conf, shared by its files, bottom up: config_get.c
 * (the error message and the getters of settings), config_fabric.c (the
 * fabric list, and the device each entry names), config_shelf.c (the
 * shelves list), config.c (the file, its top-level settings, the result).
 */
#ifndef LFSVOL_CONFPARSE_H
#define LFSVOL_CONFPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <libconfig.h>

#include "conf.h"
#include "msg.h"

/* Where the message of the first error goes, and the file's name. */
struct conf_err {
	char *msg;
	size_t len;
	const char *file;
};

/* "FILE:LINE: what": the error message of setting s; returns -EINVAL. */
int conf_fail(struct conf_err *e, const config_setting_t *s, const char *fmt, ...) __printf(3, 4);
/* Every member of grp is one of keys (NULL-ended); where ends the message. */
int conf_check_keys(struct conf_err *e, const config_setting_t *grp, const char *const *keys,
		    const char *where);
/* The getters return 1 if the setting is there, 0 if not, or a negative errno. */
int conf_get_string(struct conf_err *e, const config_setting_t *grp, const char *key, char **out);
int conf_get_int(struct conf_err *e, const config_setting_t *grp, const char *key, int min, int max,
		 int *out);
int conf_get_bool(struct conf_err *e, const config_setting_t *grp, const char *key, bool *out);
/* A size in bytes: an integer, or a string in the shared SIZE syntax (a bare number is bytes). */
int conf_get_size(struct conf_err *e, const config_setting_t *grp, const char *key, bool allow_zero,
		  uint64_t *out);
/* A policy name, any letter case; *out is the table's exact spelling. */
int conf_get_policy(struct conf_err *e, const config_setting_t *grp, const char *key,
		    const char **out);
/*
 * A list (or, with array_ok, an array) named what of at most max groups,
 * each read by entry(e, c, group, index); example shows the form.
 */
typedef int conf_entry_fn(struct conf_err *e, struct lfsvol_conf *c, const config_setting_t *g,
			  int i);
int conf_each(struct conf_err *e, struct lfsvol_conf *c, const config_setting_t *list,
	      bool array_ok, const char *what, const char *example, int max, conf_entry_fn *entry);

/* config_fabric.c, config_shelf.c: the lists */
int conf_parse_fabric(struct conf_err *e, struct lfsvol_conf *c, const config_setting_t *list);
int conf_parse_shelves(struct conf_err *e, struct lfsvol_conf *c, const config_setting_t *list);

#endif /* LFSVOL_CONFPARSE_H */
