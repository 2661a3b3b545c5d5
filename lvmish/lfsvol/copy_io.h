/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The copy of a shelf (`lfsvol copy'): the bytes (copy_data.c), which the
 * node agent's child moves (`lfsvol agent --copy', lvmish/agent/copyjob.c),
 * and what the command and the agent say to each other on agent.sock.
 */
#ifndef LFSVOL_COPY_IO_H
#define LFSVOL_COPY_IO_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

/* The attribute that marks a copy under way; activate refuses the shelf while it is set. */
#define LFSVOL_INCOMPLETE_KEY "lfs.incomplete"

/*
 * agent.sock operations the agent answers itself (docs/LFSVOL.md, "copy"):
 * start {src, dst, src_ours, max_rate}: both active here, DST for writing;
 * get {dst}: the copy's record (copyjob.c's copy_json);
 * cancel {dst}: its child stopped (and waited for), the record kept;
 * forget {dst}: the record dropped, once the command has finished DST.
 */
#define LFSVOL_COPY_OP_START "agent.copy.start"
#define LFSVOL_COPY_OP_GET "agent.copy.get"
#define LFSVOL_COPY_OP_CANCEL "agent.copy.cancel"
#define LFSVOL_COPY_OP_FORGET "agent.copy.forget"

struct lfsvol_copy_io {
	const char *src, *dst; /* shelf names, for the messages */
	const char *src_disk, *dst_disk; /* "lfsN" */
	uint64_t bytes; /* to copy */
	uint64_t max_rate; /* bytes per second; 0: as fast as it goes */
	volatile sig_atomic_t *stop; /* set by a signal: end early, with an error */
	/* called after every chunk with io->done */
	void (*progress)(const struct lfsvol_copy_io *io, void *arg);
	void *arg;
	uint64_t done; /* out: bytes copied */
	int64_t ms; /* out: how long the copy took */
};

/* Copy io->bytes from /dev/SRC_DISK to /dev/DST_DISK and flush. 0 or a reported -errno. */
int lfsvol_copy_bytes(struct lfsvol_copy_io *io);
/* MiB/s of bytes in ms. */
double lfsvol_copy_mib_s(uint64_t bytes, int64_t ms);
/* "\rcopying SRC: X of Y (P%), R MiB/s" on stderr, a newline after the last. */
void lfsvol_copy_line(const char *src, uint64_t done, uint64_t total, int64_t ms, bool last);

/*
 * copy_follow.c, the command's side: follow the agent's copy to dst until
 * it ends, with a progress line on a terminal. 0 once it is done (*rec:
 * its last record, for the caller to decref); else a reported failure:
 * the copy failed, or a signal set *stop (-EINTR; with cancel the agent
 * has stopped the copy then), or the agent went away
 * (!lfsvol_lib_alive(lib) then).
 */
struct lfsvol_lib;
/* One of the operations on the copy to dst; a refusal reported ("WHAT: node agent: ..."). */
int lfsvol_copy_ask(struct lfsvol_lib *lib, const char *what, const char *op, const char *dst,
		    json_t **rec);
int lfsvol_copy_follow(struct lfsvol_lib *lib, const char *what, const char *dst,
		       volatile sig_atomic_t *stop, bool cancel, json_t **rec);

#endif /* LFSVOL_COPY_IO_H */
