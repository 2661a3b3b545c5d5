// SPDX-License-Identifier: MIT
/*
 * timeit LABEL FILE CMD [ARGS...]: run CMD (posix_spawnp, stdout to
 * /dev/null), wait for it, and append "LABEL MILLISECONDS" to FILE, the time
 * from just before the spawn to its exit (CLOCK_MONOTONIC). Exits with CMD's
 * status, or 127 if it could not be run.
 *
 * Why not `date +%s%N` around the command in the shell: under TCG every
 * fork+exec of the shell costs about as much as a whole lfsvol command, and
 * two of them would be charged to every measurement.
 *
 * With TIMEIT_TRACE set, the spawn and the exit are also written to stderr
 * as lfsvol's LFSVOL_TRACE writes its phases (same clock, same format), so
 * that a trace starts at the spawn and ends at the exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void trace(const char *what, double t)
{
	if (getenv("TIMEIT_TRACE"))
		fprintf(stderr, "lfsvol: trace %.3f ms [%d] timeit: %s\n", t, (int)getpid(), what);
}

int main(int argc, char **argv)
{
	posix_spawn_file_actions_t fa;
	double t0, t1;
	pid_t pid;
	FILE *f;
	int st, r;

	if (argc < 4) {
		fprintf(stderr, "usage: timeit LABEL FILE CMD [ARGS...]\n");
		return 2;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	t0 = now_ms();
	trace("spawn", t0);
	r = posix_spawnp(&pid, argv[3], &fa, NULL, argv + 3, environ);
	if (r) {
		fprintf(stderr, "timeit: cannot run %s: %s\n", argv[3], strerror(r));
		return 127;
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 127;
	t1 = now_ms();
	trace("exit", t1);
	f = fopen(argv[2], "a");
	if (!f || fprintf(f, "%s %.3f\n", argv[1], t1 - t0) < 0 || fclose(f)) {
		fprintf(stderr, "timeit: cannot append to %s\n", argv[2]);
		return 2;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
