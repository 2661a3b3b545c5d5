/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LIB_STORE_KNOWN_H
#define LIB_STORE_KNOWN_H

#include "store.h"

/* store_known.c: what the writer knows without asking; forgotten on any undo. */
void lib_store_known_free(struct lib_store *s);
int lib_store_next_shelf(struct lib_store *s, int64_t *id, struct lib_err *e);
void lib_store_ig_known_add(struct lib_store *s, uint32_t ig, int64_t dfree, int64_t dzero);

#endif
