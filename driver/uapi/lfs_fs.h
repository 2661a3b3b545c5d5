/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * LFS's uapi, the filesystem's part (included by lfs.h, the rest of the
 * generic netlink family "lfs": its commands and attributes are there).
 *
 * The Library File System and its upcalls (docs/NAMESPACE.md)
 * ------------------------------------------------------------
 *
 * lfs.ko also registers the filesystem type "lfs" (mount -t lfs SOURCE /lfs):
 * one flat directory in which every file is a shelf of the librarian's
 * catalogue. Everything the filesystem needs to know or change is asked of
 * the node's upcall server (the node agent) with the messages below; data
 * never leaves the kernel. A file open through the filesystem holds its books
 * on this node like a shelf does (they count in LFS_A_BOOKS_USED, and
 * SHELF_CREATE of one of them fails with EBUSY).
 *
 * LFS_CMD_UPCALL_REGISTER [admin]: the sending socket becomes the node's
 *   upcall server. No attributes. Registering again from the same socket
 *   succeeds. Closing the socket (or UNREGISTER) unregisters it: every
 *   request still pending fails with ENOTCONN, and so does every request
 *   made while no server is registered.
 *   Errors: EBUSY another socket is registered (the message names its portid).
 *
 * LFS_CMD_UPCALL_UNREGISTER [admin]: unregister the server (sent by the
 *   registered socket). Errors: ENOTCONN no server; EPERM another socket is.
 *
 * LFS_CMD_UPCALL_GET: the state of the upcall channel. Reply:
 *   LFS_A_UP_PORTID (u32, the server's portid, 0 if none), LFS_A_UP_PENDING
 *   (u32 requests waiting for their reply), LFS_A_UP_SENT (u64 requests sent
 *   since the module was loaded), LFS_A_UP_REFUSED (u64 replies refused),
 *   LFS_A_NR_ACTIVE (u32 files open through the filesystem on this node).
 *
 * LFS_CMD_UPCALL_REQUEST (kernel to server): sent as a unicast message to the
 *   registered portid, never as a reply to a request of the server's. At
 *   most LFS_UP_PENDING_MAX are pending at once (the server's socket needs a
 *   receive buffer of LFS_UP_PENDING_MAX * LFS_UP_REQUEST_MAX bytes; a full
 *   buffer fails the request with ENOBUFS). Attributes:
 *     LFS_A_UP_ID      u32: the request's id, never reused while pending
 *     LFS_A_UP_OP      u32: enum lfs_upcall_op
 *     LFS_A_NAME       string: the file's name, where the operation has one;
 *                      absent for LIST, STATFS and the xattr operations on
 *                      the directory itself
 *     LFS_A_UUID       binary[16]: the shelf's UUID, for an operation on a
 *                      file the kernel knows (all but LOOKUP, LIST, CREATE,
 *                      STATFS): the server finds the shelf by UUID and
 *                      answers ENOENT if it is gone; for DESTROY and RENAME
 *                      the shelf must also still have LFS_A_NAME (else
 *                      ESTALE: the kernel looks the name up again)
 *     LFS_A_NEW_NAME   string: RENAME's new name
 *     LFS_A_SIZE       u64: RESIZE and SETSIZE, the size in bytes; CLOSE, the
 *                      size this node extended the file to (absent if it
 *                      did not)
 *     LFS_A_UP_FLAGS   u32: LFS_UP_F_* below, where the operation has any
 *     LFS_A_POLICY     string: CREATE, the mount's allocation policy (absent:
 *                      the librarian's default)
 *     LFS_A_XATTR_NAME string: the xattr operations, the full name
 *                      ("user.LFS.AllocationPolicy", "user.color")
 *     LFS_A_XATTR_VALUE binary: SETXATTR's value (0 to LFS_XATTR_VALUE_MAX)
 *
 * LFS_CMD_UPCALL_REPLY [admin] (server to kernel): the answer, from the
 *   registered socket only (EPERM otherwise). Attributes:
 *     LFS_A_UP_ID      u32, required: the request's id. An id that is not
 *                      pending (answered, timed out, given up by a killed
 *                      caller, or never sent) is refused with ENOENT.
 *     LFS_A_UP_ERRNO   u32, optional (default 0): a positive errno (at most
 *                      LFS_UP_ERRNO_MAX) ends the request with that error;
 *                      the caller's system call returns it. Nothing else in
 *                      the message is looked at.
 *     LFS_A_MORE       flag: the result continues in another REPLY with the
 *                      same id (book maps and listings, like SHELF_CREATE)
 *   and the result of a successful operation:
 *   - the file's attributes (LOOKUP, CREATE, CREATE_OPEN, OPEN, RESIZE), in
 *     the first message: LFS_A_UUID (not null), LFS_A_INO (u64, >= 2, the
 *     stable inode number: the same for the shelf's whole life, never that
 *     of another shelf that exists), LFS_A_SIZE (u64 bytes, lfs.size),
 *     LFS_A_NR_BOOKS (u32), LFS_A_BOOK_SIZE (u64; may be 0 with no books),
 *     LFS_A_MTIME and LFS_A_CTIME (u64 ns since the Unix epoch),
 *     LFS_A_WRITABLE (u8: this node may write the shelf; mode 0644 or 0444),
 *     and for OPEN and CREATE_OPEN only LFS_A_LEASED (flag: the activation
 *     is covered by the node's lease, as for SHELF_CREATE). The size must
 *     fit the books: size <= nr_books * book_size.
 *   - the book map (OPEN, CREATE_OPEN, RESIZE): LFS_A_BOOKS_START (u32,
 *     index of this message's first book; the parts come in order) and
 *     LFS_A_BOOKS, as many messages as it takes, all but the last with
 *     LFS_A_MORE; in all
 *     exactly LFS_A_NR_BOOKS books of one book size (LFS_A_BOOK_SIZE) on
 *     attached fabric devices with DAX, none held by a shelf or another
 *     open file (EIO to the caller, EINVAL, ENODEV, ERANGE or EBUSY to the
 *     server otherwise). For a file open on this node, a RESIZE's map must
 *     begin with the books the node has (growth appends, shrinking drops
 *     the tail).
 *   - LIST: LFS_A_ENTRIES (nested array; each element holds LFS_A_NAME and
 *     LFS_A_INO), in as many messages as it takes; at most LFS_LIST_MAX
 *     entries in all, each name valid (shelf name rule).
 *   - GETXATTR: LFS_A_XATTR_VALUE (binary, 0 to LFS_XATTR_VALUE_MAX).
 *   - LISTXATTR: LFS_A_XATTR_NAMES (binary: NUL-terminated names, each
 *     starting with "user.", at most LFS_XATTR_LIST_MAX bytes); absent if
 *     there are none.
 *   - STATFS: LFS_A_TOTAL_BYTES, LFS_A_FREE_BYTES (<= total) and
 *     LFS_A_NR_FILES (u64).
 *   - CLOSE, SETSIZE, DESTROY, RENAME, SETXATTR, REMOVEXATTR: nothing.
 *   A reply the kernel refuses (a missing or invalid attribute, a bad book
 *   map) is answered with an error and the extack message naming it, and
 *   ends the request with EIO.
 *
 * The operations (enum lfs_upcall_op) and what the server does:
 *   LFS_UP_LOOKUP     the shelf named LFS_A_NAME, if this node may see it
 *                     (ENOENT otherwise): its attributes.
 *   LFS_UP_LIST       every shelf this node may see: LFS_A_ENTRIES.
 *   LFS_UP_CREATE     create LFS_A_NAME with no books (shelf.create) and
 *                     LFS_A_POLICY. With LFS_UP_F_EXCL an existing name is
 *                     EEXIST; without it the existing shelf's attributes are
 *                     the answer. EACCES, EDQUOT, EINVAL (bad policy).
 *   LFS_UP_CREATE_OPEN create LFS_A_NAME with no books and LFS_A_POLICY and
 *                     activate it on this node, as OPEN with LFS_UP_F_WRITE
 *                     (open(2) with O_CREAT of a name with no file here:
 *                     one request where LOOKUP, CREATE and OPEN took
 *                     three). An existing name is EEXIST (the kernel then
 *                     looks it up and opens it as any open, unless O_EXCL).
 *                     Answer: as OPEN's.
 *   LFS_UP_OPEN       activate the shelf on this node: shared read-only, or
 *                     shared read-write with LFS_UP_F_WRITE (EACCES if the
 *                     node may not write it; EBUSY if it is active
 *                     exclusively somewhere). An OPEN of a shelf this node
 *                     has active already changes the mode to read-write if
 *                     asked. Answer: attributes and the book map.
 *   LFS_UP_CLOSE      end this node's activation (the last descriptor and
 *                     mapping of the file on this node are gone); with
 *                     LFS_A_SIZE, set lfs.size first. The kernel has stopped
 *                     using the books when it sends this, and ignores errors.
 *   LFS_UP_RESIZE     set the size to LFS_A_SIZE bytes exactly (lfs.size),
 *                     with books covering it by the shelf's policy (more
 *                     books, or whole books dropped from the tail). ENOSPC,
 *                     EDQUOT, EBUSY (dropping books another node has
 *                     active). Answer: attributes and the book map.
 *   LFS_UP_SETSIZE    set lfs.size to LFS_A_SIZE, within the books the shelf
 *                     has (EINVAL beyond them): a writer extended the file
 *                     within its books (fsync).
 *   LFS_UP_DESTROY    destroy the shelf (shelf.destroy); EBUSY while it is
 *                     active on any node.
 *   LFS_UP_RENAME     rename it to LFS_A_NEW_NAME; an existing shelf of that
 *                     name is destroyed in the same transaction (EBUSY if it
 *                     is active anywhere), or with LFS_UP_F_NOREPLACE the
 *                     rename fails with EEXIST.
 *   LFS_UP_GETXATTR   LFS_A_XATTR_NAME of the file (or of the directory
 *                     without LFS_A_NAME): ENODATA if it has none.
 *   LFS_UP_SETXATTR   set it to LFS_A_XATTR_VALUE; LFS_UP_F_XATTR_CREATE
 *                     (EEXIST if set) or LFS_UP_F_XATTR_REPLACE (ENODATA if
 *                     not); EPERM for read-only names, EINVAL for bad values
 *                     (nothing changes).
 *   LFS_UP_LISTXATTR  the names of the file's (or the directory's) xattrs.
 *   LFS_UP_REMOVEXATTR remove it: ENODATA, EPERM.
 *   LFS_UP_STATFS     the space this node may use: totals in bytes, files.
 *
 * The server must not use the filesystem itself, or it would wait for its
 * own answers (how a caller waits: docs/NETLINK.md, "Upcalls").
 *
 * LFS_CMD_SHELF_FENCE also fences a file open through the filesystem, by its
 * UUID (what the node agent sends: a file renamed on another node keeps its
 * old name here until the next lookup, and one opened under a second name
 * keeps the first) or by name: its mappings are revoked (a later fault is
 * SIGBUS), and read and write fail with EIO until it is closed. The node's
 * lease covers every activation (OPEN, CREATE_OPEN) answered LFS_A_LEASED;
 * its expiry revokes them all the same way, without the reset action.
 */
#ifndef _UAPI_LINUX_LFS_FS_H
#define _UAPI_LINUX_LFS_FS_H

/* The filesystem "lfs": its limits. */
#define LFS_FS_MAGIC 0x4c465331 /* "LFS1", statfs f_type */
#define LFS_POLICY_NAME_MAX 32
#define LFS_XATTR_VALUE_MAX 32768
#define LFS_XATTR_LIST_MAX 65000 /* what one attribute holds */
#define LFS_LIST_MAX (1U << 20)
#define LFS_UP_PENDING_MAX 256
#define LFS_UP_REQUEST_MAX (LFS_XATTR_VALUE_MAX + 1024)
#define LFS_UP_ERRNO_MAX 511 /* above are the kernel's own codes */

/* What an upcall asks (LFS_A_UP_OP). */
enum lfs_upcall_op {
	LFS_UP_UNSPEC,
	LFS_UP_LOOKUP,
	LFS_UP_LIST,
	LFS_UP_CREATE,
	LFS_UP_OPEN,
	LFS_UP_CLOSE,
	LFS_UP_RESIZE,
	LFS_UP_SETSIZE,
	LFS_UP_DESTROY,
	LFS_UP_RENAME,
	LFS_UP_GETXATTR,
	LFS_UP_SETXATTR,
	LFS_UP_LISTXATTR,
	LFS_UP_REMOVEXATTR,
	LFS_UP_STATFS,
	LFS_UP_CREATE_OPEN,
	__LFS_UP_MAX
};
#define LFS_UP_MAX (__LFS_UP_MAX - 1)

/* LFS_A_UP_FLAGS */
#define LFS_UP_F_EXCL (1U << 0) /* CREATE: fail with EEXIST if it exists */
#define LFS_UP_F_WRITE (1U << 1) /* OPEN, CREATE_OPEN: shared read-write, not read-only */
#define LFS_UP_F_NOREPLACE (1U << 2) /* RENAME: fail with EEXIST */
#define LFS_UP_F_XATTR_CREATE (1U << 3) /* SETXATTR: fail with EEXIST */
#define LFS_UP_F_XATTR_REPLACE (1U << 4) /* SETXATTR: fail with ENODATA */

#endif /* _UAPI_LINUX_LFS_FS_H */
