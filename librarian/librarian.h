/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal interfaces of the librarian daemon: configuration and geometry,
 * allocation policies and the request dispatcher. The catalogue's interface
 * is store.h, the operations' ops.h.
 * Library-style code returns negative errno and fills a struct lib_err with
 * a message naming the offending value; only the top level logs.
 */
#ifndef LIBRARIAN_H
#define LIBRARIAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include <pthread.h>

#include "lfs_librarian.h"
#include "lfs_rules.h"

/*
 * Shelf names and the other rules shared with the kernel are lfs_rules.h's.
 * Librarians before those rules took shelf names of up to 128 characters:
 * a catalogue may still hold such shelves, so lookups accept that length.
 */
#define LIB_OLD_NAME_MAX 128
#define LIB_ATTR_VALUE_MAX 4096
#define LIB_ATTRS_PER_SHELF 64
#define LIB_MAX_IGS (LFS_IG_MAX + 1)
#define LIB_MAX_NODES 16384
#define LIB_MAX_IG_BOOKS (1ULL << 32)
#define LIB_MAX_LISTEN 16
#define LIB_PSK_MAX 64
#define LIB_LIST_LIMIT 10000
#define LIB_BOOKS_LIMIT 65536

/* Book states as stored in the database; statements name them (store.h). */
enum lib_book_state {
	BOOK_FREE = 0,
	BOOK_INUSE = 1,
	BOOK_ZOMBIE = 2,
	BOOK_OFFLINE = 3,
	BOOK_BAD = 4, /* holds poisoned memory, on no shelf: never allocated (store_bad.c) */
};

struct lib_err {
	int err; /* positive errno */
	char msg[512];
};

/* fail.c: a line to stderr (the journal under systemd), whole even from two threads. */
void lib_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* fail.c: -err, with the message in *e (if not NULL). */
int lib_fail(struct lib_err *e, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

struct lib_ig {
	uint32_t ig;
	int node; /* index into cfg->nodes */
	uint64_t books;
};

/*
 * Access to a shelf, lowest first: a shelf a caller cannot see does not
 * exist for it (ENOENT); see lets it list and show the shelf, ro adds the
 * book map and read-only activation, rw exclusive activation, resize and
 * attributes, all destroy, rename and lfs.access (access.c).
 */
enum lib_access {
	ACC_NONE = 0,
	ACC_SEE = 1,
	ACC_RO = 2,
	ACC_RW = 3,
	ACC_ALL = 4,
};

/* A limit of librarian.conf; -1 for none. */
struct lib_quota {
	int64_t books;
	int64_t shelves;
};

struct lib_tenant {
	char *name;
	enum lib_access share; /* what its nodes may do with each other's shelves */
	struct lib_quota quota; /* of all its nodes' shelves together */
};

struct lib_node {
	char *name;
	int tenant; /* index into cfg->tenants, -1: the default tenant */
	int rack; /* index into cfg->racks */
	int enc; /* index into cfg->encs */
	int power; /* index into cfg->powers */
	int *igs; /* indexes into cfg->igs */
	int nigs;
	uint8_t key[LIB_PSK_MAX];
	size_t keylen;
};

struct lib_enc {
	char *name;
	int rack;
};

struct lib_config {
	char *path;
	char *db_path;
	char *audit_path; /* audit.c: the audit trail's JSON-lines file; NULL: none */
	char *metrics_listen; /* metrics.c: HOST:PORT of the Prometheus endpoint; NULL: none */
	char *listen[LIB_MAX_LISTEN];
	int nlisten;
	uint64_t book_size;
	int heartbeat_interval; /* seconds, advised to nodes */
	int lease_time; /* seconds a node's kernel keeps its shelves after a renewal */
	int fence_grace; /* seconds on top of lease_time before a takeover */
	/* fence_cmd.c: run on a lapsed node before a takeover; NULL: none (%n: its name) */
	char **fence_argv;
	int fence_timeout; /* seconds before the command is killed and the takeover refused */
	/* PostgreSQL's leader row (docs/HA.md): this librarian's name in it, its times */
	char *name;
	int leader_ttl_ms; /* the row expires this long after its last renewal */
	int leader_refresh_ms; /* the leader renews it (a standby polls it) this often */
	bool new_books_zero; /* new_books = "zero": memory new to the catalogue reads as zeroes */
	enum lfs_policy default_policy;
	int max_connections; /* authenticated TCP connections */
	int max_unauth; /* TCP connections before their TLS handshake is done */
	int max_unauth_per_addr;
	int max_conn_per_node; /* authenticated TCP connections of one node identity */
	int max_admin; /* unix socket connections */
	size_t max_message;
	int idle_timeout;
	int handshake_timeout;
	int max_shelves;
	int sync_full;
	unsigned int unix_mode;
	char *admin_name;
	uint8_t admin_key[LIB_PSK_MAX];
	size_t admin_keylen;
	enum lib_access share; /* of the default tenant (nodes in no tenant) */
	struct lib_quota node_quota; /* of each node's shelves */
	struct lib_tenant *tenants;
	int ntenants;

	char **racks;
	int nracks;
	struct lib_enc *encs;
	int nencs;
	char **powers;
	int npowers;
	struct lib_node *nodes;
	int nnodes;
	struct lib_ig *igs;
	int nigs;
	int *ig_index; /* IG number -> index + 1 into igs, 0 = none */
	uint64_t total_books;
};

int lib_config_load(const char *path, struct lib_config **out, struct lib_err *e);
/* The leader row's times fit the leases (checked for a PostgreSQL catalogue). */
int lib_config_check_leader(const struct lib_config *cfg, struct lib_err *e);
void lib_config_free(struct lib_config *cfg);
/* config_find.c: the index of a node, IG or tenant, -1 if none. */
int lib_config_find_node(const struct lib_config *cfg, const char *name);
int lib_config_find_ig(const struct lib_config *cfg, int64_t ig);
int lib_config_find_tenant(const struct lib_config *cfg, const char *name);
/* The tenant index of the node called name, -1 for the default tenant (or no node). */
int lib_config_tenant_of(const struct lib_config *cfg, const char *name);

/* alloc.c: allocation policies. */
struct lib_store;

struct lib_shelf_ctx {
	int64_t shelf_id;
	int64_t nbooks; /* current size */
	enum lfs_policy policy;
	uint32_t *req_igs; /* RequestIG list */
	int nreq_igs;
	int64_t *avoid; /* shelf ids for power-domain anti-affinity */
	int navoid;
	int node; /* requesting node index, -1 for none */
	int64_t *taken; /* the books the last grow took, in order (lib_shelf_ctx_free frees) */
};

int lib_alloc_books(struct lib_store *s, struct lib_shelf_ctx *sh, int64_t n, struct lib_err *e);

/* Requests. */
struct lib_identity {
	char name[LFS_NODE_NAME_MAX + 1];
	int node; /* index into cfg->nodes, -1 for admin */
	bool admin;
	bool tls; /* identity fixed by the TLS handshake */
	const char *peer; /* the connection's address, for the audit trail */
};

/* Node states as the catalogue's nodes table and node_state[] hold them. */
enum lib_node_state {
	NODE_ONLINE = 0,
	NODE_FENCING = 1, /* set offline while live: its activations end when it no longer is */
	NODE_OFFLINE = 2,
};

struct lib_server {
	struct lib_config *cfg;
	struct lib_store *store;
	/* lease.c: the service clock (milliseconds) and when each node was last heard */
	int64_t svc_origin; /* monotonic ms at start */
	int64_t svc_stalled; /* ms in which the event loop did not run: not counted */
	int64_t svc_last; /* monotonic ms of the last tick */
	int64_t *heard; /* per node: service ms of the last request read from it */
	pthread_mutex_t lease_mu; /* the clock, heard[], node_state[] writes (lease.c) */
	pthread_t loop_thread; /* the event loop's: only it ticks the clock */
	uint64_t beats; /* heartbeats the lease thread answered (atomic) */
	int beat_conns; /* connections it serves now (atomic) */
	int nfencing; /* nodes in NODE_FENCING */
	struct lib_fence_run *fence; /* per node: its fence_command (fence_cmd.c) */
	int64_t started; /* monotonic seconds */
	uint64_t requests;
	int nconns, nunauth, nadmin; /* open; in their TLS handshake; on the unix socket */
	/* rounds of the event loop by duration: under 1, 10, 100 ms, longer; the longest */
	uint64_t rounds[4];
	int64_t round_max_us, round_max_cpu_us; /* wall time; the thread's processor time */
	bool batch_open; /* a group-commit transaction is open */
	bool batch_failed; /* it was lost: its replies must not be sent */
	struct lib_err batch_err; /* why */
	struct lib_leader *leader; /* PostgreSQL: leader or standby (leader.c); NULL: SQLite */
	struct lib_audit *audit; /* audit.c: the audit trail, NULL without audit_log */
	struct lib_metrics *metrics; /* metrics.c: NULL without metrics_listen */
	struct lib_latency *latency; /* latency.c: request latencies per operation */
};

/* latency.c: request latencies per operation, from the read to the round's commit. */
#define LIB_LAT_BUCKETS 11
struct lib_lat_hist {
	uint64_t bucket[LIB_LAT_BUCKETS + 1]; /* the last: longer than every bound */
	uint64_t count;
	int64_t sum_us;
};
int64_t lib_mono_us(void);
int lib_latency_init(struct lib_server *srv, int nops);
void lib_latency_free(struct lib_server *srv);
void lib_latency_request(struct lib_server *srv, int op, int64_t read_us);
void lib_latency_round_end(struct lib_server *srv);
const struct lib_lat_hist *lib_latency_hist(struct lib_server *srv, int i);
int64_t lib_latency_bound_us(int b);
/* dispatch.c: the operations, by index (lib_op_count() of them). */
int lib_op_count(void);
const char *lib_op_name(int i);

int lib_batch_commit(struct lib_server *srv);

/* audit.c: the audit trail (docs/AUDIT.md). */
struct req;
int lib_audit_open(struct lib_server *srv);
void lib_audit_close(struct lib_server *srv);
/* A request of an OP_CHANGES operation, its outcome r; written at the round's commit. */
void lib_audit_request(struct lib_server *srv, const struct req *rq, json_t *req, int r);
/* A change the librarian makes by itself (fields: consumed), written at once. */
void lib_audit_event(struct lib_server *srv, const char *event, json_t *fields);
/* At a commit: the round's records; failed (or NULL) is the commit's error. */
void lib_audit_flush(struct lib_server *srv, const struct lib_err *failed);
json_t *lib_audit_stats(struct lib_server *srv);

/* metrics.c, metrics_text.c: Prometheus metrics (docs/METRICS.md). */
int lib_metrics_start(struct lib_server *srv);
void lib_metrics_stop(struct lib_server *srv);
/* In the event loop, between rounds: a new snapshot of the text. */
void lib_metrics_publish(struct lib_server *srv);
void lib_metrics_set(struct lib_server *srv, char *text, size_t len);
uint64_t lib_metrics_scrapes(struct lib_server *srv);

int64_t lib_now_mono(void);

/* One request as the server read it. */
struct lib_frame {
	const char *buf; /* its JSON text, or */
	size_t len;
	json_t *req; /* the request already parsed (stolen), or */
	json_t *reply; /* the error its parsing gave */
	int64_t read_at; /* service clock (ms) when it was read off the socket */
	int64_t read_us; /* monotonic us of that read (lib_mono_us), for its latency */
	/*
	 * Out of lib_handle_request: the result as JSON text (malloc'd, the
	 * caller's), when the reply's "result" is to be that text (shelf.list).
	 */
	char *result_text;
	size_t result_len;
};

json_t *lib_handle_request(struct lib_server *srv, struct lib_identity *who, bool *authed,
			   struct lib_frame *f);
/*
 * A heartbeat answered by the lease thread (beat.c) from ro, a read-only
 * connection to the catalogue: its last commit.
 */
json_t *lib_handle_beat(struct lib_server *srv, struct lib_store *ro, struct lib_identity *who,
			bool *authed, struct lib_frame *f);
/* Parse the frame's text into f->req, or f->reply with the error to send. */
void lib_parse_frame(struct lib_frame *f);
/* A parsed request that is a heartbeat (processed before the others of a round). */
bool lib_is_heartbeat(const struct lib_frame *f);

/* lease.c: the service clock, last heard, liveness. */
int64_t lib_mono_ms(void);
/* The service clock now, in ms (a tick: a gap over 2 s since the last is a stall). */
int64_t lib_svc_now(struct lib_server *srv);
/* lapse.c: the lease service started (the clock at 0, every node heard) and stopped. */
int lib_lease_start(struct lib_server *srv);
void lib_lease_free(struct lib_server *srv);
/* fence_cmd.c: fence_command, run for a lapsed node before a takeover. */
int lib_fence_init(struct lib_server *srv);
void lib_fence_poll(struct lib_server *srv);
void lib_fence_free(struct lib_server *srv);
void lib_node_heard(struct lib_server *srv, int node, int64_t at);
void lib_node_heard_online(struct lib_server *srv, int node, int64_t at);
int64_t lib_node_heard_at(struct lib_server *srv, int node);
void lib_node_set_state(struct lib_server *srv, int node, enum lib_node_state state);
void lib_node_states_copy(struct lib_server *srv, char *to);
/* The service clock without a tick (any thread). */
int64_t lib_svc_peek(struct lib_server *srv);
/* Milliseconds the node stays live (last heard + lease_time + fence_grace); <= 0: not live. */
int64_t lib_node_live_ms(struct lib_server *srv, int node);

/* leader.c: leader or standby on a PostgreSQL catalogue (docs/HA.md). */
struct lib_leader;
int lib_leader_open(struct lib_config *cfg, struct lib_store *s, struct lib_leader **out,
		    struct lib_err *e);
void lib_leader_free(struct lib_leader *l);
bool lib_leader_leading(struct lib_leader *l); /* true for NULL (SQLite) */
int64_t lib_leader_epoch(struct lib_leader *l); /* 0: a standby */
void lib_leader_deposed(struct lib_server *srv);
void lib_leader_tick(struct lib_server *srv);
int lib_leader_wait_ms(struct lib_server *srv, int max);
void lib_leader_stop(struct lib_server *srv);
int lib_leader_refuse(struct lib_server *srv, struct lib_err *e);
json_t *lib_leader_json(struct lib_server *srv);
/* lapse.c: a standby took the lead: node states reloaded, every node heard now. */
void lib_lease_takeover(struct lib_server *srv);
/* main.c: what a librarian does to a catalogue before it serves it (check, geometry). */
int lib_serve_prepare(struct lib_store *s, const struct lib_config *cfg, struct lib_err *e);

/* shown.c: a printable excerpt of a client-supplied string, for messages and logs. */
const char *lib_shown(const char *v, char *buf, size_t len);

/* main.c, cli.c: the command line. */
void lib_usage(FILE *f);
int lib_cmd_client(int argc, char **argv);

#endif
