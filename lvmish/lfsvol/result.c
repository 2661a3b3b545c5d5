// SPDX-License-Identifier: GPL-2.0
/* The JSON document of a command under --json (result.h). */
#include <stdio.h>
#include <stdlib.h>

#include "msg.h"
#include "result.h"

static json_t *result;

static json_t *result_object(void)
{
	if (!result)
		result = json_object();
	return result;
}

void lfsvol_result_set(const char *key, json_t *v)
{
	if (!lfsvol_json) {
		json_decref(v);
		return;
	}
	json_object_set_new(result_object(), key, v ? v : json_null());
}

void lfsvol_result_append(const char *key, json_t *v)
{
	json_t *arr;

	if (!lfsvol_json) {
		json_decref(v);
		return;
	}
	arr = json_object_get(result_object(), key);
	if (!json_is_array(arr)) {
		arr = json_array();
		json_object_set_new(result, key, arr);
	}
	json_array_append_new(arr, v ? v : json_null());
}

void lfsvol_print_json(json_t *v)
{
	char *s = json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	puts(s ? s : "[]");
	free(s);
}

/* A word for each exit code, as lfsvol(8) lists them. */
static const char *const reasons[] = {
	[LFSVOL_OK] = "ok",
	[LFSVOL_EFAIL] = "failed",
	[LFSVOL_EUSAGE] = "usage",
	[LFSVOL_ECONFIG] = "config",
	[LFSVOL_ELIBRARIAN] = "librarian",
	[LFSVOL_EDRIVER] = "driver",
	[LFSVOL_ENOENT] = "no-such-shelf",
	[LFSVOL_EREFUSED] = "refused",
	[LFSVOL_EPERM] = "permission",
};

static json_t *error_object(int status)
{
	const char *const *lines = lfsvol_err_lines();
	json_t *all = json_array();

	for (int i = 0; lines && lines[i]; i++)
		json_array_append_new(all, json_string(lines[i]));
	/* getopt's own complaints are not ours to keep */
	if (!json_array_size(all))
		json_array_append_new(all, json_string(status == LFSVOL_EUSAGE ?
							       "invalid option or argument" :
							       "failed"));
	return json_pack(
		"{s:i,s:s,s:o,s:o}", "code", status, "reason",
		status > 0 && status < (int)ARRAY_SIZE(reasons) ? reasons[status] : "failed",
		"message",
		lfsvol_fail_line() ? json_string(lfsvol_fail_line()) :
				     json_incref(json_array_get(all, json_array_size(all) - 1)),
		"messages", all);
}

void lfsvol_result_print(const char *command, int status, bool report)
{
	json_t *doc;

	if (!lfsvol_json || (report && !status))
		return;
	doc = json_pack("{s:s}", "command", command);
	if (result)
		json_object_update(doc, result);
	if (status)
		json_object_set_new(doc, "error", error_object(status));
	lfsvol_print_json(doc);
	json_decref(doc);
	json_decref(result);
	result = NULL;
}
