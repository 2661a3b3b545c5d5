// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's work on books, in a process of its own (`lfsvol agent
 * --job', started from /proc/self/exe): the kernel's BOOK_CHECK and
 * BOOK_ZERO, one book at a time, so the agent's main loop keeps serving
 * agent.sock and its renewal thread is never behind a zeroing. The child
 * is a new program, not a fork of a process with threads: nothing of the
 * agent's (locks, sessions) is in it.
 *
 * It reads its books from fd 0 (a memfd: struct job_book records after a
 * header) and writes one struct job_record per book as it is done to fd 1,
 * then one with index JOB_END and the status. Its nice value is raised:
 * the CPU goes to the agent, the renewals and the commands first.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent.h"
#include "msg.h"

#define JOB_MAGIC 0x4c46534aU /* "LFSJ" */
#define JOB_END UINT32_MAX
#define JOB_NICE 10

struct job_header {
	uint32_t magic;
	uint32_t n;
};

struct job_book {
	uint32_t ig, book, flags;
};

struct job_record {
	uint32_t index; /* the book's, or JOB_END */
	int32_t result; /* enum lfsvol_book_result, or 0 / -errno at JOB_END */
};

extern char **environ;

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The child's input, in a memfd: the whole list is there before it starts. */
static int job_input(const struct lfs_book *books, const uint8_t *flags, size_t n)
{
	struct job_header h = { JOB_MAGIC, (uint32_t)n };
	struct job_book *v = calloc(n ? n : 1, sizeof(*v));
	int fd = memfd_create("lfsvol-job", MFD_CLOEXEC), r;

	if (!v || fd < 0) {
		free(v);
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = (struct job_book){ books[i].ig, books[i].book, flags[i] };
	r = write_all(fd, &h, sizeof(h));
	if (!r)
		r = write_all(fd, v, n * sizeof(*v));
	free(v);
	if (!r && lseek(fd, 0, SEEK_SET) != 0)
		r = -errno;
	if (r) {
		close(fd);
		return r;
	}
	return fd;
}

static int job_spawn(struct lfsvol_job *j, int in, int out)
{
	char *argv[] = { "lfsvol", "agent", "--job", NULL };
	posix_spawn_file_actions_t fa;
	int r;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in, 0);
	posix_spawn_file_actions_adddup2(&fa, out, 1);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	r = -posix_spawn(&j->pid, "/proc/self/exe", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	return r;
}

int lfsvol_job_start(struct lfsvol_job *j, const struct lfs_book *books, const uint8_t *flags,
		     size_t n, uint64_t book_size)
{
	int p[2], in, r;

	memset(j, 0, sizeof(*j));
	j->fd = -1;
	j->books = calloc(n ? n : 1, sizeof(*j->books));
	j->result = malloc(n ? n : 1);
	if (!j->books || !j->result) {
		lfsvol_job_free(j);
		return -ENOMEM;
	}
	memcpy(j->books, books, n * sizeof(*books));
	memset(j->result, LFSVOL_BOOK_PENDING, n);
	j->n = n;
	j->book_size = book_size;
	in = job_input(books, flags, n);
	if (in < 0 || pipe2(p, O_CLOEXEC | O_NONBLOCK)) {
		r = in < 0 ? in : -errno;
		if (in >= 0)
			close(in);
		lfsvol_job_free(j);
		return r;
	}
	r = job_spawn(j, in, p[1]);
	close(in);
	close(p[1]);
	if (r) {
		close(p[0]);
		lfsvol_job_free(j);
		return r;
	}
	j->fd = p[0];
	j->started_ms = lfsvol_now_ms();
	return 0;
}

/* One record from the child. */
static void job_take(struct lfsvol_job *j, const struct job_record *rec)
{
	if (rec->index == JOB_END) {
		j->status = rec->result;
		j->finished = true;
	} else if (rec->index < j->n && rec->result < 0) {
		j->status = rec->result;
	} else if (rec->index < j->n) {
		j->result[rec->index] = (uint8_t)rec->result;
		j->done++;
		j->zeroed += rec->result == LFSVOL_BOOK_ZEROED;
		j->bad += rec->result == LFSVOL_BOOK_BAD;
	}
}

/* The child has ended (or closed its output): reap it. */
static void job_reap(struct lfsvol_job *j)
{
	int status = 0;

	close(j->fd);
	j->fd = -1;
	while (waitpid(j->pid, &status, 0) < 0 && errno == EINTR)
		;
	j->pid = 0;
	if (!j->finished && !j->status)
		j->status = WIFSIGNALED(status) ? -EINTR : -EPIPE;
	j->finished = true;
}

int lfsvol_job_read(struct lfsvol_job *j)
{
	uint8_t buf[4096];
	ssize_t n;

	while (j->fd >= 0) {
		n = read(j->fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n <= 0) {
			job_reap(j);
			break;
		}
		for (ssize_t k = 0; k < n; k++) {
			j->part[j->plen++] = buf[k];
			if (j->plen == sizeof(struct job_record)) {
				struct job_record rec;

				memcpy(&rec, j->part, sizeof(rec));
				job_take(j, &rec);
				j->plen = 0;
			}
		}
	}
	return 1;
}

void lfsvol_job_free(struct lfsvol_job *j)
{
	if (j->pid > 0) {
		kill(j->pid, SIGTERM);
		while (waitpid(j->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (j->fd >= 0)
		close(j->fd);
	free(j->books);
	free(j->result);
	memset(j, 0, sizeof(*j));
	j->fd = -1;
}

/* The child's part for one book: check, then zero if allowed and not zero already. */
static int child_book(struct lfs_client *c, const struct job_book *b)
{
	struct lfs_book book = { b->ig, b->book };
	bool yes = false;
	int r;

	if (b->flags & LFSVOL_JOB_CHECK) {
		r = lfsnl_books_check_zero(c, &book, 1, &yes);
		if (r)
			return r;
		if (yes)
			return LFSVOL_BOOK_ZERO;
	}
	if (!(b->flags & LFSVOL_JOB_ZERO))
		return LFSVOL_BOOK_UNTOUCHED;
	r = lfsnl_books_zero(c, &book, 1, &yes);
	if (r == -EIO) {
		fprintf(stderr, "lfsvol agent: book %u:%u not zeroed: %s\n", b->ig, b->book,
			lfs_client_error(c));
		return LFSVOL_BOOK_BAD;
	}
	if (r)
		return r;
	return yes ? LFSVOL_BOOK_ZEROED : LFSVOL_BOOK_UNTOUCHED;
}

static int child_read_input(struct job_book **v, uint32_t *n)
{
	struct job_header h;

	if (read(0, &h, sizeof(h)) != sizeof(h) || h.magic != JOB_MAGIC ||
	    h.n > LFS_SHELF_BOOKS_MAX)
		return -EINVAL;
	*v = calloc(h.n ? h.n : 1, sizeof(**v));
	if (!*v)
		return -ENOMEM;
	if (h.n && read(0, *v, h.n * sizeof(**v)) != (ssize_t)(h.n * sizeof(**v)))
		return -EINVAL;
	*n = h.n;
	return 0;
}

int lfsvol_job_child(void)
{
	struct job_record rec = { JOB_END, 0 };
	struct lfs_client *c = NULL;
	struct job_book *v = NULL;
	uint32_t n = 0;
	int r;

	setpriority(PRIO_PROCESS, 0, JOB_NICE);
	r = child_read_input(&v, &n);
	if (!r)
		r = lfs_client_open(&c);
	for (uint32_t i = 0; !r && i < n; i++) {
		struct job_record one = { i, child_book(c, &v[i]) };

		if (one.result < 0)
			fprintf(stderr, "lfsvol agent: book %u:%u: %s (%s)\n", v[i].ig, v[i].book,
				lfs_client_error(c), strerror(-one.result));
		if (write_all(1, &one, sizeof(one)))
			r = -EPIPE;
		else if (one.result < 0)
			r = one.result;
	}
	rec.result = r;
	write_all(1, &rec, sizeof(rec));
	lfs_client_close(c);
	free(v);
	return r ? LFSVOL_EFAIL : LFSVOL_OK;
}
