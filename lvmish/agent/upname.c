// SPDX-License-Identifier: GPL-2.0
/*
 * The name of a file open here (docs/NAMESPACE.md, "What the node agent
 * does"). The librarian names shelves; the agent asks it by the name it
 * knows a file under, and the kernel by UUID. A file open on this node can
 * be renamed behind both: `lfsvol rename` by this node, the only holder, is
 * allowed. Requests about such a file therefore carry its UUID, so that the
 * librarian refuses (ESTALE) rather than act on another shelf that has the
 * old name now; the agent then asks the name by UUID and sends once more.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lfs_librarian.h"
#include "lfs_rules.h"
#include "msg.h"
#include "upserver.h"

/* The shelf's current name: the one it is open under here, else the librarian's. */
int up_name_of(struct up_worker *w, const struct up_req *r, char *name, size_t len)
{
	json_t *j;
	int ret;

	if (r->has_uuid && lfsvol_upactive_name(r->uuid, name, len))
		return 0;
	ret = up_find(w, r, false, &j);
	if (!ret)
		snprintf(name, len, "%s", json_string_value(json_object_get(j, "name")) ?: "");
	json_decref(j);
	return ret;
}

/*
 * op on the shelf of uuid, args (stolen) naming it: the librarian checks
 * in the same transaction that the name is still that shelf's (ESTALE).
 */
int up_call_same(struct up_worker *w, const char *op, json_t *args, const uint8_t *uuid,
		 json_t **res)
{
	char u[40];

	if (uuid) {
		lfs_format_uuid(uuid, u);
		json_object_set_new(args, "uuid", json_string(u));
	}
	return up_call(w, op, args, res);
}

/*
 * Did ret refuse name because the shelf of r's UUID is no longer called
 * so (ESTALE, or ENOENT for a name now gone)? Then name is its name now,
 * the agent's record of the open file has it, and the request may be sent
 * again, once.
 */
bool up_renamed(struct up_worker *w, const struct up_req *r, int ret, char *name, size_t len)
{
	char now[LFSVOL_UP_NAME_MAX + 1] = "";
	json_t *j = NULL;

	if ((ret != -ESTALE && ret != -ENOENT) || !r->has_uuid)
		return false;
	if (!up_find(w, r, false, &j))
		snprintf(now, sizeof(now), "%s",
			 json_string_value(json_object_get(j, "name")) ?: "");
	json_decref(j);
	if (!*now || !strcmp(now, name))
		return false;
	lfsvol_err("upcall %s: shelf '%s' is now called '%s' (renamed while open here)", w->what,
		   name, now);
	lfsvol_upactive_rename(r->uuid, now);
	snprintf(name, len, "%s", now);
	return true;
}
