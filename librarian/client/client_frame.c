// SPDX-License-Identifier: GPL-2.0
/*
 * liblibrarian's frames: a request as one frame (a 4-byte big-endian
 * length and the JSON text), a reply frame read by a deadline, and a
 * reply taken apart into its result or the librarian's error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_int.h"
/*
 * The request as one frame: 4-byte big-endian length and the JSON text.
 * Header and body go out in one write: one TLS record, one TCP segment, no
 * second small segment for Nagle to hold back on any hop between.
 */
int lc_make_frame(struct lfs_lib *l, const char *op, json_t *args, int64_t id, uint8_t **frame,
		  size_t *flen)
{
	json_t *req = json_pack("{s:i,s:I,s:s}", "v", LFS_PROTOCOL_VERSION, "id", (json_int_t)id,
				"op", op);
	uint32_t len;
	char *txt;

	if (!req)
		return lc_err(l, ENOMEM, "out of memory");
	if (args && (!json_is_object(args) || json_object_update(req, args) < 0)) {
		json_decref(req);
		return lc_err(l, EINVAL, "request arguments must be a JSON object");
	}
	json_object_set_new(req, "id", json_integer(id));
	json_object_set_new(req, "op", json_string(op));
	txt = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	if (!txt)
		return lc_err(l, ENOMEM, "out of memory");
	len = strlen(txt);
	*frame = malloc(4 + len);
	if (!*frame) {
		free(txt);
		return lc_err(l, ENOMEM, "out of memory");
	}
	(*frame)[0] = len >> 24;
	(*frame)[1] = len >> 16;
	(*frame)[2] = len >> 8;
	(*frame)[3] = len;
	memcpy(*frame + 4, txt, len);
	free(txt);
	*flen = 4 + len;
	return 0;
}

/* One reply frame, parsed. A stream error leaves the connection out of step. */
int lc_read_reply(struct lfs_lib *l, int64_t deadline, json_t **rep)
{
	char why[JSON_ERROR_TEXT_LENGTH];
	uint8_t hdr[4];
	uint32_t len;
	char *buf;
	int r = lc_read(l, hdr, 4, deadline);

	if (r < 0)
		return r;
	len = (uint32_t)hdr[0] << 24 | hdr[1] << 16 | hdr[2] << 8 | hdr[3];
	if (len > LFS_MAX_REPLY)
		return lc_err(l, EMSGSIZE, "reply of %u bytes is larger than %u", len,
			      LFS_MAX_REPLY);
	buf = malloc(len + 1);
	if (!buf)
		return lc_err(l, ENOMEM, "out of memory");
	r = lc_read(l, buf, len, deadline);
	if (r == 0) {
		*rep = lc_json_parse(buf, len, why, sizeof(why));
		if (!*rep)
			r = lc_err(l, EBADMSG, "malformed reply: %s", why);
	}
	free(buf);
	return r;
}

/* The reply's result, or -errno with the server's message and code. */
int lc_take_reply(struct lfs_lib *l, json_t *rep, json_t **result)
{
	json_t *err;
	int r;

	if (json_is_true(json_object_get(rep, "ok"))) {
		if (result)
			*result = json_incref(json_object_get(rep, "result"));
		json_decref(rep);
		l->errmsg[0] = 0;
		l->errcode[0] = 0;
		return 0;
	}
	err = json_object_get(rep, "error");
	r = json_integer_value(json_object_get(err, "errno"));
	if (r <= 0)
		r = EPROTO;
	snprintf(l->errmsg, sizeof(l->errmsg), "%s",
		 json_string_value(json_object_get(err, "message")) ?: "unknown error");
	snprintf(l->errcode, sizeof(l->errcode), "%s",
		 json_string_value(json_object_get(err, "code")) ?: lfs_errno_name(r));
	json_decref(rep);
	return -r;
}
