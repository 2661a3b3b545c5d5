// SPDX-License-Identifier: GPL-2.0
/*
 * Background checkpoints (daemon only). A checkpoint copies the WAL's pages
 * into the database file and syncs it: with a million books the pages a few
 * hundred requests touch are scattered, and done on the request path every
 * few requests (SQLite's auto-checkpoint) this was the largest cost of a
 * request and all of its tail latency. Here a thread with its own connection
 * runs PASSIVE checkpoints, which never block the serving connection; after
 * a complete one, the next write transaction starts the WAL over from its
 * beginning. Under a steady stream of writes the thread's checkpoint is
 * never complete (frames arrive while it syncs), so once the WAL reaches
 * CKPT_INLINE_FRAMES the serving connection, which no write can overtake,
 * copies what the thread has not yet copied: a small remainder, which
 * bounds the WAL.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

#define CKPT_FRAMES 4000 /* wake the thread at this many WAL frames */
#define CKPT_INLINE_FRAMES 12000 /* 12 MiB of 1 KiB pages (48 of 4 KiB): finish inline */
/*
 * synchronous = full: SQLite's auto-checkpoint on the request path at this
 * many frames. Each checkpoint syncs the WAL and the database once more,
 * and the pages several requests touch are copied once: at 256 frames (3.7
 * cycles of the bench) a cycle cost 3.77 fdatasync calls and 32 pwrite
 * calls, at 2,000 3.10 and 23.5 (plus 20.4 pread), at 8,000 (8 MiB of
 * 1 KiB pages, ~116 cycles) 3.03 and 17.6 (14.6 pread): a checkpoint then
 * copies most of a 40,000-book catalogue's pages, so more frames gain
 * little (docs/bench-librarian.md).
 */
#define CKPT_FULL_FRAMES 8000

struct lib_ckpt {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	sqlite3 *db;
	bool want, stop;
};

static void *ckpt_main(void *arg)
{
	struct lib_ckpt *c = arg;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		while (!c->want && !c->stop)
			pthread_cond_wait(&c->cond, &c->lock);
		if (c->stop)
			break;
		c->want = false;
		pthread_mutex_unlock(&c->lock);
		sqlite3_wal_checkpoint_v2(c->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
		pthread_mutex_lock(&c->lock);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

static int ckpt_wal_hook(void *arg, sqlite3 *db, const char *name, int frames)
{
	struct lib_ckpt *c = arg;

	if (frames >= CKPT_INLINE_FRAMES) {
		sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
	} else if (frames >= CKPT_FRAMES) {
		pthread_mutex_lock(&c->lock);
		c->want = true;
		pthread_cond_signal(&c->cond);
		pthread_mutex_unlock(&c->lock);
	}
	return SQLITE_OK;
}

static void ckpt_free(struct lib_ckpt *c)
{
	sqlite3_close(c->db);
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

int lib_store_checkpointer(struct lib_store *s, bool on, struct lib_err *e)
{
	struct lib_ckpt *c = s->ckpt;
	const char *path;
	int r;

	if (!on) {
		if (!c)
			return 0;
		sqlite3_wal_autocheckpoint(s->db, 256); /* replaces the hook */
		pthread_mutex_lock(&c->lock);
		c->stop = true;
		pthread_cond_signal(&c->cond);
		pthread_mutex_unlock(&c->lock);
		pthread_join(c->thread, NULL);
		ckpt_free(c);
		s->ckpt = NULL;
		return 0;
	}
	if (c)
		return 0;
	/*
	 * With synchronous = FULL every commit already waits for an fsync of
	 * the WAL, and a checkpoint's fsync of the database running beside it
	 * delays those further (measured: 623 -> 304 cycles/s at 40,000 books):
	 * there the request path keeps SQLite's auto-checkpoint, every
	 * CKPT_FULL_FRAMES frames rather than SQLite's 1,000 or the tools' 256.
	 */
	if (s->db && s->cfg && s->cfg->sync_full)
		sqlite3_wal_autocheckpoint(s->db, CKPT_FULL_FRAMES);
	if (!s->cfg || s->cfg->sync_full || !s->db)
		return 0; /* PostgreSQL: the server checkpoints */
	path = sqlite3_db_filename(s->db, "main");
	c = calloc(1, sizeof(*c));
	if (!c)
		return lib_fail(e, ENOMEM, "out of memory");
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	if (sqlite3_open_v2(path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
			    lib_wal_vfs()) != SQLITE_OK ||
	    sqlite3_exec(c->db,
			 s->cfg && !s->cfg->sync_full ? "PRAGMA synchronous = NORMAL" :
							"PRAGMA synchronous = FULL",
			 NULL, NULL, NULL) != SQLITE_OK) {
		r = lib_fail(e, EIO, "%s: cannot open a checkpoint connection: %s", path,
			     c->db ? sqlite3_errmsg(c->db) : "out of memory");
		ckpt_free(c);
		return r;
	}
	r = pthread_create(&c->thread, NULL, ckpt_main, c);
	if (r) {
		ckpt_free(c);
		return lib_fail(e, r, "cannot start the checkpoint thread: %s", strerror(r));
	}
	s->ckpt = c;
	sqlite3_wal_hook(s->db, ckpt_wal_hook, c);
	return 0;
}

/* At shutdown: stop the thread and leave an empty WAL behind a last checkpoint. */
void lib_store_checkpoint_final(struct lib_store *s)
{
	lib_store_checkpointer(s, false, NULL);
	if (s->db)
		sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
}
