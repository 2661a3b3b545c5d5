/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LIB_SERVER_H
#define LIB_SERVER_H

#include "librarian.h"

void lib_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int lib_serve(struct lib_config *cfg, struct lib_store *store, int verbose);

#endif
