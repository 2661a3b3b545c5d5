/* SPDX-License-Identifier: MIT */
#ifndef LFSCTL_H
#define LFSCTL_H

#include "liblfsnl.h"
#include "lfs_rules.h"

#define EXIT_USAGE 2

struct lfsctl_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *args;
	const char *help;
};

extern const char *prog;

int cmd_attach(int argc, char **argv);
int cmd_detach(int argc, char **argv);
int cmd_fabric(int argc, char **argv);
int cmd_create(int argc, char **argv);
int cmd_extend(int argc, char **argv);
int cmd_shrink(int argc, char **argv);
int cmd_remove(int argc, char **argv);
int cmd_zero(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_fence(int argc, char **argv);
int cmd_lease(int argc, char **argv);
int cmd_label(int argc, char **argv);

/* Helpers in main.c */
int lfsctl_usage(const char *cmd);
int lfsctl_wants_help(int argc, char **argv);
struct lfs_client *lfsctl_connect(const char *cmd);
int lfsctl_fail(struct lfs_client *c, const char *cmd, const char *what, int err);
int lfsctl_books(const char *cmd, const char *arg, struct lfs_book **books, size_t *n);
/* "active" or "fenced" (enum lfs_shelf_state). */
const char *lfsctl_state_name(uint32_t state);
/* SIZE in bytes (a bare number is bytes, zero allowed); prints the error. */
int lfsctl_size(const char *cmd, const char *opt, const char *arg, uint64_t *bytes);

#endif
