// SPDX-License-Identifier: GPL-2.0
/*
 * Leader or standby (docs/HA.md, "The leader row"): with a PostgreSQL
 * catalogue, librarians on any number of hosts share it and one serves.
 *
 * The event loop keeps the row: the leader renews it every
 * leader_refresh_ms (lib_leader_tick, before each round's events), so a
 * leader whose loop stops (SIGSTOP, a hang, a partition from the database)
 * stops renewing and a standby takes over leader_ttl_ms after the last
 * renewal, on the database's clock, with the next epoch. A leader that finds
 * its epoch gone (a renewal that matches no row, a commit whose check fails)
 * becomes a standby at once: from then on it refuses every request but auth
 * and ping with EREMOTE, naming the leader, and its lease thread refuses
 * every heartbeat (dispatch.c). Independently of this loop, the database
 * refuses its commits and the lease thread's reads (store_leader.c).
 *
 * A standby polls the row as often; when it takes the lead it prepares the
 * catalogue as a librarian does at start (check, fabric geometry), reloads
 * the node states and counts every node as heard now (lapse.c), so no
 * takeover of a node's shelf comes before lease_time + fence_grace after it
 * became the leader, whatever the old leader granted.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server.h"
#include "store_leader.h"

struct lib_leader {
	struct lib_server *srv;
	const char *name;
	char addresses[256]; /* this librarian's TCP addresses, comma separated */
	int64_t epoch; /* ours while leading, 0 as a standby (atomic) */
	int64_t next_ms; /* monotonic ms of the next renewal or poll */
	pthread_mutex_t mu; /* row */
	struct lib_leader_row row; /* the row as last seen: who leads */
	char hostname[LFS_NODE_NAME_MAX + 1];
	char instance[LIB_LEADER_INSTANCE_MAX]; /* this process: "host boot_id pid start" */
};

/*
 * Field 22 of /proc/PID/stat: the process's start, in clock ticks since
 * boot; 0 if there is no such process, or only its zombie (it ran its last).
 */
static unsigned long long proc_start(long pid)
{
	char path[64], buf[1024], *p;
	unsigned long long start = 0;
	char state = 0;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')'); /* the command name may hold spaces */
	if (!p || sscanf(p + 1,
			 " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d"
			 " %*d %*d %llu",
			 &state, &start) != 2)
		return 0;
	return state == 'Z' || state == 'X' ? 0 : start;
}

static void boot_id(char *out, size_t size)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

	if (!f || !fgets(out, (int)size, f))
		snprintf(out, size, "unknown");
	out[strcspn(out, "\n")] = 0;
	if (f)
		fclose(f);
}

/*
 * Who holds the row, as a process: "host boot_id pid start". A librarian
 * starting under the row's name takes it before its expiry (a restart) only
 * if that process is certainly gone: the same host and boot, and no process
 * with that pid and start. Another host's process cannot be seen from here:
 * it counts as alive, and the row is taken at its expiry as by any standby.
 */
static void leader_instance(struct lib_leader *l)
{
	char boot[64];

	boot_id(boot, sizeof(boot));
	snprintf(l->instance, sizeof(l->instance), "%s %s %ld %llu", l->hostname, boot,
		 (long)getpid(), proc_start(getpid()));
}

static bool leader_instance_dead(struct lib_leader *l, const char *instance)
{
	char host[LFS_NODE_NAME_MAX + 1], boot[64], mine[64];
	unsigned long long start;
	long pid;

	if (sscanf(instance, "%64s %63s %ld %llu", host, boot, &pid, &start) != 4 ||
	    strcmp(host, l->hostname))
		return false;
	boot_id(mine, sizeof(mine));
	if (strcmp(boot, mine))
		return true; /* the host restarted since */
	return pid <= 0 || proc_start(pid) != start;
}

static void leader_addresses(struct lib_leader *l, const struct lib_config *cfg)
{
	size_t o = 0;

	for (int i = 0; i < cfg->nlisten && o < sizeof(l->addresses); i++)
		if (strncmp(cfg->listen[i], "unix:", 5))
			o += snprintf(l->addresses + o, sizeof(l->addresses) - o, "%s%s",
				      o ? "," : "", cfg->listen[i]);
}

static void leader_seen(struct lib_leader *l, const struct lib_leader_row *row)
{
	pthread_mutex_lock(&l->mu);
	l->row = *row;
	pthread_mutex_unlock(&l->mu);
}

/*
 * At start: the lead if the row expired, or names this librarian and its
 * process is gone (a restart: no wait for the expiry). A row of this name
 * whose process may live (another librarian given the same name, here or
 * on another host) is not taken from it: a standby, saying so.
 */
static int leader_take_at_start(struct lib_leader *l, struct lib_store *s,
				const struct lib_config *cfg, struct lib_leader_row *row,
				struct lib_err *e)
{
	const char *restart_of = NULL;
	int r = lib_store_leader_read(s, row, e);

	if (r < 0)
		return r;
	if (r == 1 && row->live_ms && !strcmp(row->holder, l->name)) {
		if (leader_instance_dead(l, row->instance))
			restart_of = row->instance;
		else
			lib_log("warning: the leader row names '%s' and is live for %lld ms more, held by another process (%s; this one is %s): not taken before it expires; give every librarian its own name",
				l->name, (long long)row->live_ms,
				row->instance[0] ? row->instance :
						   "a librarian of an earlier version",
				l->instance);
	}
	r = lib_store_leader_take(s, l->name, l->addresses, l->instance, cfg->leader_ttl_ms,
				  restart_of, row, e);
	if (r == 0)
		r = lib_store_leader_read(s, row, e);
	return r;
}

/* At start: the lead (leader_take_at_start()), else a standby. */
int lib_leader_open(struct lib_config *cfg, struct lib_store *s, struct lib_leader **out,
		    struct lib_err *e)
{
	struct lib_leader *l = calloc(1, sizeof(*l));
	struct lib_leader_row row = { 0 };
	int r;

	if (!l)
		return lib_fail(e, ENOMEM, "out of memory");
	pthread_mutex_init(&l->mu, NULL);
	if (gethostname(l->hostname, sizeof(l->hostname) - 1) < 0)
		snprintf(l->hostname, sizeof(l->hostname), "librarian");
	l->name = cfg->name ? cfg->name : l->hostname;
	leader_addresses(l, cfg);
	leader_instance(l);
	s->leader = true;
	r = leader_take_at_start(l, s, cfg, &row, e);
	if (r < 0) {
		lib_leader_free(l);
		return r;
	}
	leader_seen(l, &row);
	l->epoch = s->epoch;
	l->next_ms = lib_mono_ms() + cfg->leader_refresh_ms;
	if (l->epoch)
		lib_log("'%s' is the leader (epoch %lld)", l->name, (long long)l->epoch);
	else
		lib_log("'%s' is a standby: the leader is '%s' (epoch %lld, at %s); taking over when its row expires (in %lld ms at most)",
			l->name, row.holder, (long long)row.epoch, row.addresses,
			(long long)row.live_ms);
	*out = l;
	return 0;
}

void lib_leader_free(struct lib_leader *l)
{
	if (!l)
		return;
	pthread_mutex_destroy(&l->mu);
	free(l);
}

bool lib_leader_leading(struct lib_leader *l)
{
	return !l || __atomic_load_n(&l->epoch, __ATOMIC_ACQUIRE) != 0;
}

int64_t lib_leader_epoch(struct lib_leader *l)
{
	return l ? __atomic_load_n(&l->epoch, __ATOMIC_ACQUIRE) : 0;
}

/* The epoch is gone: a standby from now on. */
void lib_leader_deposed(struct lib_server *srv)
{
	struct lib_leader *l = srv->leader;
	struct lib_leader_row row = { 0 };
	struct lib_err e = { 0 };

	if (!l || !l->epoch)
		return;
	__atomic_store_n(&l->epoch, 0, __ATOMIC_RELEASE);
	srv->store->epoch = 0;
	lib_store_leader_read(srv->store, &row, &e);
	leader_seen(l, &row);
	/*
	 * Look again at once: a row that expired while the database was away
	 * (nobody took it) is taken back at the next turn of the loop, with a
	 * new epoch and every node counted as heard; a row another holds stays
	 * theirs (the database decides).
	 */
	l->next_ms = lib_mono_ms();
	lib_log("'%s' is no longer the leader: the row holds epoch %lld of '%s'; a standby from now on",
		l->name, (long long)row.epoch, row.holder);
	lib_audit_event(srv, "leader.lost",
			json_pack("{s:I,s:s}", "row_epoch", (json_int_t)row.epoch, "row_holder",
				  row.holder));
}

/* The standby took the lead: the catalogue prepared, every node heard now. */
static void leader_become(struct lib_server *srv, const struct lib_leader_row *row)
{
	struct lib_leader *l = srv->leader;
	struct lib_store *s = srv->store;
	struct lib_err e = { 0 };

	if (lib_serve_prepare(s, srv->cfg, &e) < 0) {
		lib_log("'%s' took the lead (epoch %lld) but cannot serve the catalogue: %s; giving it up",
			l->name, (long long)row->epoch, e.msg);
		lib_store_leader_release(s, &e);
		s->epoch = 0;
		return;
	}
	lib_lease_takeover(srv);
	s->instance = lib_random(s) | 1; /* free.unknown tokens of an earlier lead are void */
	leader_seen(l, row);
	__atomic_store_n(&l->epoch, row->epoch, __ATOMIC_RELEASE);
	lib_log("'%s' is the leader (epoch %lld): took over; every node counts as heard now",
		l->name, (long long)row->epoch);
	lib_audit_event(srv, "leader.took", NULL);
}

/* Before each round: renew the row (leader) or poll it (standby) when due. */
/*
 * The database did not answer: try again within LEADER_RETRY_MS rather than
 * a whole refresh interval, so that the row is renewed (or taken back) as
 * soon as the database is there again, after a failover say.
 */
#define LEADER_RETRY_MS 250

static void leader_retry_soon(struct lib_server *srv, const char *what, const struct lib_err *e)
{
	struct lib_leader *l = srv->leader;
	int64_t soon = lib_mono_ms() + LEADER_RETRY_MS;

	if (soon < l->next_ms)
		l->next_ms = soon;
	lib_log("%s: %s", what, e->msg);
}

void lib_leader_tick(struct lib_server *srv)
{
	struct lib_leader *l = srv->leader;
	struct lib_leader_row row = { 0 };
	struct lib_err e = { 0 };
	int64_t now = lib_mono_ms();
	int r;

	if (!l || now < l->next_ms)
		return;
	l->next_ms = now + srv->cfg->leader_refresh_ms;
	if (l->epoch) {
		r = lib_store_leader_renew(srv->store, srv->cfg->leader_ttl_ms, &e);
		if (r == 0)
			lib_leader_deposed(srv);
		else if (r < 0)
			leader_retry_soon(srv, "cannot renew the leader row", &e);
		return;
	}
	r = lib_store_leader_take(srv->store, l->name, l->addresses, l->instance,
				  srv->cfg->leader_ttl_ms, NULL, &row, &e);
	if (r == 1)
		leader_become(srv, &row);
	else if (r == 0 && lib_store_leader_read(srv->store, &row, &e) == 1)
		leader_seen(l, &row);
	else if (r < 0)
		leader_retry_soon(srv, "cannot read the leader row", &e);
}

/* How long the loop may wait for events before the next tick is due. */
int lib_leader_wait_ms(struct lib_server *srv, int max)
{
	int64_t left;

	if (!srv->leader)
		return max;
	left = srv->leader->next_ms - lib_mono_ms();
	return left < 0 ? 0 : left < max ? (int)left : max;
}

/* A clean stop of the leader: the row expires now, a standby need not wait. */
void lib_leader_stop(struct lib_server *srv)
{
	struct lib_leader *l = srv->leader;
	struct lib_err e = { 0 };

	if (!l || !l->epoch)
		return;
	if (lib_store_leader_release(srv->store, &e) < 0)
		lib_log("cannot release the leader row: %s", e.msg);
	else
		lib_log("'%s' gave up the lead (epoch %lld)", l->name, (long long)l->epoch);
}

/* A standby's refusal: EREMOTE naming the leader (the reply's error.leader too). */
int lib_leader_refuse(struct lib_server *srv, struct lib_err *e)
{
	struct lib_leader *l = srv->leader;
	struct lib_leader_row row;

	pthread_mutex_lock(&l->mu);
	row = l->row;
	pthread_mutex_unlock(&l->mu);
	if (!row.live_ms || !row.epoch)
		return lib_fail(
			e, EREMOTE,
			"librarian '%s' is a standby and no librarian leads now (epoch %lld of '%s' expired): try again within %d ms",
			l->name, (long long)row.epoch, row.holder,
			srv->cfg->leader_ttl_ms + srv->cfg->leader_refresh_ms);
	return lib_fail(e, EREMOTE,
			"librarian '%s' is a standby: the leader is '%s' (epoch %lld) at %s",
			l->name, row.holder, (long long)row.epoch,
			row.addresses[0] ? row.addresses : "(no TCP address)");
}

/* error.leader of an EREMOTE reply: {"name", "epoch", "addresses": [...]}, or null. */
json_t *lib_leader_json(struct lib_server *srv)
{
	struct lib_leader *l = srv->leader;
	struct lib_leader_row row;
	json_t *a, *o;
	char *save = NULL, *t;

	if (!l)
		return json_null();
	pthread_mutex_lock(&l->mu);
	row = l->row;
	pthread_mutex_unlock(&l->mu);
	if (!row.epoch)
		return json_null();
	a = json_array();
	for (t = strtok_r(row.addresses, ",", &save); t; t = strtok_r(NULL, ",", &save))
		json_array_append_new(a, json_string(t));
	o = json_pack("{s:s,s:I,s:o,s:b}", "name", row.holder, "epoch", (json_int_t)row.epoch,
		      "addresses", a, "live", row.live_ms > 0);
	return o ? o : json_null();
}
