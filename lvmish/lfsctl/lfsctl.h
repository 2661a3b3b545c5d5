/* SPDX-License-Identifier: MIT */
#ifndef LFSCTL_H
#define LFSCTL_H

#include <stdbool.h>
#include <jansson.h>

#include "liblfsnl.h"
#include "lfs_rules.h"

#define EXIT_USAGE 2

struct lfsctl_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *args;
	const char *help;
	bool listing; /* prints its own JSON under --json */
};

extern const char *prog;

int cmd_attach(int argc, char **argv);
int cmd_detach(int argc, char **argv);
int cmd_fabric(int argc, char **argv);
int cmd_create(int argc, char **argv);
int cmd_extend(int argc, char **argv);
int cmd_shrink(int argc, char **argv);
int cmd_remove(int argc, char **argv);
int cmd_move(int argc, char **argv);
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

/* json.c: --json (see there). lfsctl_err: a message on stderr, kept for the error object. */
extern bool lfsctl_json;
void lfsctl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The errno of the failure (the error object's "errno"). */
void lfsctl_errno_is(int err);
/* Set member key of a changing command's result to v (stolen; ignored without --json). */
void lfsctl_result(const char *key, json_t *v);
void lfsctl_print_json(json_t *v);
/* main(): the document of cmd, which exited with status. */
void lfsctl_json_done(const char *cmd, int status, bool listing);

#endif
