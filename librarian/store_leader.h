/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LIB_STORE_LEADER_H
#define LIB_STORE_LEADER_H

#include "store.h"

/* store_leader.c: the leader row (PostgreSQL). */
#define LIB_LEADER_INSTANCE_MAX 192
struct lib_leader_row {
	int64_t epoch;
	char holder[LFS_NODE_NAME_MAX + 1];
	char addresses[256];
	int64_t live_ms; /* until it expires (database clock), 0 if expired */
	char instance[LIB_LEADER_INSTANCE_MAX]; /* "host boot_id pid start", leader.c */
};
extern const char lib_pg_leader_sql[];
/*
 * 1 and s->epoch set if taken, 0 if not: taken if the row expired, or if
 * restart_of is not NULL and the row names us with that instance (one
 * the caller found dead: a restart need not wait for the expiry).
 */
int lib_store_leader_take(struct lib_store *s, const char *name, const char *addresses,
			  const char *instance, int ttl_ms, const char *restart_of,
			  struct lib_leader_row *row, struct lib_err *e);
/* 1 if renewed, 0 if s->epoch is no longer the row's (deposed). */
int lib_store_leader_renew(struct lib_store *s, int ttl_ms, struct lib_err *e);
int lib_store_leader_read(struct lib_store *s, struct lib_leader_row *row, struct lib_err *e);
int lib_store_leader_release(struct lib_store *s, struct lib_err *e);

#endif
