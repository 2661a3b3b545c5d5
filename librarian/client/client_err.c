// SPDX-License-Identifier: GPL-2.0
/*
 * liblibrarian: a connection's last error, its message and its code (the
 * errno's name, or the librarian's own code), set by every file of the
 * library with lc_err().
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "client_int.h"

static const struct {
	int err;
	const char *name;
} errnames[] = {
	{ EPERM, "EPERM" },
	{ ENOENT, "ENOENT" },
	{ EIO, "EIO" },
	{ E2BIG, "E2BIG" },
	{ ENOMEM, "ENOMEM" },
	{ EACCES, "EACCES" },
	{ EBUSY, "EBUSY" },
	{ EEXIST, "EEXIST" },
	{ EINVAL, "EINVAL" },
	{ ENOSPC, "ENOSPC" },
	{ ERANGE, "ERANGE" },
	{ ENAMETOOLONG, "ENAMETOOLONG" },
	{ ENODATA, "ENODATA" },
	{ EPROTO, "EPROTO" },
	{ EBADMSG, "EBADMSG" },
	{ EMSGSIZE, "EMSGSIZE" },
	{ EPROTONOSUPPORT, "EPROTONOSUPPORT" },
	{ EOPNOTSUPP, "EOPNOTSUPP" },
	{ ECONNREFUSED, "ECONNREFUSED" },
	{ ECONNRESET, "ECONNRESET" },
	{ ETIMEDOUT, "ETIMEDOUT" },
	{ EAGAIN, "EAGAIN" },
	{ ENOTCONN, "ENOTCONN" },
	{ EPIPE, "EPIPE" },
	{ ESHUTDOWN, "ESHUTDOWN" },
	{ EDQUOT, "EDQUOT" },
	{ ESTALE, "ESTALE" },
	{ EMFILE, "EMFILE" },
	{ EREMOTE, "EREMOTE" },
};

const char *lfs_errno_name(int err)
{
	for (size_t i = 0; i < sizeof(errnames) / sizeof(errnames[0]); i++)
		if (errnames[i].err == err)
			return errnames[i].name;
	return "EUNKNOWN";
}

int lc_err(struct lfs_lib *l, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(l->errmsg, sizeof(l->errmsg), fmt, ap);
	va_end(ap);
	snprintf(l->errcode, sizeof(l->errcode), "%s", lfs_errno_name(err));
	return -err;
}

const char *lfs_lib_errmsg(const struct lfs_lib *l)
{
	return l ? l->errmsg : "no connection";
}

const char *lfs_lib_errcode(const struct lfs_lib *l)
{
	return l ? l->errcode : "ENOTCONN";
}
