/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * LFS: shelves of fabric-attached memory books as DAX-capable block devices.
 *
 * This header is the specification of the generic netlink protocol between
 * the lfs kernel module and userspace (lfsctl, liblfs, lfsvol, tests).
 *
 * Concepts
 * --------
 *
 * A fabric device is a block device holding fabric memory (e.g. /dev/pmem0),
 * attached with its interleave group number (IG), a book size (a power of two,
 * LFS_BOOK_SIZE_MIN .. LFS_BOOK_SIZE_MAX bytes) and a data offset (a multiple
 * of LFS_OFFSET_ALIGN). Book B of interleave group G is the byte range
 * [offset + B * book_size, offset + (B + 1) * book_size) of that device; the
 * device holds floor((device size - offset) / book_size) books. The module
 * opens an attached device exclusively, so nothing else can mount it.
 *
 * A shelf is a named, ordered list of books presented as the block device
 * /dev/lfsN. Byte X of the shelf is byte X % book_size of the shelf's book
 * number X / book_size. All books of a shelf have the same book size. A book
 * belongs to at most one shelf. The shelf is DAX-capable (mount -o dax) iff
 * all its fabric devices are DAX-capable.
 *
 * Books travel as arrays of struct lfs_book in one LFS_A_BOOKS attribute,
 * at most LFS_BOOKS_PER_ATTR per attribute. Longer lists are sent in several
 * messages: every message but the last carries LFS_A_MORE (see below).
 *
 * Names and numbers
 * -----------------
 *
 * Shelf names are 1 to 64 characters of A-Z a-z 0-9 . _ - and do not start with . or -.
 * IG numbers are 0 to 65535.
 * The book size is a power of two from 2 MiB to 1 TiB.
 * A shelf holds at most 1048576 books.
 * Userspace applies the same rules before anything is sent (common/lfs_rules.h).
 *
 * Family
 * ------
 *
 * Generic netlink family LFS_GENL_NAME, version LFS_GENL_VERSION, in the
 * initial network namespace only. Every attribute of a request is validated
 * strictly against the command's policy: an attribute that the command does
 * not list below is rejected with EINVAL. Every error carries an extended ack
 * message (NETLINK_EXT_ACK) naming the offending value, and the bad attribute
 * offset or missing attribute type where one applies. Commands marked
 * [admin] need CAP_SYS_ADMIN and fail with EPERM otherwise.
 *
 * Types: u32/u64 are NLA_U32/NLA_U64, s32 is NLA_S32, u8 is NLA_U8 (0 or 1),
 * string is NLA_NUL_STRING, flag is NLA_FLAG, binary is NLA_BINARY.
 *
 * Commands
 * --------
 *
 * LFS_CMD_FABRIC_ATTACH [admin]: attach a fabric device.
 *     LFS_A_PATH       string, required: block device path (< LFS_PATH_MAX),
 *                      or a device-DAX's character device (/dev/daxX.Y,
 *                      bound to fsdev_dax; Linux 7.x, docs/CXL.md)
 *     LFS_A_IG         u32, required: interleave group, 0 .. LFS_IG_MAX
 *     LFS_A_BOOK_SIZE  u64, required: book size in bytes
 *     LFS_A_OFFSET     u64, optional: data offset in bytes, default 0
 *     LFS_A_FABRIC_UUID binary[16], optional: the device must carry a label
 *                      of this fabric (see Fabric labels below)
 *   Errors: EMEDIUMTYPE the device's label disagrees (or is missing while
 *   LFS_A_FABRIC_UUID is given); EBUSY device already attached, or in use
 *   (mounted, opened exclusively); EEXIST IG already attached; EINVAL book
 *   size not a power of two or out of range, offset not aligned; ENOSPC
 *   device smaller than offset + one book; ENOTBLK/ENOENT bad path; ENFILE
 *   LFS_FABRICS_MAX devices attached already; ENODEV a character device
 *   that is not a device-DAX bound to fsdev_dax; EOPNOTSUPP a device-DAX
 *   before Linux 7.x.
 *   Reply: none (ack only).
 *
 * LFS_CMD_FABRIC_DETACH [admin]: detach a fabric device.
 *     LFS_A_PATH       string  } exactly one of the two selects the device
 *     LFS_A_IG         u32     }
 *   Errors: ENODEV not attached; EBUSY a shelf (or a shelf being created or
 *   extended) holds books of it.
 *
 * LFS_CMD_FABRIC_GET: describe fabric devices.
 *   doit: LFS_A_IG or LFS_A_PATH selects one device, reply is one message.
 *   dump: no attributes, one message per device in IG order.
 *   Each message carries:
 *     LFS_A_IG, LFS_A_PATH (as given at attach), LFS_A_DEVT (u32, the kernel
 *     dev_t encoding (major << 20 | minor)), LFS_A_BOOK_SIZE, LFS_A_OFFSET,
 *     LFS_A_DEV_SIZE (u64 bytes), LFS_A_NR_BOOKS (u32 books on the device),
 *     LFS_A_FABRIC_UUID (binary[16], only if the device has a label),
 *     LFS_A_BOOKS_USED (u32 books held by shelves, including shelves being
 *     created or extended), LFS_A_DAX (u8), LFS_A_NUMA_NODE (s32, -1 unknown),
 *     LFS_A_BAD (binary: struct lfs_bad_range[], only if the device has bad
 *     ranges; see Poison below), LFS_A_DEVDAX (u8: 1 if the device is a
 *     device-DAX character device, LFS_A_DEVT then a character device's),
 *     LFS_A_VOLATILE (u8: 1 if its memory is not known to be persistent, a
 *     CXL RAM region: no shelf on it allows MAP_SYNC, and its content is
 *     lost at a power cycle).
 *
 * LFS_CMD_SHELF_CREATE [admin]: create a shelf.
 *     LFS_A_NAME       string, required, unique: see Names below
 *     LFS_A_UUID       binary[16], optional in the first message: random if
 *                      absent; must not be sent in a continuation message
 *     LFS_A_BOOKS      binary, required: struct lfs_book[] in shelf order
 *     LFS_A_MORE       flag: more books follow in another CREATE message with
 *                      the same name from the same netlink socket
 *     LFS_A_LEASED     flag, first message: the shelf is an activation the
 *                      librarian granted, covered by the node's lease (see
 *                      Leases below); refused with ENOLCK while no lease is
 *                      held or after it expired
 *     LFS_A_ZEROED     flag: the caller knows that every book reads as zeroes
 *                      (the librarian had them scrubbed). It holds only if
 *                      every message of the create carries it. The shelf
 *                      then shows zeroed = 1 in sysfs, so udev can skip
 *                      probing it for signatures, until the first open for
 *                      writing or extend clears it for good.
 *   The block device appears when the message without LFS_A_MORE arrives.
 *   Until then the books are reserved; closing the socket abandons the shelf.
 *   Reply (to the last message): LFS_A_NAME, LFS_A_ID (u32, N of /dev/lfsN),
 *   LFS_A_DISK (string "lfsN"), LFS_A_DEVT.
 *   Errors: EEXIST name taken; EBUSY a file of that name is open through
 *   the lfs filesystem on this node; EINVAL bad name, bad uuid, book size of
 *   the books differ, book listed twice; ENODEV book on an IG not attached;
 *   ERANGE book number beyond the device; EBUSY book in another shelf, or a
 *   continuation from another socket; E2BIG more than LFS_SHELF_BOOKS_MAX
 *   books; ENFILE too many shelves.
 *
 * LFS_CMD_SHELF_EXTEND [admin]: append books to a shelf, also while it is
 *   open or mounted. Same LFS_A_NAME, LFS_A_BOOKS and LFS_A_MORE as CREATE;
 *   the new capacity is published (with a change uevent) by the last message.
 *   A DAX-capable shelf only accepts books of DAX-capable, synchronous-if-it-
 *   is devices with the same logical block size (EINVAL otherwise).
 *
 * LFS_CMD_SHELF_SHRINK [admin]: drop books from the tail of a shelf.
 *     LFS_A_NAME       string, required
 *     LFS_A_NR_BOOKS   u32, required: the new number of books, >= 1 and
 *                      below the current number
 *   Errors: ENOENT no such shelf; EBUSY the device is open (or mounted);
 *   EINVAL bad count. The data of the remaining books is untouched.
 *
 * LFS_CMD_SHELF_REMOVE [admin]: remove a shelf and its block device.
 *     LFS_A_NAME       string, required
 *   Errors: ENOENT; EBUSY the device is open or mounted. The books' data is
 *   left as it is (see LFS_CMD_BOOK_ZERO).
 *
 * LFS_CMD_SHELF_GET: describe shelves.
 *   doit: LFS_A_NAME required; LFS_A_BOOKS_START (u32, optional, default 0)
 *   is the index of the first book wanted. The reply holds at most
 *   LFS_BOOKS_PER_GET books; fetch the rest with further requests or a dump.
 *   dump: optional LFS_A_NAME filters to one shelf. A shelf whose book list
 *   does not fit in one message is continued in the following messages.
 *   Shelves still being created are not shown.
 *   Each message carries:
 *     LFS_A_NAME, LFS_A_UUID, LFS_A_ID, LFS_A_DISK, LFS_A_DEVT,
 *     LFS_A_BOOK_SIZE, LFS_A_NR_BOOKS (u32 total books), LFS_A_DAX (u8),
 *     LFS_A_OPEN (u32 current openers), LFS_A_STATE (u32, enum
 *     lfs_shelf_state), LFS_A_LEASED (u8), LFS_A_CREATED (u64, CLOCK_BOOTTIME
 *     ns when the block device appeared), LFS_A_ZEROED (u8, 1 while the shelf
 *     is known to read as zeroes: created with LFS_A_ZEROED, never opened for
 *     writing nor extended since), LFS_A_BOOKS_START (u32 index of the first
 *     book in this message) and LFS_A_BOOKS (this message's part).
 *
 * LFS_CMD_BOOK_ZERO [admin]: write zeroes over books that no shelf holds
 *   (scrubbing freed books before reuse), flushing each book's device. One
 *   book at a time: the module's lock is not held while a book is written
 *   (the book is reserved meanwhile, so no shelf can take it), and a book a
 *   shelf holds is skipped, not an error.
 *     LFS_A_BOOKS      binary, required
 *   Reply: LFS_A_BOOKS, the books zeroed (not those skipped), in request order.
 *   Errors: ENODEV, ERANGE as for CREATE (checked for every book before any
 *   is written); EINTR if a fatal signal arrives (books before it are
 *   zeroed already); EIO a write failed.
 *
 * LFS_CMD_BOOK_CHECK [admin]: which books read as zeroes? Only reads, through
 *   the fabric's DAX mapping (copy_mc, so poison fails the check, not the
 *   machine). The node agent uses it on never-used books so that shelves made
 *   of them can skip udev's probe without anything being written.
 *     LFS_A_BOOKS      binary, required
 *   Reply: LFS_A_BOOKS, the books of the request that read as zeroes, in
 *   request order. A book does not read as zeroes if any byte is not zero,
 *   if its device has no DAX, if the device reports a bad range in it, or if
 *   a shelf holds it (at the start or at any point during the check).
 *   Errors: ENODEV, ERANGE as for CREATE (also if the device is detached
 *   during the check); EINTR if a fatal signal arrives.
 *
 * LFS_CMD_BOOK_MOVE [admin]: move one book of a shelf to another book while
 *   the shelf stays open and mounted (docs/MOVE.md; Linux 6.1 only so far).
 *   A filesystem mounted on the shelf is frozen meanwhile; bios wait.
 *     LFS_A_NAME       string, required: the shelf
 *     LFS_A_BOOKS_START u32, required: the book's index in the shelf
 *     LFS_A_BOOKS      binary, required: one struct lfs_book, the target,
 *                      which no shelf holds (the librarian decides which)
 *   Reply: none but the ack; the old book no longer belongs to the shelf.
 *   Errors: ENOENT no such shelf; ERANGE index beyond the shelf, or target
 *   beyond its device; ENODEV target's IG not attached; EBUSY target held
 *   by a shelf or being zeroed, a page pinned (O_DIRECT, RDMA: try again),
 *   or mappings of the old book remain after the switch (the old book then
 *   stays reserved); EINVAL target is a book of this shelf, or of another
 *   book size; EIO target holds a bad range, or the copy failed (poison);
 *   EOPNOTSUPP a book without DAX, or a kernel not yet supported.
 *
 * Leases and fencing (docs/FENCING.md)
 * ------------------------------------
 *
 * The node's lease covers every shelf created with LFS_A_LEASED. Times are
 * CLOCK_BOOTTIME nanoseconds (clock_gettime(CLOCK_BOOTTIME) in userspace).
 *
 * LFS_CMD_LEASE_RENEW [admin]: the librarian received a renewal sent at a
 *   given time: the deadline becomes max(deadline, start + lease).
 *     LFS_A_LEASE_START u64, required: when the renewal was sent; not in the
 *                      future and not older than the lease
 *     LFS_A_LEASE_MS   u32, required: the lease, LFS_LEASE_MS_MIN ..
 *                      LFS_LEASE_MS_MAX; 0 stops enforcing the lease, which
 *                      is refused with EBUSY while a leased shelf exists
 *     LFS_A_FENCE_ACTION u32, optional: enum lfs_fence_action for every
 *                      later fence (LFS_FENCE_RESET until set)
 *     LFS_A_FENCE_WATCHDOG_MS u32, optional: the fence watchdog's bound
 *                      for every later lapse: the fence of a lapsed lease
 *                      that has not ended this long after the deadline
 *                      restarts the node (docs/FENCING.md "The fence
 *                      watchdog"); 0 (until set) is no watchdog, else
 *                      LFS_FENCE_WATCHDOG_MS_MIN .. LFS_FENCE_WATCHDOG_MS_MAX;
 *                      the node agent sends 3/4 of the librarian's fence_grace
 *   Errors: EINVAL start in the future, too old, lease out of range,
 *   watchdog out of range (nothing of the renewal is taken);
 *   EBUSY (lease 0 while a leased shelf exists).
 *
 * LFS_CMD_LEASE_GET: the node's lease. Reply: LFS_A_LEASE_MS (0: not
 *   enforced), LFS_A_LEASE_LEFT (s64 ms until the deadline, negative once it
 *   passed), LFS_A_FENCE_ACTION, LFS_A_FENCE_WATCHDOG_MS (u32, 0: none),
 *   LFS_A_NR_FENCED (u32 shelves fenced now),
 *   and the fence latency of the lease's lapses since the module was loaded
 *   (docs/FENCING.md "Fence latency"): LFS_A_FENCE_COUNT (u32 lapses
 *   measured), LFS_A_FENCE_LAST_NS and LFS_A_FENCE_MAX_NS (u64 ns from the
 *   deadline until every covered object refused writes and stores: files
 *   flagged and unmapped, shelves refusing from the deadline), of the last
 *   lapse and the largest; LFS_A_FENCE_DONE_LAST_NS and
 *   LFS_A_FENCE_DONE_MAX_NS (u64 ns from the deadline until the fence
 *   ended: I/O in flight waited for, DAX devices killed); LFS_A_FENCE_HIST
 *   (binary, LFS_FENCE_HIST_BUCKETS u32: lapses refused within 1, 2, 4, 8,
 *   16, 32, 64 ms, and later). The last five only once a lapse was measured.
 *
 * LFS_CMD_SHELF_FENCE [admin]: fence a shelf now, as the lease's expiry does.
 *     LFS_A_NAME       string, required without LFS_A_UUID: a shelf, or else
 *                      a file open through the lfs filesystem (see below)
 *     LFS_A_UUID       binary[16], optional: the file of this UUID open
 *                      through the lfs filesystem, whatever its name here
 *                      (LFS_A_NAME is then ignored)
 *   Errors: ENOENT. Fencing a fenced shelf or file succeeds.
 *
 * A fenced shelf fails every new bio with EIO, its DAX device is killed so
 * new faults fail, and the fence waits for I/O in flight. With
 * LFS_FENCE_RESET, a fence of a shelf that is open (mounted or opened by a
 * process) restarts the machine at once: pages a DAX filesystem mapped
 * before the fence cannot be revoked. A fenced shelf shows state
 * LFS_SHELF_FENCED and refuses everything but LFS_CMD_SHELF_REMOVE (EIO).
 *
 * Fabric labels
 * -------------
 *
 * A fabric device may carry a struct lfs_label at byte 0, inside its data
 * offset area, saying which fabric, IG, book size and data offset it belongs
 * to. LFS_CMD_FABRIC_LABEL writes it; every attach reads it.
 *
 * LFS_CMD_FABRIC_LABEL [admin]: write the label on a device not attached.
 *     LFS_A_PATH, LFS_A_IG, LFS_A_BOOK_SIZE, LFS_A_OFFSET as for ATTACH
 *                      (the offset must be at least LFS_OFFSET_ALIGN)
 *     LFS_A_FABRIC_UUID binary[16], required: the fabric (the librarian's)
 *   Errors: EEXIST the device has a label (equal or not: nothing is
 *   written); EBUSY attached or in use; EINVAL offset 0 (no room).
 *
 * LFS_CMD_FABRIC_ATTACH reads the label. A device with a label is refused
 *   with EMEDIUMTYPE, naming both values, if the label's IG, book size or
 *   offset differ from the attach's, or if the attach carries
 *   LFS_A_FABRIC_UUID and the label's differs. With LFS_A_FABRIC_UUID, a
 *   device without a label is refused as well. Nothing is written.
 *
 * Poison (docs/CXL.md "Poison")
 * -----------------------------
 *
 * The module is the holder of each fabric's DAX device: the kernel's memory
 * failure handling (a poisoned page, hwpoison) tells it the range, and it
 * keeps it in the fabric's bad list with the bad blocks the device reported
 * at attach. Every read, write, DAX access and fault of a bad page, through a
 * shelf or a file, fails (EIO, SIGBUS); BOOK_ZERO refuses a book holding one
 * (EIO) and BOOK_CHECK never counts it as zeroes. The list lives until the
 * device is detached; at most LFS_BAD_MAX ranges a device, and a range past
 * that is merged into the last one (which then covers everything between
 * them: more pages fail, never fewer). Ranges before the first book (the
 * label area) or after the last are logged, not kept.
 *
 * LFS_A_BAD in FABRIC_GET: struct lfs_bad_range[], in the order they came.
 *
 * LFS_CMD_FABRIC_BAD: an event, never a request, multicast to the group
 *   LFS_MCGRP_EVENTS ("events", open to everyone) when a range is added by
 *   a memory failure: LFS_A_IG, LFS_A_PATH and LFS_A_BAD (one range). A
 *   client that misses it (a full socket buffer) finds the range in
 *   FABRIC_GET.
 *
 * The Library File System and its upcalls: lfs_fs.h (included below).
 *
 * Dumps and concurrent change
 * ---------------------------
 *
 * Every change to fabrics or shelves bumps a generation counter. A dump whose
 * parts were produced under different generations has NLM_F_DUMP_INTR set on
 * a message; the client should discard the result and dump again.
 */
#ifndef _UAPI_LINUX_LFS_H
#define _UAPI_LINUX_LFS_H

#include <linux/types.h>

#define LFS_GENL_NAME "lfs"
#define LFS_GENL_VERSION 1

#define LFS_NAME_MAX 64
#define LFS_PATH_MAX 256
#define LFS_IG_MAX 65535
#define LFS_BOOK_SIZE_MIN (2ULL << 20)
#define LFS_BOOK_SIZE_MAX (1ULL << 40)
#define LFS_OFFSET_ALIGN (2ULL << 20)
#define LFS_FABRICS_MAX 256
#define LFS_SHELVES_MAX 4096
#define LFS_SHELF_BOOKS_MAX (1U << 20)
#define LFS_UUID_LEN 16
#define LFS_LEASE_MS_MIN 1000
#define LFS_LEASE_MS_MAX 3600000
#define LFS_FENCE_HIST_BUCKETS 8 /* LFS_A_FENCE_HIST */
#define LFS_FENCE_WATCHDOG_MS_MIN 100 /* LFS_A_FENCE_WATCHDOG_MS, but for 0 */
#define LFS_FENCE_WATCHDOG_MS_MAX 600000

/* The state of a shelf (LFS_A_STATE, /sys/block/lfsN/lfs/state). */
enum lfs_shelf_state {
	LFS_SHELF_ACTIVE,
	LFS_SHELF_FENCED,
};

/* What a fence does to a shelf that is open (LFS_A_FENCE_ACTION). */
enum lfs_fence_action {
	LFS_FENCE_RESET, /* restart the machine at once */
	LFS_FENCE_EIO, /* fail I/O and faults; mapped pages stay (logged) */
};

/*
 * A fabric device's label, at byte 0 of the device (inside the data offset
 * area). Little-endian; checksum is the CRC-32 of zlib's crc32() (IEEE
 * 802.3) over the structure with checksum set to 0.
 */
#define LFS_LABEL_MAGIC "LFS fabric label"
#define LFS_LABEL_VERSION 1

struct lfs_label {
	__u8 magic[16]; /* LFS_LABEL_MAGIC, without a NUL */
	__le32 version;
	__le32 ig;
	__le64 book_size;
	__le64 offset;
	__u8 fabric_uuid[LFS_UUID_LEN];
	__u8 device_uuid[LFS_UUID_LEN]; /* random, one per labelled device */
	__le64 created; /* seconds since the epoch */
	__le32 checksum;
	__u8 reserved[4];
};

/*
 * A bad range of a fabric device (LFS_A_BAD): where it starts, as a book and
 * a byte offset in it, and its length in bytes (page multiples), which may
 * run on into the following books.
 */
#define LFS_BAD_MAX 64
#define LFS_MCGRP_EVENTS "events"

struct lfs_bad_range {
	__u32 book;
	__u32 pad;
	__u64 offset;
	__u64 length;
};

/* One book: interleave group and book number on that group's device. */
struct lfs_book {
	__u32 ig;
	__u32 book;
};

#include "lfs_fs.h"

#define LFS_BOOKS_PER_ATTR 8191
#define LFS_BOOKS_PER_GET 4096

enum lfs_cmd {
	LFS_CMD_UNSPEC,
	LFS_CMD_FABRIC_ATTACH,
	LFS_CMD_FABRIC_DETACH,
	LFS_CMD_FABRIC_GET,
	LFS_CMD_SHELF_CREATE,
	LFS_CMD_SHELF_EXTEND,
	LFS_CMD_SHELF_SHRINK,
	LFS_CMD_SHELF_REMOVE,
	LFS_CMD_SHELF_GET,
	LFS_CMD_BOOK_ZERO,
	LFS_CMD_BOOK_CHECK,
	LFS_CMD_LEASE_RENEW,
	LFS_CMD_LEASE_GET,
	LFS_CMD_SHELF_FENCE,
	LFS_CMD_FABRIC_LABEL,
	LFS_CMD_UPCALL_REGISTER,
	LFS_CMD_UPCALL_UNREGISTER,
	LFS_CMD_UPCALL_GET,
	LFS_CMD_UPCALL_REQUEST,
	LFS_CMD_UPCALL_REPLY,
	LFS_CMD_FABRIC_BAD,
	LFS_CMD_BOOK_MOVE,
	__LFS_CMD_MAX
};
#define LFS_CMD_MAX (__LFS_CMD_MAX - 1)

enum lfs_attr {
	LFS_A_UNSPEC,
	LFS_A_PAD,
	LFS_A_PATH,
	LFS_A_IG,
	LFS_A_BOOK_SIZE,
	LFS_A_OFFSET,
	LFS_A_DEV_SIZE,
	LFS_A_DEVT,
	LFS_A_NR_BOOKS,
	LFS_A_BOOKS_USED,
	LFS_A_DAX,
	LFS_A_NUMA_NODE,
	LFS_A_NAME,
	LFS_A_UUID,
	LFS_A_ID,
	LFS_A_DISK,
	LFS_A_BOOKS,
	LFS_A_BOOKS_START,
	LFS_A_MORE,
	LFS_A_OPEN,
	LFS_A_ZEROED,
	LFS_A_LEASED,
	LFS_A_STATE,
	LFS_A_CREATED,
	LFS_A_LEASE_START,
	LFS_A_LEASE_MS,
	LFS_A_LEASE_LEFT,
	LFS_A_FENCE_ACTION,
	LFS_A_NR_FENCED,
	LFS_A_FABRIC_UUID,
	LFS_A_UP_ID,
	LFS_A_UP_OP,
	LFS_A_UP_ERRNO,
	LFS_A_UP_FLAGS,
	LFS_A_NEW_NAME,
	LFS_A_SIZE,
	LFS_A_INO,
	LFS_A_MTIME,
	LFS_A_CTIME,
	LFS_A_WRITABLE,
	LFS_A_POLICY,
	LFS_A_XATTR_NAME,
	LFS_A_XATTR_VALUE,
	LFS_A_XATTR_NAMES,
	LFS_A_ENTRIES,
	LFS_A_TOTAL_BYTES,
	LFS_A_FREE_BYTES,
	LFS_A_NR_FILES,
	LFS_A_UP_PORTID,
	LFS_A_UP_PENDING,
	LFS_A_UP_SENT,
	LFS_A_UP_REFUSED,
	LFS_A_NR_ACTIVE,
	LFS_A_FENCE_COUNT,
	LFS_A_FENCE_LAST_NS,
	LFS_A_FENCE_MAX_NS,
	LFS_A_FENCE_DONE_LAST_NS,
	LFS_A_FENCE_DONE_MAX_NS,
	LFS_A_FENCE_HIST,
	LFS_A_FENCE_WATCHDOG_MS,
	LFS_A_BAD,
	LFS_A_VOLATILE,
	LFS_A_DEVDAX,
	__LFS_A_MAX
};
#define LFS_A_MAX (__LFS_A_MAX - 1)

#endif /* _UAPI_LINUX_LFS_H */
