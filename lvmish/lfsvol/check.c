// SPDX-License-Identifier: GPL-2.0
/*
 * The running agent's read-only check of this node's FREE books of unknown
 * content (agent.check_free): free.unknown lists a batch (256 MiB of books,
 * at least one) and a token; a child process reads it with the kernel's
 * BOOK_CHECK while the agent keeps serving; free.checked reports the books
 * that read as zeroes, and the librarian marks them known zero unless they
 * may have changed since it listed them (docs/PROTOCOL.md). Nothing is
 * written to the books.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent.h"
#include "kernel.h"
#include "msg.h"
#include "session.h"

/* bytes of books read by one check child (at least one book) */
#define CHECK_BATCH_BYTES (256ULL << 20)

static void check_pause(struct agent_state *st, int seconds)
{
	st->sweeping = false;
	json_decref(st->after);
	st->after = NULL;
	st->next_sweep = lfsvol_now_ms() + 1000LL * seconds;
}

static void check_failed(const struct lfsvol_conf *conf, struct agent_state *st, const char *what,
			 const char *why)
{
	snprintf(st->check, sizeof(st->check), "%s: %s", what, why);
	check_pause(st, conf->check_interval);
}

/*
 * The child: read the books through the driver (a session of its own) and
 * write an int (0 or -errno) and then one byte per book (1: reads as zeroes)
 * to fd 3. Nothing else of the agent's stays open in it.
 */
static void check_child(int wfd, const struct lfs_book *books, size_t n)
{
	struct lfs_client *c = NULL;
	bool *zero = calloc(n, sizeof(*zero));
	int r = -ENOMEM;

	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	if (wfd != 3 && dup2(wfd, 3) < 0)
		_exit(1);
	closefrom(4);
	if (zero) {
		r = lfs_client_open(&c);
		if (!r)
			r = lfs_books_check_zero(c, books, n, zero);
	}
	if (write(3, &r, sizeof(r)) != sizeof(r) || (!r && write(3, zero, n) != (ssize_t)n))
		_exit(1);
	_exit(0);
}

/* The book is on a fabric device attached here (and within it). */
static bool book_readable(const struct lfs_fabric_info *fv, size_t nf, json_t *book)
{
	uint32_t ig = (uint32_t)json_integer_value(json_array_get(book, 0));
	json_int_t b = json_integer_value(json_array_get(book, 1));

	for (size_t i = 0; i < nf; i++)
		if (fv[i].ig == ig)
			return b < (json_int_t)fv[i].nr_books;
	return false;
}

/*
 * The listed books that can be read here. Those that cannot are passed
 * over, and the next sweep tries them again: books of IGs not attached
 * (yet), and books beyond the end of the attached device (the librarian's
 * geometry gives the IG more books than the device holds). They are
 * counted in checked_skipped.
 */
static json_t *readable(struct lfs_client *drv, json_t *list, struct agent_state *st)
{
	struct lfs_fabric_info *fv = NULL;
	json_t *batch = json_array(), *el;
	size_t i, nf = 0;

	lfs_fabric_list(drv, &fv, &nf);
	json_array_foreach(list, i, el)
		if (book_readable(fv, nf, el))
			json_array_append(batch, el);
	free(fv);
	st->checked_skipped += (long long)(json_array_size(list) - json_array_size(batch));
	return batch;
}

static void sweep_done(const struct lfsvol_conf *conf, struct agent_state *st)
{
	char skipped[128] = "";

	if (st->checked_skipped)
		snprintf(
			skipped, sizeof(skipped),
			"; %lld passed over in this sweep (IG not attached here, or beyond the end of its device)",
			st->checked_skipped);
	snprintf(
		st->check, sizeof(st->check),
		"idle: every FREE book of this node was checked; %lld found zero, %lld not, since the agent started%s",
		st->checked_zero, st->checked_other, skipped);
	check_pause(st, conf->check_interval);
}

/* The next batch of the sweep (free.unknown after the last one); NULL: none, or failed. */
static json_t *list_batch(const struct lfsvol_conf *conf, struct lfsvol_lib *lib,
			  struct agent_state *st, uint64_t book_size)
{
	json_int_t limit =
		book_size >= CHECK_BATCH_BYTES ? 1 : (json_int_t)(CHECK_BATCH_BYTES / book_size);
	json_t *res = NULL;
	int r;

	if (limit > LFS_BOOKS_PER_ATTR)
		limit = LFS_BOOKS_PER_ATTR;
	r = lfsvol_lib_call(lib, "free.unknown",
			    st->after ? json_pack("{s:I,s:O}", "limit", limit, "after", st->after) :
					json_pack("{s:I}", "limit", limit),
			    &res);
	if (r) {
		check_failed(conf, st, "listing FREE books failed", lfsvol_lib_errmsg(lib));
		return NULL;
	}
	if (!json_array_size(json_object_get(res, "books"))) {
		sweep_done(conf, st);
		json_decref(res);
		return NULL;
	}
	return res;
}

/* Fork the child that reads the batch; the agent polls its pipe. */
static int fork_child(struct agent_state *st, json_t *batch)
{
	size_t i, n = json_array_size(batch);
	struct lfs_book *books = calloc(n, sizeof(*books));
	json_t *el;
	int p[2];

	if (!books || pipe2(p, O_CLOEXEC)) {
		free(books);
		return -errno;
	}
	json_array_foreach(batch, i, el) {
		books[i].ig = (uint32_t)json_integer_value(json_array_get(el, 0));
		books[i].book = (uint32_t)json_integer_value(json_array_get(el, 1));
	}
	st->job_pid = fork();
	if (st->job_pid == 0)
		check_child(p[1], books, n);
	close(p[1]);
	free(books);
	if (st->job_pid < 0) {
		close(p[0]);
		st->job_pid = 0;
		return -errno;
	}
	st->job_fd = p[0];
	return 0;
}

void lfsvol_check_start(const struct lfsvol_conf *conf, struct lfsvol_lib *lib,
			struct lfs_client *drv, struct agent_state *st)
{
	uint64_t bs = lib ? lfsvol_lib_book_size(lib) : 0;
	json_t *res, *list, *batch;
	int r;

	if (!conf->check_free || !lib || !bs || st->job_fd >= 0 ||
	    (!st->sweeping && lfsvol_now_ms() < st->next_sweep))
		return;
	if (!st->sweeping) {
		st->sweeping = true;
		st->checked_skipped = 0;
		json_decref(st->after);
		st->after = NULL;
	}
	res = list_batch(conf, lib, st, bs);
	if (!res)
		return;
	list = json_object_get(res, "books");
	/* the sweep goes on after this batch, whatever becomes of it */
	json_decref(st->after);
	st->after = json_incref(json_array_get(list, json_array_size(list) - 1));
	batch = readable(drv, list, st);
	r = json_array_size(batch) ? fork_child(st, batch) : 0;
	if (r)
		check_failed(conf, st, "cannot start a check", strerror(-r));
	if (r || !json_array_size(batch)) {
		json_decref(batch); /* none attached here: the next batch at once */
		json_decref(res);
		return;
	}
	st->job_books = batch;
	snprintf(st->job_token, sizeof(st->job_token), "%s",
		 json_string_value(json_object_get(res, "token")) ?: "");
	snprintf(st->check, sizeof(st->check), "reading %zu books from [%lld, %lld]",
		 json_array_size(batch),
		 (long long)json_integer_value(json_array_get(json_array_get(batch, 0), 0)),
		 (long long)json_integer_value(json_array_get(json_array_get(batch, 0), 1)));
	json_decref(res);
}

/* The child wrote its result (or died): it has exited, or is about to. */
static void job_end(struct agent_state *st)
{
	close(st->job_fd);
	st->job_fd = -1;
	waitpid(st->job_pid, NULL, 0);
	st->job_pid = 0;
}

/* The child's answer: 0 and one byte per book, or -errno; -EPIPE if it ended early. */
static int read_result(struct agent_state *st, unsigned char *zero, size_t n)
{
	size_t got = 0;
	ssize_t k;
	int r = -EPIPE;

	while (got < n + sizeof(int) &&
	       ((k = read(st->job_fd, zero + got, n + sizeof(int) - got)) > 0 ||
		(k < 0 && errno == EINTR)))
		got += k > 0 ? (size_t)k : 0;
	job_end(st);
	if (got >= sizeof(int))
		memcpy(&r, zero, sizeof(int));
	if (!r && got < n + sizeof(int))
		r = -EPIPE;
	return r;
}

/* free.checked with the books that read as zeroes. */
static void report_checked(const struct lfsvol_conf *conf, struct lfsvol_lib *lib,
			   struct agent_state *st, const unsigned char *zero, size_t n)
{
	json_t *ok = json_array(), *res = NULL, *el;
	json_int_t marked;
	size_t i;
	int r;

	json_array_foreach(st->job_books, i, el)
		if (zero[i])
			json_array_append(ok, el);
	r = lfsvol_lib_call(lib, "free.checked",
			    json_pack("{s:s,s:o}", "token", st->job_token, "books", ok), &res);
	if (r) {
		check_failed(conf, st, "reporting checked books failed", lfsvol_lib_errmsg(lib));
		return;
	}
	marked = json_integer_value(json_object_get(res, "marked"));
	st->checked_zero += marked;
	st->checked_other += (long long)n - marked;
	json_decref(res);
}

void lfsvol_check_collect(const struct lfsvol_conf *conf, struct lfsvol_lib *lib,
			  struct agent_state *st)
{
	size_t n = json_array_size(st->job_books);
	unsigned char *zero = calloc(n + sizeof(int), 1);
	char why[128];
	int r = -ENOMEM;

	if (zero)
		r = read_result(st, zero, n);
	else
		job_end(st);
	if (r) {
		snprintf(why, sizeof(why), "%s; next try in %d s",
			 r == -EPIPE ? "the reading process ended early" : strerror(-r),
			 conf->check_interval);
		check_failed(conf, st, "reading books failed", why);
	} else if (!lib) {
		check_pause(st, 0); /* the session was lost: again once it is back */
	} else {
		report_checked(conf, lib, st, zero + sizeof(int), n);
	}
	json_decref(st->job_books);
	st->job_books = NULL;
	free(zero);
	lfsvol_state_write(conf, st);
}

void lfsvol_check_stop(struct agent_state *st)
{
	if (st->job_pid > 0) {
		kill(st->job_pid, SIGTERM);
		waitpid(st->job_pid, NULL, 0);
	}
	if (st->job_fd >= 0)
		close(st->job_fd);
	json_decref(st->job_books);
	json_decref(st->after);
}
