// SPDX-License-Identifier: GPL-2.0
/*
 * walvfs: an SQLite VFS stacked on the default one that hands a
 * transaction's WAL frames to the kernel in one write.
 *
 * SQLite writes every WAL frame with two write calls (the 24-byte frame
 * header, then the page). A librarian request changes 15 to 20 pages, so
 * each commit cost 30 to 40 system calls, the largest single cost of a
 * request on a host where one costs over a microsecond
 * (docs/bench-librarian.md). This shim buffers sequential writes to a WAL
 * file and writes them with one pwrite:
 *
 * - as soon as the buffer ends with a complete commit frame, one whose
 *   header has a nonzero database size (the WAL format,
 *   https://www.sqlite.org/fileformat2.html#walformat). SQLite writes a
 *   commit's frames before it publishes them in the wal-index, so no other
 *   connection can look for a frame that is still in the buffer, and an
 *   error writing the commit is returned by the commit's own xWrite: the
 *   transaction fails as it would without the shim;
 * - before any other operation on the file (read, sync, truncate, size,
 *   file control, close), before a write that does not continue the
 *   buffer (SQLite rewriting a frame of its open transaction), when the
 *   buffer is full, and when the frame size is not known.
 *
 * A crash loses at most frames of a transaction that was not committed,
 * which recovery ignores as it does without the shim. Files other than WAL
 * files pass through unchanged.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "store.h"

#define WAL_HDR 32 /* WAL file header */
#define FRAME_HDR 24 /* frame header; bytes 4-7: database size after a commit, else 0 */
/*
 * Gather at most this much: the most the unix VFS writes in one call (its
 * seekAndWriteFd() masks the length with 0x1ffff; SQLite itself never
 * writes more than a frame at a time). 31 frames of 4 KiB pages.
 */
#define WV_BUF 0x1ffff

struct wv_file {
	sqlite3_file base;
	sqlite3_file *real;
	bool wal;
	bool gather; /* false once the WAL header made no sense: pass through */
	uint32_t frame; /* FRAME_HDR + page size, 0 = not known yet */
	unsigned char *buf;
	size_t len;
	sqlite3_int64 off; /* file offset of buf[0] */
};

static sqlite3_vfs wv_vfs;
static _Atomic unsigned long long wv_writes, wv_calls;

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The frame size from a WAL header; 0 if it is not one. */
static uint32_t wal_frame_size(const unsigned char *h)
{
	uint32_t magic = be32(h), page = be32(h + 8);

	if ((magic & ~1u) != 0x377f0682 || page < 512 || page > 65536 || (page & (page - 1)))
		return 0;
	return FRAME_HDR + page;
}

static int wv_flush(struct wv_file *p)
{
	int rc;

	if (!p->len)
		return SQLITE_OK;
	rc = p->real->pMethods->xWrite(p->real, p->buf, (int)p->len, p->off);
	wv_calls++;
	p->len = 0;
	return rc;
}

/* Learn the frame size from the WAL header already in the file. */
static void wv_learn_frame(struct wv_file *p)
{
	unsigned char h[WAL_HDR];

	if (p->real->pMethods->xRead(p->real, h, WAL_HDR, 0) == SQLITE_OK)
		p->frame = wal_frame_size(h);
	if (!p->frame)
		p->gather = false;
}

/* Does the buffer end with a whole frame that commits (or one we cannot see)? */
static bool wv_ends_commit(struct wv_file *p)
{
	sqlite3_int64 end = p->off + (sqlite3_int64)p->len, h;

	if (end < WAL_HDR + (sqlite3_int64)p->frame || (end - WAL_HDR) % p->frame)
		return false;
	h = end - p->frame;
	if (h < p->off)
		return true; /* its header was written before: be safe */
	return be32(p->buf + (h - p->off) + 4) != 0;
}

static int wv_write(sqlite3_file *f, const void *data, int n, sqlite3_int64 off)
{
	struct wv_file *p = (struct wv_file *)f;
	int rc;

	if (!p->wal || n <= 0)
		return p->real->pMethods->xWrite(p->real, data, n, off);
	wv_writes++;
	if (!p->gather) {
		wv_calls++;
		return p->real->pMethods->xWrite(p->real, data, n, off);
	}
	if (off == 0 && n >= WAL_HDR) {
		p->frame = wal_frame_size(data); /* a new WAL header */
		if (!p->frame)
			p->gather = false;
	}
	if (p->len && (off != p->off + (sqlite3_int64)p->len || p->len + (size_t)n > WV_BUF)) {
		rc = wv_flush(p);
		if (rc != SQLITE_OK)
			return rc;
	}
	if (!p->frame && p->gather && off >= WAL_HDR)
		wv_learn_frame(p);
	if (!p->gather || (size_t)n > WV_BUF) {
		wv_calls++;
		return p->real->pMethods->xWrite(p->real, data, n, off);
	}
	if (!p->buf) {
		p->buf = malloc(WV_BUF);
		if (!p->buf) {
			p->gather = false;
			wv_calls++;
			return p->real->pMethods->xWrite(p->real, data, n, off);
		}
	}
	if (!p->len)
		p->off = off;
	memcpy(p->buf + p->len, data, (size_t)n);
	p->len += (size_t)n;
	if (p->frame && wv_ends_commit(p))
		return wv_flush(p);
	return SQLITE_OK;
}

#define FLUSH_OR_FAIL(p)               \
	do {                           \
		int rc_ = wv_flush(p); \
		if (rc_ != SQLITE_OK)  \
			return rc_;    \
	} while (0)

static int wv_close(sqlite3_file *f)
{
	struct wv_file *p = (struct wv_file *)f;
	int rc = wv_flush(p), rc2 = p->real->pMethods->xClose(p->real);

	free(p->buf);
	p->buf = NULL;
	return rc != SQLITE_OK ? rc : rc2;
}

static int wv_read(sqlite3_file *f, void *data, int n, sqlite3_int64 off)
{
	struct wv_file *p = (struct wv_file *)f;

	FLUSH_OR_FAIL(p);
	return p->real->pMethods->xRead(p->real, data, n, off);
}

static int wv_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	struct wv_file *p = (struct wv_file *)f;

	FLUSH_OR_FAIL(p);
	return p->real->pMethods->xTruncate(p->real, size);
}

static int wv_sync(sqlite3_file *f, int flags)
{
	struct wv_file *p = (struct wv_file *)f;

	FLUSH_OR_FAIL(p);
	return p->real->pMethods->xSync(p->real, flags);
}

static int wv_file_size(sqlite3_file *f, sqlite3_int64 *size)
{
	struct wv_file *p = (struct wv_file *)f;

	FLUSH_OR_FAIL(p);
	return p->real->pMethods->xFileSize(p->real, size);
}

static int wv_lock(sqlite3_file *f, int level)
{
	struct wv_file *p = (struct wv_file *)f;

	return p->real->pMethods->xLock(p->real, level);
}

static int wv_unlock(sqlite3_file *f, int level)
{
	struct wv_file *p = (struct wv_file *)f;

	return p->real->pMethods->xUnlock(p->real, level);
}

static int wv_check_reserved(sqlite3_file *f, int *out)
{
	struct wv_file *p = (struct wv_file *)f;

	return p->real->pMethods->xCheckReservedLock(p->real, out);
}

static int wv_file_control(sqlite3_file *f, int op, void *arg)
{
	struct wv_file *p = (struct wv_file *)f;

	FLUSH_OR_FAIL(p);
	return p->real->pMethods->xFileControl(p->real, op, arg);
}

static int wv_sector_size(sqlite3_file *f)
{
	struct wv_file *p = (struct wv_file *)f;

	return p->real->pMethods->xSectorSize(p->real);
}

static int wv_device_characteristics(sqlite3_file *f)
{
	struct wv_file *p = (struct wv_file *)f;

	return p->real->pMethods->xDeviceCharacteristics(p->real);
}

static int wv_shm_map(sqlite3_file *f, int pg, int pgsz, int extend, void volatile **out)
{
	struct wv_file *p = (struct wv_file *)f;

	return p->real->pMethods->xShmMap(p->real, pg, pgsz, extend, out);
}

static int wv_shm_lock(sqlite3_file *f, int offset, int n, int flags)
{
	struct wv_file *p = (struct wv_file *)f;

	return p->real->pMethods->xShmLock(p->real, offset, n, flags);
}

static void wv_shm_barrier(sqlite3_file *f)
{
	struct wv_file *p = (struct wv_file *)f;

	p->real->pMethods->xShmBarrier(p->real);
}

static int wv_shm_unmap(sqlite3_file *f, int del)
{
	struct wv_file *p = (struct wv_file *)f;

	return p->real->pMethods->xShmUnmap(p->real, del);
}

static int wv_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **out)
{
	struct wv_file *p = (struct wv_file *)f;

	FLUSH_OR_FAIL(p);
	return p->real->pMethods->xFetch(p->real, off, n, out);
}

static int wv_unfetch(sqlite3_file *f, sqlite3_int64 off, void *ptr)
{
	struct wv_file *p = (struct wv_file *)f;

	return p->real->pMethods->xUnfetch(p->real, off, ptr);
}

static const sqlite3_io_methods wv_io = {
	.iVersion = 3,
	.xClose = wv_close,
	.xRead = wv_read,
	.xWrite = wv_write,
	.xTruncate = wv_truncate,
	.xSync = wv_sync,
	.xFileSize = wv_file_size,
	.xLock = wv_lock,
	.xUnlock = wv_unlock,
	.xCheckReservedLock = wv_check_reserved,
	.xFileControl = wv_file_control,
	.xSectorSize = wv_sector_size,
	.xDeviceCharacteristics = wv_device_characteristics,
	.xShmMap = wv_shm_map,
	.xShmLock = wv_shm_lock,
	.xShmBarrier = wv_shm_barrier,
	.xShmUnmap = wv_shm_unmap,
	.xFetch = wv_fetch,
	.xUnfetch = wv_unfetch,
};

static sqlite3_vfs *real_vfs(sqlite3_vfs *v)
{
	return v->pAppData;
}

static int wv_open(sqlite3_vfs *v, sqlite3_filename name, sqlite3_file *f, int flags, int *out)
{
	struct wv_file *p = (struct wv_file *)f;
	int rc;

	memset(p, 0, sizeof(*p));
	p->real = (sqlite3_file *)(p + 1);
	rc = real_vfs(v)->xOpen(real_vfs(v), name, p->real, flags, out);
	if (!p->real->pMethods)
		return rc; /* nothing to close */
	p->wal = flags & SQLITE_OPEN_WAL;
	p->gather = true;
	p->base.pMethods = &wv_io;
	return rc;
}

static int wv_delete(sqlite3_vfs *v, const char *name, int sync)
{
	return real_vfs(v)->xDelete(real_vfs(v), name, sync);
}

static int wv_access(sqlite3_vfs *v, const char *name, int flags, int *out)
{
	return real_vfs(v)->xAccess(real_vfs(v), name, flags, out);
}

static int wv_full_pathname(sqlite3_vfs *v, const char *name, int n, char *out)
{
	return real_vfs(v)->xFullPathname(real_vfs(v), name, n, out);
}

static void *wv_dlopen(sqlite3_vfs *v, const char *name)
{
	return real_vfs(v)->xDlOpen(real_vfs(v), name);
}

static void wv_dlerror(sqlite3_vfs *v, int n, char *msg)
{
	real_vfs(v)->xDlError(real_vfs(v), n, msg);
}

static void (*wv_dlsym(sqlite3_vfs *v, void *h, const char *sym))(void)
{
	return real_vfs(v)->xDlSym(real_vfs(v), h, sym);
}

static void wv_dlclose(sqlite3_vfs *v, void *h)
{
	real_vfs(v)->xDlClose(real_vfs(v), h);
}

static int wv_randomness(sqlite3_vfs *v, int n, char *out)
{
	return real_vfs(v)->xRandomness(real_vfs(v), n, out);
}

static int wv_sleep(sqlite3_vfs *v, int us)
{
	return real_vfs(v)->xSleep(real_vfs(v), us);
}

static int wv_current_time(sqlite3_vfs *v, double *out)
{
	return real_vfs(v)->xCurrentTime(real_vfs(v), out);
}

static int wv_last_error(sqlite3_vfs *v, int n, char *out)
{
	return real_vfs(v)->xGetLastError(real_vfs(v), n, out);
}

static int wv_current_time64(sqlite3_vfs *v, sqlite3_int64 *out)
{
	return real_vfs(v)->xCurrentTimeInt64(real_vfs(v), out);
}

static pthread_once_t wv_once = PTHREAD_ONCE_INIT;
static int wv_rc = SQLITE_ERROR;

static void wv_register(void)
{
	sqlite3_vfs *real = sqlite3_vfs_find(NULL);

	if (!real || real->iVersion < 2 || !real->xCurrentTimeInt64)
		return;
	wv_vfs = (sqlite3_vfs){
		.iVersion = 2,
		.szOsFile = (int)sizeof(struct wv_file) + real->szOsFile,
		.mxPathname = real->mxPathname,
		.zName = LIB_WAL_VFS,
		.pAppData = real,
		.xOpen = wv_open,
		.xDelete = wv_delete,
		.xAccess = wv_access,
		.xFullPathname = wv_full_pathname,
		.xDlOpen = wv_dlopen,
		.xDlError = wv_dlerror,
		.xDlSym = wv_dlsym,
		.xDlClose = wv_dlclose,
		.xRandomness = wv_randomness,
		.xSleep = wv_sleep,
		.xCurrentTime = wv_current_time,
		.xGetLastError = wv_last_error,
		.xCurrentTimeInt64 = wv_current_time64,
	};
	wv_rc = sqlite3_vfs_register(&wv_vfs, 0);
}

/* The name of the VFS to open the catalogue with: LIB_WAL_VFS, or NULL (the default) if it could not be registered. */
const char *lib_wal_vfs(void)
{
	pthread_once(&wv_once, wv_register);
	return wv_rc == SQLITE_OK ? LIB_WAL_VFS : NULL;
}

void lib_wal_vfs_stats(unsigned long long *writes, unsigned long long *calls)
{
	*writes = wv_writes;
	*calls = wv_calls;
}
