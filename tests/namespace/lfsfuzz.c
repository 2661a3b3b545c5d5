// SPDX-License-Identifier: MIT
/*
 * lfsfuzz DIR OPS SEED: random namespace and data calls on the lfs
 * filesystem mounted at DIR (create, truncate, ftruncate, fallocate, rename,
 * unlink, setxattr with and without XATTR_CREATE/REPLACE, getxattr,
 * removexattr, open, open(O_TRUNC), mmap, write, store, read, load, fsync,
 * close), each checked against a model of every file's bytes, attributes
 * and of the errors the calls must give (EEXIST, ENOENT, ENODATA, EBUSY).
 * Bytes past the size read as zeroes after the file grows again, whatever a
 * mapping stored there in its last page. Every 250 calls the directory
 * listing, sizes and attributes are compared with the model. Prints "ok N
 * calls" or the first disagreement and exits 1. The files are kept to a few
 * 2 MiB books. With PREFIX, the names are PREFIXf0..f5 and other names
 * in DIR are left alone, so that several can run at once. LFSFUZZ_DUMP=DIR
 * writes the model's final bytes and xattrs there (dump_model()).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#define NAMES 6
#define SLOTS 4
#define MAX_SIZE (7 << 20)
#define PAGE 4096
#define XATTRS 2

struct file {
	bool exists;
	size_t size;
	unsigned char *data; /* MAX_SIZE + PAGE bytes, past size: what may be there */
	char xattr[XATTRS][32]; /* "": absent */
	bool has_xattr[XATTRS];
};

struct slot {
	int fd; /* -1: free */
	int file; /* index into files */
	unsigned char *map;
	size_t map_len;
};

static const char *dir, *prefix = "";
static struct file files[NAMES]; /* files[i] is named "f<i>" */
static struct slot slots[SLOTS];
static unsigned long long rng;
static unsigned long calls;
static char last[256];

static unsigned int rnd(unsigned int n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n ? (unsigned int)(rng % n) : 0;
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
	va_list ap;

	printf("%s%scall %lu (%s): ", prefix, *prefix ? ": " : "", calls, last);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	exit(1);
}

static char *path(int f)
{
	static char buf[2][256];
	static int k;

	k ^= 1;
	snprintf(buf[k], sizeof(buf[k]), "%s/%sf%d", dir, prefix, f);
	return buf[k];
}

/* How often each call ended how: the fuzz's coverage, printed at the end. */
#define OUTCOMES 64
static struct {
	const char *what;
	int err;
	unsigned long n;
} outcomes[OUTCOMES];

static void count(const char *what, int err)
{
	int i;

	for (i = 0; i < OUTCOMES && outcomes[i].what; i++)
		if (!strcmp(outcomes[i].what, what) && outcomes[i].err == err)
			break;
	if (i == OUTCOMES)
		return;
	outcomes[i].what = what;
	outcomes[i].err = err;
	outcomes[i].n++;
}

/* The call's outcome as an errno (0 for success) against the model's. */
static void expect(int ret, int want, const char *what)
{
	int got = ret < 0 ? errno : 0;

	count(what, want);
	if (got != want)
		fail("%s: expected %s, got %s", what, want ? strerrorname_np(want) : "success",
		     got ? strerrorname_np(got) : "success");
}

static bool file_open(int f)
{
	for (int s = 0; s < SLOTS; s++)
		if (slots[s].fd >= 0 && slots[s].file == f)
			return true;
	return false;
}

static bool file_mapped(int f)
{
	for (int s = 0; s < SLOTS; s++)
		if (slots[s].fd >= 0 && slots[s].file == f && slots[s].map)
			return true;
	return false;
}

/* The size changes: bytes between the old and the new end read as zeroes. */
static void model_resize(struct file *m, size_t size)
{
	if (size > m->size)
		memset(m->data + m->size, 0, size - m->size);
	m->size = size;
}

static void op_create(void)
{
	int f = rnd(NAMES), excl = rnd(2), fd;

	snprintf(last, sizeof(last), "create f%d%s", f, excl ? " excl" : "");
	fd = open(path(f), O_RDWR | O_CREAT | (excl ? O_EXCL : 0), 0644);
	expect(fd, excl && files[f].exists ? EEXIST : 0, "open(O_CREAT)");
	if (fd >= 0)
		close(fd);
	if (!files[f].exists) {
		files[f].exists = true;
		files[f].size = 0;
		memset(files[f].has_xattr, 0, sizeof(files[f].has_xattr));
	}
}

static void op_truncate(void)
{
	int f = rnd(NAMES), s = rnd(SLOTS), ret, want = 0;
	size_t size = rnd(4) ? rnd(MAX_SIZE) : rnd(3) * (2 << 20);
	bool by_fd = slots[s].fd >= 0 && rnd(2);

	if (by_fd)
		f = slots[s].file;
	snprintf(last, sizeof(last), "%s f%d %zu", by_fd ? "ftruncate" : "truncate", f, size);
	if (!files[f].exists)
		want = ENOENT;
	else if (size < files[f].size && file_mapped(f))
		want = EBUSY;
	ret = by_fd ? ftruncate(slots[s].fd, size) : truncate(path(f), size);
	expect(ret, want, "truncate");
	if (!want)
		model_resize(&files[f], size);
}

static void op_fallocate(void)
{
	int s = rnd(SLOTS), ret;
	size_t off = rnd(MAX_SIZE / 2), len = 1 + rnd(MAX_SIZE / 2);
	struct file *m;

	if (slots[s].fd < 0)
		return;
	m = &files[slots[s].file];
	snprintf(last, sizeof(last), "fallocate f%d %zu %zu", slots[s].file, off, len);
	ret = fallocate(slots[s].fd, 0, off, len);
	expect(ret, 0, "fallocate");
	if (off + len > m->size)
		model_resize(m, off + len);
	ret = fallocate(slots[s].fd, FALLOC_FL_KEEP_SIZE, 0, 4096);
	expect(ret, EOPNOTSUPP, "fallocate(KEEP_SIZE)");
}

static void op_rename(void)
{
	int a = rnd(NAMES), b = rnd(NAMES), noreplace = rnd(2), want = 0, ret;
	struct file tmp;

	snprintf(last, sizeof(last), "rename f%d f%d%s", a, b, noreplace ? " noreplace" : "");
	if (!files[a].exists)
		want = ENOENT;
	else if (files[b].exists && noreplace)
		want = EEXIST; /* also onto itself: the VFS says so */
	else if (a != b && files[b].exists && file_open(b))
		want = EBUSY;
	ret = renameat2(AT_FDCWD, path(a), AT_FDCWD, path(b), noreplace ? RENAME_NOREPLACE : 0);
	expect(ret, want, "renameat2");
	if (want || a == b)
		return;
	tmp = files[b];
	files[b] = files[a];
	files[a] = tmp;
	files[a].exists = false;
	for (int s = 0; s < SLOTS; s++)
		if (slots[s].fd >= 0 && slots[s].file == a)
			slots[s].file = b;
}

static void op_unlink(void)
{
	int f = rnd(NAMES), want = 0;

	snprintf(last, sizeof(last), "unlink f%d", f);
	if (!files[f].exists)
		want = ENOENT;
	else if (file_open(f))
		want = EBUSY;
	expect(unlink(path(f)), want, "unlink");
	if (!want)
		files[f].exists = false;
}

static const char *const xattr_names[XATTRS] = { "user.k", "user.j" };

/* getxattr of @f's attribute @x agrees with the model. */
static void check_xattr(int f, int x)
{
	char got[64];
	ssize_t n = getxattr(path(f), xattr_names[x], got, sizeof(got));
	int want = !files[f].exists ? ENOENT : files[f].has_xattr[x] ? 0 : ENODATA;

	expect(n, want, "getxattr");
	if (!want && (n != (ssize_t)strlen(files[f].xattr[x]) ||
		      memcmp(got, files[f].xattr[x], n)))
		fail("getxattr %s: expected '%s', got %zd bytes", xattr_names[x],
		     files[f].xattr[x], n);
}

/* setxattr (plain, XATTR_CREATE, XATTR_REPLACE, empty values), get, remove. */
static void op_xattr(void)
{
	int f = rnd(NAMES), x = rnd(XATTRS), how = rnd(4), flags = rnd(3), ret, want;
	struct file *m = &files[f];
	char v[32];

	if (how == 0) {
		snprintf(last, sizeof(last), "getxattr f%d %s", f, xattr_names[x]);
		check_xattr(f, x);
		return;
	}
	if (how == 1) {
		snprintf(last, sizeof(last), "removexattr f%d %s", f, xattr_names[x]);
		want = !m->exists ? ENOENT : m->has_xattr[x] ? 0 : ENODATA;
		expect(removexattr(path(f), xattr_names[x]), want, "removexattr");
		if (!want)
			m->has_xattr[x] = false;
		check_xattr(f, x);
		return;
	}
	if (rnd(8))
		snprintf(v, sizeof(v), "v%u", rnd(100000));
	else
		v[0] = '\0';
	flags = flags == 1 ? XATTR_CREATE : flags == 2 ? XATTR_REPLACE : 0;
	snprintf(last, sizeof(last), "setxattr f%d %s '%s' %s", f, xattr_names[x], v,
		 flags == XATTR_CREATE ? "create" : flags == XATTR_REPLACE ? "replace" : "");
	if (!m->exists)
		want = ENOENT;
	else if (flags == XATTR_CREATE && m->has_xattr[x])
		want = EEXIST;
	else if (flags == XATTR_REPLACE && !m->has_xattr[x])
		want = ENODATA;
	else
		want = 0;
	ret = setxattr(path(f), xattr_names[x], v, strlen(v), flags);
	expect(ret, want, "setxattr");
	if (!want) {
		snprintf(m->xattr[x], sizeof(m->xattr[x]), "%s", v);
		m->has_xattr[x] = true;
	}
	check_xattr(f, x);
}

/* open, or O_TRUNC: a shrink, refused while the file is mapped (EBUSY). */
static void op_open(void)
{
	int f = rnd(NAMES), s = rnd(SLOTS), trunc = !rnd(8), fd, want = 0;

	if (slots[s].fd >= 0)
		return;
	snprintf(last, sizeof(last), "open f%d%s", f, trunc ? " O_TRUNC" : "");
	if (!files[f].exists)
		want = ENOENT;
	else if (trunc && files[f].size && file_mapped(f))
		want = EBUSY;
	fd = open(path(f), O_RDWR | (trunc ? O_TRUNC : 0));
	expect(fd, want, trunc ? "open(O_TRUNC)" : "open");
	if (fd < 0)
		return;
	if (trunc)
		model_resize(&files[f], 0);
	slots[s] = (struct slot){ .fd = fd, .file = f };
}

static void op_close(void)
{
	int s = rnd(SLOTS);

	if (slots[s].fd < 0)
		return;
	snprintf(last, sizeof(last), "close f%d", slots[s].file);
	if (slots[s].map)
		munmap(slots[s].map, slots[s].map_len);
	expect(close(slots[s].fd), 0, "close");
	slots[s] = (struct slot){ .fd = -1 };
}

static void op_mmap(void)
{
	int s = rnd(SLOTS);
	struct file *m;
	void *p;

	if (slots[s].fd < 0 || slots[s].map)
		return;
	m = &files[slots[s].file];
	if (!m->size)
		return;
	snprintf(last, sizeof(last), "mmap f%d %zu", slots[s].file, m->size);
	slots[s].map_len = (m->size + PAGE - 1) / PAGE * PAGE;
	p = mmap(NULL, slots[s].map_len, PROT_READ | PROT_WRITE, MAP_SHARED, slots[s].fd, 0);
	if (p == MAP_FAILED)
		fail("mmap: %s", strerrorname_np(errno));
	count("mmap", 0);
	slots[s].map = p;
}

static void op_write(void)
{
	int s = rnd(SLOTS), byte = rnd(256);
	size_t off, len = 1 + rnd(3 << 19);
	struct file *m;
	unsigned char *buf;
	ssize_t n;

	if (slots[s].fd < 0)
		return;
	m = &files[slots[s].file];
	off = rnd(m->size + (1 << 20) + 1);
	if (off + len > MAX_SIZE)
		return;
	snprintf(last, sizeof(last), "pwrite f%d %zu %zu", slots[s].file, off, len);
	buf = malloc(len);
	for (size_t i = 0; i < len; i++)
		buf[i] = byte + i;
	n = pwrite(slots[s].fd, buf, len, off);
	count(off + len > files[slots[s].file].size ? "pwrite (grows)" : "pwrite", 0);
	if (n != (ssize_t)len)
		fail("pwrite: %zd of %zu (%s)", n, len, n < 0 ? strerrorname_np(errno) : "short");
	if (off > m->size)
		model_resize(m, off);
	memcpy(m->data + off, buf, len);
	if (off + len > m->size)
		m->size = off + len;
	free(buf);
}

/* A store through a mapping, also past the end in its last page. */
static void op_store(void)
{
	int s = rnd(SLOTS);
	size_t off, size;

	if (slots[s].fd < 0 || !slots[s].map)
		return;
	size = files[slots[s].file].size;
	off = rnd(slots[s].map_len);
	if (size < slots[s].map_len && rnd(2))
		off = size + rnd(slots[s].map_len - size);
	snprintf(last, sizeof(last), "store f%d %zu", slots[s].file, off);
	slots[s].map[off] = (unsigned char)rnd(256);
	count(off >= files[slots[s].file].size ? "store (past the end)" : "store", 0);
	files[slots[s].file].data[off] = slots[s].map[off];
}

static void compare(const unsigned char *got, const unsigned char *want, size_t n, size_t off,
		    const char *how)
{
	for (size_t i = 0; i < n; i++)
		if (got[i] != want[i])
			fail("%s: byte %zu is %u, the model says %u", how, off + i, got[i], want[i]);
}

static void op_read(void)
{
	int s = rnd(SLOTS);
	size_t off, len = 1 + rnd(3 << 19), want;
	unsigned char *buf;
	struct file *m;
	ssize_t n;

	if (slots[s].fd < 0)
		return;
	m = &files[slots[s].file];
	off = rnd(m->size + 4096);
	snprintf(last, sizeof(last), "pread f%d %zu %zu", slots[s].file, off, len);
	buf = malloc(len);
	n = pread(slots[s].fd, buf, len, off);
	count("pread", 0);
	want = off >= m->size ? 0 : m->size - off < len ? m->size - off : len;
	if (n != (ssize_t)want)
		fail("pread: %zd bytes, the model says %zu", n, want);
	compare(buf, m->data + off, want, off, "pread");
	free(buf);
	if (slots[s].map && m->size) {
		off = rnd(m->size < slots[s].map_len ? m->size : slots[s].map_len);
		compare(slots[s].map + off, m->data + off, 1, off, "load");
	}
}

static void op_fsync(void)
{
	int s = rnd(SLOTS);

	if (slots[s].fd < 0)
		return;
	snprintf(last, sizeof(last), "fsync f%d", slots[s].file);
	expect(fsync(slots[s].fd), 0, "fsync");
}

/* The listing and every size agree with the model. */
static void check_listing(void)
{
	bool seen[NAMES] = { false };
	struct dirent *e;
	struct stat st;
	DIR *d = opendir(dir);
	int f;

	snprintf(last, sizeof(last), "readdir and stat");
	if (!d)
		fail("opendir: %s", strerrorname_np(errno));
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || strncmp(e->d_name, prefix, strlen(prefix)))
			continue;
		if (sscanf(e->d_name + strlen(prefix), "f%d", &f) != 1 || f < 0 || f >= NAMES || !files[f].exists)
			fail("listing has '%s', the model does not", e->d_name);
		seen[f] = true;
	}
	closedir(d);
	for (f = 0; f < NAMES; f++) {
		if (files[f].exists != seen[f])
			fail("f%d is %slisted, the model says it %s", f, seen[f] ? "" : "not ",
			     files[f].exists ? "exists" : "does not exist");
		if (files[f].exists && (stat(path(f), &st) || (size_t)st.st_size != files[f].size))
			fail("f%d: stat size %lld, the model says %zu", f, (long long)st.st_size,
			     files[f].size);
		for (int x = 0; files[f].exists && x < XATTRS; x++)
			check_xattr(f, x);
	}
}

static void (*const ops[])(void) = {
	op_create, op_create, op_truncate, op_fallocate, op_rename, op_unlink, op_xattr,
	op_open, op_open, op_open, op_close, op_close, op_mmap, op_write, op_write,
	op_write, op_store, op_store, op_read, op_read, op_read, op_fsync,
};

/*
 * LFSFUZZ_DUMP=DIR: the model's final state, for another node to compare
 * with what it reads: DIR/NAME holds each existing file's bytes, DIR/NAME.x
 * its xattrs as "name=value" lines in xattr_names order.
 */
static int dump_model(const char *to)
{
	char p[512];
	FILE *fp;

	for (int f = 0; f < NAMES; f++) {
		if (!files[f].exists)
			continue;
		snprintf(p, sizeof(p), "%s/%sf%d", to, prefix, f);
		fp = fopen(p, "w");
		if (!fp || fwrite(files[f].data, 1, files[f].size, fp) != files[f].size ||
		    fclose(fp))
			return -1;
		snprintf(p, sizeof(p), "%s/%sf%d.x", to, prefix, f);
		fp = fopen(p, "w");
		if (!fp)
			return -1;
		for (int x = 0; x < XATTRS; x++)
			if (files[f].has_xattr[x])
				fprintf(fp, "%s=%s\n", xattr_names[x], files[f].xattr[x]);
		if (fclose(fp))
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long n;
	int f;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: lfsfuzz DIR CALLS SEED [PREFIX]\n");
		return 2;
	}
	if (argc == 5)
		prefix = argv[4];
	dir = argv[1];
	n = strtoul(argv[2], NULL, 0);
	rng = strtoull(argv[3], NULL, 0) | 1;
	for (f = 0; f < NAMES; f++) {
		files[f].data = calloc(1, MAX_SIZE + 4 * PAGE);
		if (!files[f].data)
			return 2;
		unlink(path(f));
	}
	for (int s = 0; s < SLOTS; s++)
		slots[s].fd = -1;
	for (calls = 1; calls <= n; calls++) {
		ops[rnd(sizeof(ops) / sizeof(ops[0]))]();
		if (calls % 250 == 0)
			check_listing();
	}
	for (int s = 0; s < SLOTS; s++) {
		if (slots[s].map)
			munmap(slots[s].map, slots[s].map_len);
		if (slots[s].fd >= 0)
			close(slots[s].fd);
	}
	check_listing();
	for (int i = 0; i < OUTCOMES && outcomes[i].what; i++)
		printf("# %s: %s %lu\n", outcomes[i].what,
		       outcomes[i].err ? strerrorname_np(outcomes[i].err) : "ok", outcomes[i].n);
	if (getenv("LFSFUZZ_DUMP") && dump_model(getenv("LFSFUZZ_DUMP"))) {
		printf("cannot write the model to %s\n", getenv("LFSFUZZ_DUMP"));
		return 1;
	}
	printf("ok %lu calls\n", n);
	return 0;
}
