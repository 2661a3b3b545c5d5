/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The renewal thread's insides (renew.c explains the thread), shared by
 * its files, bottom up: renew_state.c (its numbers, its state line and
 * STATE_DIR/renewal.json), renew_lease.c (the kernel's lease and fencing),
 * renew_conn.c (its librarian session), renew_beat.c (heartbeats and their
 * replies), renew.c (the thread). A file calls only those before it.
 */
#ifndef LFSVOL_RENEWER_H
#define LFSVOL_RENEWER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <jansson.h>

#include "agent.h"
#include "lfs_librarian.h"

#define RENEW_QUEUE 256 /* heartbeats remembered until their reply */
#define ACK_POLL_MIN_MS 1 /* SIOCOUTQ is polled from 1 ms, doubling ... */
#define ACK_POLL_MAX_MS 100 /* ... up to 100 ms, until the bytes are acknowledged */
#define SEND_TIMEOUT_MS 1000 /* a heartbeat's write may wait this long for buffer space */
#define LATE_MARGIN_MS 1000 /* a gap over interval + 1 s between renewals is late */
#define FENCED_LOG_MAX 64
/*
 * The thread runs at this SCHED_RR priority, as sanlock's daemons do: a
 * node busy with anything else (a copy through the page cache, kswapd, the
 * agent's own zeroing) cannot starve it of the CPU for a lease's length.
 */
#define RENEW_RT_PRIORITY 10
#define RENEW_STACK (256 << 10)

struct hb {
	int64_t id;
	uint64_t sent; /* CLOCK_BOOTTIME ns */
	bool renewed, probe;
};

struct renew_log {
	long long heartbeats, replies, renewals, by_ack, late, errors;
	int64_t longest_gap_ms;
	/* a heartbeat's round trip: from its send to the renewal on its acknowledgement or reply */
	int64_t rtt_last_us, rtt_max_us;
	uint64_t last_ns; /* when the kernel's lease was last renewed */
	time_t last_wall;
	char last_error[256];
};

struct lfsvol_renewer {
	const struct lfsvol_conf *conf;
	pthread_t thread;
	int wake[2]; /* written to stop the thread */
	int stop;
	pthread_mutex_t mu; /* guards zombies and interval */
	long long zombies;
	int interval; /* seconds */
	/* the thread's own */
	struct lfs_lib *lib;
	struct lfs_lib_inbox in;
	struct lfs_client *drv;
	struct hb q[RENEW_QUEUE]; /* oldest first */
	int nq;
	uint64_t next_send;
	int ack_wait_ms, backoff_ms, lease_s;
	int grace_s; /* the librarian's fence_grace, -1 until known */
	bool probing, dirty;
	bool replicated; /* the leader row: only a leader's reply renews */
	int64_t epoch; /* the newest leader epoch seen */
	int start; /* the index in the librarian list to try first */
	int suspect; /* the index of one that left a heartbeat unanswered, or -1 */
	char state[320];
	struct renew_log log;
	json_t *fenced;
};

/* renew_state.c */
bool renew_stopping(struct lfsvol_renewer *rn);
/* The heartbeat interval (s), as the librarian last said. */
int renew_interval(struct lfsvol_renewer *rn);
/* Wait ms, or less if told to stop. */
void renew_sleep(struct lfsvol_renewer *rn, int ms);
/* The state line of renewal.json ("connected to ...", "lost: ..."). */
void renew_state(struct lfsvol_renewer *rn, const char *fmt, ...) __printf(2, 3);
/* An error: logged, counted, the last one kept. */
void renew_error(struct lfsvol_renewer *rn, const char *fmt, ...) __printf(2, 3);
/* STATE_DIR/renewal.json, replaced atomically, if anything changed. */
void renew_log_write(struct lfsvol_renewer *rn);
void renew_fenced(struct lfsvol_renewer *rn, const char *name, const char *why);
/* The interval, lease time and ZOMBIE count of an auth or heartbeat reply. */
void renew_numbers(struct lfsvol_renewer *rn, json_t *res);

/* renew_lease.c: the kernel's side */
void renew_kernel(struct lfsvol_renewer *rn, uint64_t sent, bool by_ack);
int64_t renew_watchdog_ms(const struct lfsvol_renewer *rn);
/*
 * Fence the leased, active shelves here that the librarian does not list
 * (activations) although they existed when the heartbeat was sent; every
 * one if activations is NULL (the node is offline).
 */
void renew_fence_unlisted(struct lfsvol_renewer *rn, json_t *activations, uint64_t sent,
			  const char *why);
/* The node is offline: fence everything, renew nothing more, probe. */
void renew_offline(struct lfsvol_renewer *rn, const char *msg);

/* renew_conn.c: the thread's librarian session */
/* A session of the thread's own; 0, or -errno after the back-off. */
int renew_connect(struct lfsvol_renewer *rn);
void renew_drop(struct lfsvol_renewer *rn, const char *why);
/* EREMOTE: a standby or a deposed leader. The next connection starts at the leader it names. */
void renew_follow(struct lfsvol_renewer *rn, json_t *leader);

/* renew_beat.c: send a heartbeat when due, take replies and acknowledgements */
void renew_turn(struct lfsvol_renewer *rn);

#endif /* LFSVOL_RENEWER_H */
