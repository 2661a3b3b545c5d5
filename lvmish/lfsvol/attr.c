// SPDX-License-Identifier: GPL-2.0
/* attr list|get|set|rm NAME [KEY [VALUE]]: shelf attributes kept by the librarian. */
#include <stdio.h>
#include <string.h>

#include "lfs_librarian.h"
#include "lfsvol.h"

int cmd_attr(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	static const struct {
		const char *verb, *op;
		int args;
	} verbs[] = {
		{ "list", "attr.list", 3 },
		{ "get", "attr.get", 4 },
		{ "set", "attr.set", 5 },
		{ "rm", "attr.remove", 4 },
	};
	struct lv_lib *lib = NULL;
	json_t *args, *res = NULL, *v;
	const char *k;
	char what[256];
	int i, r;

	for (i = 0; i < 4; i++)
		if (argc > 1 && !strcmp(argv[1], verbs[i].verb))
			break;
	if (i == 4 || argc != verbs[i].args) {
		if (argc > 1 && i == 4)
			lfsvol_err("invalid attr verb `%s'", argv[1]);
		lfsvol_err("usage: %s attr list NAME | get NAME KEY | set NAME KEY VALUE | rm NAME KEY",
			   lfsvol_prog);
		return LFSVOL_EUSAGE;
	}
	if (!lfsvol_valid_name(argv[2])) {
		lfsvol_err("invalid shelf name `%s'", argv[2]);
		return LFSVOL_EUSAGE;
	}
	args = json_pack("{s:s}", "name", argv[2]);
	if (argc > 3)
		json_object_set_new(args, "key", json_string(argv[3]));
	if (argc > 4)
		json_object_set_new(args, "value", json_string(argv[4]));
	r = lfsvol_lib_connect(ctx, &lib);
	if (r) {
		json_decref(args);
		return r;
	}
	snprintf(what, sizeof(what), "attr %s %s%s%s", argv[1], argv[2], argc > 3 ? " " : "",
		 argc > 3 ? argv[3] : "");
	r = lfsvol_lib_call(lib, what, verbs[i].op, args, &res);
	if (r)
		goto out;
	if (i == 0) {
		json_object_foreach(json_object_get(res, "attrs"), k, v)
			printf("%s=%s\n", k, json_is_string(v) ? json_string_value(v) : "?");
	} else if (i == 1) {
		printf("%s\n", json_string_value(json_object_get(res, "value")));
	}
out:
	json_decref(res);
	lv_close(lib);
	return r;
}
