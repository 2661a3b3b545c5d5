// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's side of agent.sock: commands borrow its librarian session
 * (session.c has the protocol). Each request is forwarded on the agent's
 * one session and answered in turn.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent.h"
#include "proxy.h"
#include "session.h"

int lfsvol_proxy_listen(const char *state_dir)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t old;
	int fd, r;

	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/agent.sock", state_dir) >=
	    sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	unlink(sa.sun_path);
	old = umask(077);
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 16) ? -errno : 0;
	umask(old);
	if (r) {
		close(fd);
		return r;
	}
	return fd;
}

void lfsvol_proxy_unlink(const char *state_dir)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/agent.sock", state_dir);
	unlink(path);
}

static json_t *refusal(int err, const char *message)
{
	return json_pack("{s:b,s:i,s:s}", "ok", 0, "errno", err, "message", message);
}

/*
 * The reply to one request: agent.info and agent.scrub from here, the rest
 * from the librarian; agent.copy.* from copyjob.c. agent.scrub starts zeroing this node's ZOMBIE books
 * now; its "until" is the agent's `runs' count (agent.json) once the run
 * that zeroes them has ended.
 */
static json_t *answer(json_t *req, struct lfsvol_lib *lib, const struct agent_state *st,
		      bool *scrub, struct proxy_copy *pc)
{
	const char *op = json_string_value(json_object_get(req, "op"));
	json_t *args = json_object_get(req, "args"), *res = NULL;
	char msg[COPY_RECORD_SIZE + 64];
	int r;

	/* the copies are the agent's own: answered without a librarian session */
	if (op && !strncmp(op, "agent.copy.", 11)) {
		res = lfsvol_copy_answer(pc->copies, pc->drv, op, args, &r, msg, sizeof(msg));
		return res ? json_pack("{s:b,s:o}", "ok", 1, "result", res) : refusal(-r, msg);
	}
	if (!lib)
		return refusal(ENOTCONN, "the node agent has no librarian session right now");
	if (!op)
		return refusal(EINVAL, "request without \"op\"");
	if (!strcmp(op, "agent.info"))
		return json_pack("{s:b,s:O}", "ok", 1, "result", lfsvol_lib_info(lib));
	if (!strcmp(op, "agent.scrub")) {
		*scrub = true;
		return json_pack("{s:b,s:{s:I}}", "ok", 1, "result", "until",
				 (json_int_t)st->runs + 1);
	}
	if (!json_is_object(args))
		args = NULL; /* "args": null means none */
	r = lfsvol_lib_call(lib, op, json_incref(args), &res);
	if (r)
		return refusal(-r, lfsvol_lib_errmsg(lib));
	return json_pack("{s:b,s:o?}", "ok", 1, "result", res);
}

/*
 * One request of a client whose socket is readable, forwarded on the
 * agent's own session: 0, or negative when the client is gone or broke
 * the framing (the caller closes it). A request while the agent has no
 * session gets ENOTCONN: the command then opens its own.
 */
int lfsvol_proxy_serve_one(int fd, struct lfsvol_lib *lib, const struct agent_state *st,
			   bool *scrub, struct proxy_copy *pc)
{
	json_t *req = NULL, *rep;
	int r = lfsvol_frame_recv(fd, &req, LFSVOL_SOCK_TIMEOUT_MS);

	if (r)
		return r;
	rep = answer(req, lib, st, scrub, pc);
	json_decref(req);
	r = rep ? lfsvol_frame_send(fd, rep) : -ENOMEM;
	json_decref(rep);
	return r;
}
