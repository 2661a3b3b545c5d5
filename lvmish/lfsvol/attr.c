// SPDX-License-Identifier: GPL-2.0
/* attr list|get|set|rm NAME [KEY [VALUE]]: shelf attributes kept by the librarian. */
#include <stdio.h>
#include <string.h>

#include "lfsvol.h"
#include "result.h"
#include "session.h"

static const struct {
	const char *verb, *op;
	int args;
} verbs[] = {
	{ "list", "attr.list", 3 },
	{ "get", "attr.get", 4 },
	{ "set", "attr.set", 5 },
	{ "rm", "attr.remove", 4 },
};

static void attr_print(size_t verb, json_t *res)
{
	const char *k;
	json_t *v;

	if (!strcmp(verbs[verb].verb, "list")) {
		json_object_foreach(json_object_get(res, "attrs"), k, v)
			printf("%s=%s\n", k, json_is_string(v) ? json_string_value(v) : "?");
	} else if (!strcmp(verbs[verb].verb, "get")) {
		printf("%s\n", json_string_value(json_object_get(res, "value")));
	}
}

/* Under --json: {"verb", "name", and "attrs" (list) or "key" and "value" (get, set, rm)}. */
static void attr_result(int argc, char **argv, json_t *res)
{
	lfsvol_result_set("verb", json_string(argv[1]));
	lfsvol_result_set("name", json_string(argv[2]));
	if (argc == 3) {
		lfsvol_result_set("attrs", json_incref(json_object_get(res, "attrs")));
		return;
	}
	lfsvol_result_set("key", json_string(argv[3]));
	if (argc == 5)
		lfsvol_result_set("value", json_string(argv[4]));
	else if (!strcmp(argv[1], "get"))
		lfsvol_result_set("value", json_incref(json_object_get(res, "value")));
}

int cmd_attr(int argc, char **argv, struct lfsvol_ctx *ctx)
{
	struct lfsvol_lib *lib = NULL;
	json_t *args, *res = NULL;
	char what[256];
	size_t i;
	int r;

	for (i = 0; i < ARRAY_SIZE(verbs); i++)
		if (argc > 1 && !strcmp(argv[1], verbs[i].verb))
			break;
	if (i == ARRAY_SIZE(verbs) || argc != verbs[i].args) {
		if (argc > 1 && i == ARRAY_SIZE(verbs))
			lfsvol_err("invalid attr verb `%s'", argv[1]);
		lfsvol_err(
			"usage: %s attr list NAME | get NAME KEY | set NAME KEY VALUE | rm NAME KEY",
			lfsvol_prog);
		return LFSVOL_EUSAGE;
	}
	r = lfsvol_check_name(argv[2]);
	if (!r)
		r = lfsvol_lib_open(ctx, &lib);
	if (r)
		return lfsvol_exit_code(r);
	args = json_pack("{s:s}", "name", argv[2]);
	if (argc > 3)
		json_object_set_new(args, "key", json_string(argv[3]));
	if (argc > 4)
		json_object_set_new(args, "value", json_string(argv[4]));
	snprintf(what, sizeof(what), "attr %s %s%s%s", argv[1], argv[2], argc > 3 ? " " : "",
		 argc > 3 ? argv[3] : "");
	r = lfsvol_lib_request(lib, what, verbs[i].op, args, &res);
	if (!r && lfsvol_json)
		attr_result(argc, argv, res);
	else if (!r)
		attr_print(i, res);
	json_decref(res);
	lfsvol_lib_close(lib);
	return lfsvol_exit_code(r);
}
