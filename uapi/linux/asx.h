/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * ASX: kernel Streams and scheduler activations, reached through /dev/asx.
 *
 * Every ioctl argument is a struct whose first field is __u32 size, set by
 * the caller to sizeof() the struct as it was compiled. The kernel accepts:
 *
 *   size <  the first published size of the struct      -> EINVAL
 *   size == the size the kernel knows                   -> used as is
 *   size <  the size the kernel knows (older caller)    -> missing fields are 0
 *   size >  the size the kernel knows (newer caller)    -> the bytes the kernel
 *                                                          does not know must
 *                                                          be 0, else E2BIG
 *
 * Reserved fields and unknown flag bits must be 0 (EINVAL otherwise). Output
 * is written back for min(size, size the kernel knows) bytes.
 *
 * Errors common to every ioctl:
 *
 *   ENOTTY  unknown ioctl command
 *   EINVAL  size too small, reserved field or unknown flag set
 *   E2BIG   size larger than the kernel knows and the extra bytes not all 0
 *   EFAULT  the argument pointer (or a pointer inside it) is not accessible
 *
 * Errors of the Stream ioctls (see Documentation/kmod.rst for each one):
 *
 *   ENOENT  PUSH/POP/SETDRV: no module or driver of that name
 *   ENOSR   PUSH: the Stream already holds ASX_MAX_DEPTH modules; LINK: the
 *           mux holds 64 lowers
 *   ETOOMANYREFS LINK: the caller's user has RLIMIT_NOFILE lowers linked
 *   ENXIO   a queue level past the driver; UNLINK of an unknown id
 *   EAGAIN  O_NONBLOCK and the call would block
 *   EBADMSG read() of a message with a control part in ASX_RPROTNORM mode
 *   ERANGE  PUTMSG/STR: a part longer than ASX_MAX_CTL, ASX_MAX_DATA, ASX_MAX_STR
 *   ETIME   STR: no answer within the timeout
 *   EPIPE   write/PUTMSG on a pipe whose other end is closed (and SIGPIPE)
 *   EBUSY   SETDRV/PIPE on a Stream that is not fresh; LINK of a linked Stream
 *   EINTR   STR interrupted by a signal (read/write/PUTMSG/GETMSG restart)
 *   EPERM   SETWM: hiwat above ASX_MAX_HIWAT_USER without CAP_SYS_RESOURCE
 *   ENOBUFS write/PUTMSG/STR: the messages in Streams the opener of this one
 *           opened reach the module parameter user_max_bytes (per user,
 *           CAP_SYS_RESOURCE exempt)
 *
 * Errors of the activation ioctls (Documentation/sa.rst):
 *
 *   ENOSPC  SA_CREATE: the system's groups (module parameter sa_max_groups,
 *           default ASX_SA_MAX_GROUPS) or the caller's (sa_max_user_groups)
 *           are open; SA_JOIN: the group has its max_vps members
 *   EBUSY   SA_JOIN: the calling thread is a member of a group already
 *   EPERM   SA_JOIN: the calling thread is not of the process that made the group
 *   ENOENT  SA_LEAVE: the calling thread is not a member of this group
 *   EINTR   SA_WAIT: a signal arrived (restarted with SA_RESTART: the deadline
 *           is absolute)
 */
#ifndef _UAPI_LINUX_ASX_H
#define _UAPI_LINUX_ASX_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* Free in Documentation/userspace-api/ioctl/ioctl-number.rst (Linux 6.1). */
#define ASX_IOC_MAGIC		0xA6

/* The ABI version reported by ASX_IOC_VERSION. */
#define ASX_VERSION_MAJOR	0
#define ASX_VERSION_MINOR	4
#define ASX_VERSION_PATCH	0

/* Bits of asx_version.features, one per optional capability of the module. */
enum asx_feature {
	ASX_FEAT_STREAMS	= 1 << 0,	/* Streams: read/write/poll, push/pop, ... */
	ASX_FEAT_PIPE		= 1 << 1,	/* ASX_IOC_PIPE */
	ASX_FEAT_MUX		= 1 << 2,	/* the mux driver, ASX_IOC_LINK/UNLINK */
	ASX_FEAT_STR		= 1 << 3,	/* ASX_IOC_STR */
	ASX_FEAT_PROCFS		= 1 << 4,	/* /proc/asx/{streams,objects,modules} */
	ASX_FEAT_SA		= 1 << 5,	/* scheduler activations: ASX_IOC_SA_* */
	ASX_FEAT_SA_POST	= 1 << 6,	/* ASX_IOC_SA_POST, ASX_SA_USER events (0.3) */
	ASX_FEAT_XSI		= 1 << 7,	/* the XSI requests ASX_I_* (streamio(7)) */
	ASX_FEAT_AUTOPUSH	= 1 << 8,	/* ASX_IOC_AUTOPUSH */
	ASX_FEAT_XSI_FD		= 1 << 9,	/* I_SENDFD, I_RECVFD, I_FDINSERT, I_[SG]ETCLTIME */
	ASX_FEAT_PLINK		= 1 << 10,	/* ASX_I_PLINK/PUNLINK on a named mux "mux.N" */
	ASX_FEAT_QBAND		= 1 << 11,	/* per-band flow control, asx_wm.band */
	ASX_FEAT_TRANSPARENT	= 1 << 12,	/* transparent ioctls: M_COPYIN/M_COPYOUT */
	ASX_FEAT_DRVREG		= 1 << 13,	/* drivers registered by other kernel modules */
	ASX_FEAT_SA_PREEMPT	= 1 << 14,	/* ASX_SA_PREEMPT: PREEMPTED/RESUMED events */
};

/* Limits. */
#define ASX_NAME_MAX		32	/* module and driver names, with the NUL */
#define ASX_MAX_DEPTH		16	/* modules on one Stream */
#define ASX_MAX_CTL		4096	/* control part of PUTMSG */
#define ASX_MAX_DATA		65536	/* data part of PUTMSG */
#define ASX_MAX_STR		4096	/* data of ASX_IOC_STR */
#define ASX_MAX_TCOPY		65536	/* one M_COPYIN/M_COPYOUT of a transparent ioctl */
#define ASX_MAX_WRITE		16384	/* write() is cut into messages of this size */
#define ASX_MAX_HIWAT		(16 << 20)
#define ASX_MAX_HIWAT_USER	(1 << 20)	/* above it SETWM needs CAP_SYS_RESOURCE */
#define ASX_DEF_HIWAT		65536	/* default water marks of every queue */
#define ASX_DEF_LOWAT		16384
#define ASX_MAX_HIPRI_QUEUED	16	/* high-priority messages one queue holds; more are dropped */

/**
 * struct asx_version - ASX_IOC_VERSION argument
 * @size:      in: sizeof(struct asx_version) as the caller knows it
 * @major:     out: ABI major version (incompatible changes)
 * @minor:     out: ABI minor version (compatible additions)
 * @patch:     out: patch level
 * @features:  out: ASX_FEAT_* bits supported by the running module
 * @reserved:  in: must be 0; out: 0
 * @max_depth: out (since 0.2, size >= 48): ASX_MAX_DEPTH of the module
 * @max_write: out (since 0.2, size >= 48): ASX_MAX_WRITE of the module
 */
struct asx_version {
	__u32 size;
	__u32 major;
	__u32 minor;
	__u32 patch;
	__aligned_u64 features;
	__u64 reserved[2];
	__u32 max_depth;
	__u32 max_write;
};

#define ASX_VERSION_SIZE_VER0	40	/* sizeof the first published struct asx_version */
#define ASX_VERSION_SIZE_VER1	48	/* 0.2: max_depth, max_write */

/**
 * struct asx_modname - PUSH, POP and SETDRV argument
 * @size:     in: sizeof(struct asx_modname)
 * @flags:    in: must be 0
 * @name:     in: NUL-terminated module (PUSH, POP) or driver (SETDRV) name;
 *            POP with an empty name pops the top module
 * @reserved: in: must be 0
 */
struct asx_modname {
	__u32 size;
	__u32 flags;
	char name[ASX_NAME_MAX];
	__u64 reserved;
};

#define ASX_MODNAME_SIZE_VER0	48

/**
 * struct asx_list - LIST argument: the modules of a Stream, top first
 * @size:     in: sizeof(struct asx_list)
 * @count:    in: entries in @names; out: modules on the Stream (may exceed in)
 * @names:    in: user pointer to @count char[ASX_NAME_MAX]; out: filled
 * @driver:   out: the driver's name
 * @reserved: in: must be 0
 */
struct asx_list {
	__u32 size;
	__u32 count;
	__aligned_u64 names;
	char driver[ASX_NAME_MAX];
	__u64 reserved;
};

#define ASX_LIST_SIZE_VER0	56

/**
 * struct asx_strbuf - one part (control or data) of a message
 * @maxlen: GETMSG/PEEK in: bytes available at @buf
 * @len:    PUTMSG in: bytes to send, -1 for no such part;
 *          GETMSG/PEEK out: bytes stored, -1 when the message has no such part
 * @buf:    user pointer
 */
struct asx_strbuf {
	__u32 maxlen;
	__s32 len;
	__aligned_u64 buf;
};

/* asx_strmsg.flags */
#define ASX_MSG_ANY	0x0	/* GETMSG: the first message */
#define ASX_MSG_HIPRI	0x1	/* a high-priority message (control part required) */
#define ASX_MSG_BAND	0x2	/* GETMSG: the first message of band >= @band */
/* PUTMSG: on a hung-up Stream fail with ENXIO, no SIGPIPE (putmsg(2); <asx/stropts.h>) */
#define ASX_MSG_XSI	0x100

/* asx_strmsg.more (GETMSG out): parts not wholly returned are kept queued */
#define ASX_MORECTL	0x1
#define ASX_MOREDATA	0x2

/**
 * struct asx_strmsg - PUTMSG, GETMSG and PEEK argument
 * @size:     in: sizeof(struct asx_strmsg)
 * @flags:    PUTMSG in: 0 or ASX_MSG_HIPRI, optionally ASX_MSG_XSI; GETMSG/PEEK in: ASX_MSG_ANY,
 *            ASX_MSG_HIPRI or ASX_MSG_BAND; out: ASX_MSG_HIPRI or ASX_MSG_BAND
 * @band:     PUTMSG in: priority band 0-255 (0 with HIPRI); GETMSG in: lowest
 *            band wanted with ASX_MSG_BAND; out: the message's band
 * @more:     GETMSG out: ASX_MORECTL, ASX_MOREDATA; PEEK out: 1 if found
 * @ctl:      the control part
 * @data:     the data part
 * @reserved: in: must be 0
 */
struct asx_strmsg {
	__u32 size;
	__u32 flags;
	__u32 band;
	__u32 more;
	struct asx_strbuf ctl;
	struct asx_strbuf data;
	__u64 reserved[2];
};

#define ASX_STRMSG_SIZE_VER0	64

/* asx_flush.flags */
#define ASX_FLUSHR	0x1	/* the read side */
#define ASX_FLUSHW	0x2	/* the write side */
#define ASX_FLUSHRW	(ASX_FLUSHR | ASX_FLUSHW)
#define ASX_FLUSHBAND	0x4	/* only messages of @band */

/**
 * struct asx_flush - FLUSH argument
 * @size:     in: sizeof(struct asx_flush)
 * @flags:    in: ASX_FLUSHR and/or ASX_FLUSHW, optionally ASX_FLUSHBAND
 * @band:     in: the band with ASX_FLUSHBAND, else 0
 * @reserved: in: must be 0
 */
struct asx_flush {
	__u32 size;
	__u32 flags;
	__u32 band;
	__u32 reserved;
};

#define ASX_FLUSH_SIZE_VER0	16

/* Read options (SRDOPT/GRDOPT): one mode ... */
#define ASX_RNORM	0x00	/* byte stream: read across message boundaries */
#define ASX_RMSGD	0x01	/* one message per read, the rest discarded */
#define ASX_RMSGN	0x02	/* one message per read, the rest kept */
#define ASX_RMODEMASK	0x03
/* ... or'ed with how read() treats a control part */
#define ASX_RPROTNORM	0x00	/* fail with EBADMSG */
#define ASX_RPROTDAT	0x10	/* deliver it as data */
#define ASX_RPROTDIS	0x20	/* discard it, deliver the data part */
#define ASX_RPROTMASK	0x30

/* Write options (SWROPT/GWROPT) */
#define ASX_SNDZERO	0x01	/* write(fd, buf, 0) sends a zero-length message */

/**
 * struct asx_opt - SRDOPT, GRDOPT, SWROPT and GWROPT argument
 * @size:     in: sizeof(struct asx_opt)
 * @opt:      SRDOPT/SWROPT in, GRDOPT/GWROPT out: the options
 * @reserved: in: must be 0
 */
struct asx_opt {
	__u32 size;
	__u32 opt;
	__u64 reserved;
};

#define ASX_OPT_SIZE_VER0	16

/**
 * struct asx_nread - NREAD argument
 * @size:     in: sizeof(struct asx_nread)
 * @msgs:     out: messages queued at the Stream head
 * @first:    out: bytes of the first message (control and data parts)
 * @bytes:    out: bytes of all messages (control and data parts)
 * @reserved: in: must be 0
 */
struct asx_nread {
	__u32 size;
	__u32 msgs;
	__aligned_u64 first;
	__aligned_u64 bytes;
	__u64 reserved;
};

#define ASX_NREAD_SIZE_VER0	32

/* Queue selection: level 0 is the Stream head, 1..depth the modules from the
 * top, depth + 1 (or ASX_LEVEL_DRIVER) the driver.
 */
#define ASX_LEVEL_DRIVER	0xffffffffU
#define ASX_SIDE_READ		0
#define ASX_SIDE_WRITE		1

/**
 * struct asx_wm - GETWM and SETWM argument
 * @size:     in: sizeof(struct asx_wm)
 * @level:    in: the queue's level (see ASX_LEVEL_DRIVER)
 * @side:     in: ASX_SIDE_READ or ASX_SIDE_WRITE
 * @flags:    in: must be 0
 * @hiwat:    SETWM in, GETWM out: high water mark in bytes (1..ASX_MAX_HIWAT)
 * @lowat:    SETWM in, GETWM out: low water mark in bytes (<= @hiwat)
 * @band:     in: 0 for the queue's own marks (band 0), 1..255 for that band's
 *            (ASX_FEAT_QBAND; a band without its own has the queue's)
 * @reserved: in: must be 0
 */
struct asx_wm {
	__u32 size;
	__u32 level;
	__u32 side;
	__u32 flags;
	__aligned_u64 hiwat;
	__aligned_u64 lowat;
	__u32 band;
	__u32 reserved;
};

#define ASX_WM_SIZE_VER0	40

/* asx_qstats.qflags */
#define ASX_QS_FULL	0x1	/* over the high water mark, not yet below low */
#define ASX_QS_WANTW	0x2	/* a writer waits for it to drain */
#define ASX_QS_ENABLED	0x4	/* its service procedure is scheduled */
#define ASX_QS_SRV	0x8	/* it has a service procedure */

/**
 * struct asx_qstats - QSTATS argument
 * @size:      in: sizeof(struct asx_qstats)
 * @level:     in: the queue's level
 * @side:      in: ASX_SIDE_READ or ASX_SIDE_WRITE
 * @qflags:    out: ASX_QS_*
 * @name:      out: module, "head" or the driver's name
 * @count:     out: bytes queued
 * @msgs:      out: messages queued
 * @hiwat:     out: high water mark
 * @lowat:     out: low water mark
 * @puts:      out: calls of its put procedure
 * @srv_runs:  out: runs of its service procedure
 * @enqueued:  out: messages ever queued on it
 * @fc_stops:  out: times it became full (flow control stop)
 * @fc_starts: out: times its draining back-enabled a writer (flow control start)
 * @drops:     out: messages it discarded (hung up, no route, bad checksum)
 * @reserved:  in: must be 0
 */
struct asx_qstats {
	__u32 size;
	__u32 level;
	__u32 side;
	__u32 qflags;
	char name[ASX_NAME_MAX];
	__aligned_u64 count;
	__aligned_u64 msgs;
	__aligned_u64 hiwat;
	__aligned_u64 lowat;
	__aligned_u64 puts;
	__aligned_u64 srv_runs;
	__aligned_u64 enqueued;
	__aligned_u64 fc_stops;
	__aligned_u64 fc_starts;
	__aligned_u64 drops;
	__u64 reserved[2];
};

#define ASX_QSTATS_SIZE_VER0	144

/**
 * struct asx_strioctl - STR argument: an ioctl carried down as a message
 * @size:       in: sizeof(struct asx_strioctl)
 * @cmd:        in: the module's command (ASX_STR_*)
 * @timeout_ms: in: 0 for the default (15 s), -1 for none, else milliseconds
 * @len:        in: bytes of @data sent down; out: bytes of reply stored
 * @maxlen:     in: bytes available at @data for the reply
 * @rval:       out: the module's return value
 * @data:       in: user pointer
 * @reserved:   in: must be 0
 *
 * The ioctl returns 0 when a module acknowledges it, and -1 with errno set to
 * the module's error when one refuses it (the driver refuses every command
 * no module took: EINVAL).
 */
struct asx_strioctl {
	__u32 size;
	__u32 cmd;
	__s32 timeout_ms;
	__u32 len;
	__u32 maxlen;
	__s32 rval;
	__aligned_u64 data;
	__u64 reserved[2];
};

#define ASX_STRIOCTL_SIZE_VER0	48

/* STR commands of the built-in modules */
#define ASX_STR_HOLD_RELEASE	0x48010001	/* hold: let messages through (rval: held) */
#define ASX_STR_HOLD_HOLD	0x48010002	/* hold: hold them again */
#define ASX_STR_COUNT_GET	0x43010001	/* count: reply struct asx_count_stats */
#define ASX_STR_COUNT_RESET	0x43010002	/* count: zero the counters */
#define ASX_STR_CSUM_GET	0x53010001	/* csum: reply struct asx_csum_stats */

/**
 * struct asx_count_stats - reply to ASX_STR_COUNT_GET
 * @rmsgs:  messages that went up
 * @rbytes: bytes that went up (control and data parts)
 * @wmsgs:  messages that went down
 * @wbytes: bytes that went down (control and data parts)
 */
struct asx_count_stats {
	__aligned_u64 rmsgs;
	__aligned_u64 rbytes;
	__aligned_u64 wmsgs;
	__aligned_u64 wbytes;
};

/**
 * struct asx_csum_stats - reply to ASX_STR_CSUM_GET
 * @computed: messages given a checksum on the way down
 * @good:     messages whose checksum verified on the way up
 * @bad:      messages dropped on the way up: bad checksum or shorter than 2 bytes
 */
struct asx_csum_stats {
	__aligned_u64 computed;
	__aligned_u64 good;
	__aligned_u64 bad;
};

/*
 * The "tioc" module (kmod/mod_tioctl.c), the example of a transparent ioctl:
 * programs call ioctl(fd, ASX_TIOC_XFORM, &v) on a Stream with "tioc" pushed.
 * The module copies in @v, then the @len bytes at @buf, XORs each with @key,
 * copies them back to @buf, stores their sum (before the XOR) in @sum,
 * copies @v back out and returns @len. ASX_TIOC_STALL does the same but
 * stops after copying in @v until a data message passes the module (for the
 * tests of an exchange cut short). ASX_TIOC_NAK refuses with its argument as
 * the errno. ASX_STR_TIOC_STATS (an STR) replies struct asx_tioc_stats.
 */
#define ASX_TIOC_MAGIC		0xA7
#define ASX_TIOC_XFORM		_IOWR(ASX_TIOC_MAGIC, 1, struct asx_tioc_vec)
#define ASX_TIOC_STALL		_IOWR(ASX_TIOC_MAGIC, 2, struct asx_tioc_vec)
#define ASX_TIOC_NAK		_IO(ASX_TIOC_MAGIC, 3)
#define ASX_STR_TIOC_STATS	0x54010001

/**
 * struct asx_tioc_vec - ASX_TIOC_XFORM argument: a struct with a pointer
 * @buf: in: user pointer to @len bytes
 * @len: in: bytes at @buf
 * @key: in: the byte each one is XORed with
 * @sum: out: the sum of the bytes before the XOR
 * @pad: 0
 *
 * A 32-bit caller's layout is { __u32 buf, len, key, sum; } (the module
 * learns it from ASX_IOC_ILP32 in the ioctl message).
 */
struct asx_tioc_vec {
	__aligned_u64 buf;
	__u32 len;
	__u32 key;
	__u32 sum;
	__u32 pad;
};

/**
 * struct asx_tioc_stats - reply to ASX_STR_TIOC_STATS
 * @ioctls:   transparent ioctls the module took
 * @copyins:  M_COPYIN it sent
 * @copyouts: M_COPYOUT it sent
 * @acks:     exchanges it ended with M_IOCACK
 * @naks:     exchanges it ended with M_IOCNAK
 * @aborted:  exchanges the Stream head ended (an M_IOCDATA with an error)
 * @open:     exchanges under way (state allocated), now
 * @peak:     the most exchanges ever under way at once (1: one at a time)
 */
struct asx_tioc_stats {
	__aligned_u64 ioctls;
	__aligned_u64 copyins;
	__aligned_u64 copyouts;
	__aligned_u64 acks;
	__aligned_u64 naks;
	__aligned_u64 aborted;
	__aligned_u64 open;
	__aligned_u64 peak;
};

/* The mux driver: every message carries this header as its control part. */
struct asx_mux_hdr {
	__u32 id;
	__u32 reserved;
};

#define ASX_MUX_ALL	0xffffffffU	/* UNLINK: every lower Stream */
#define ASX_MUX_UNITS	256		/* named muxes: SETDRV "mux.0" to "mux.255" */

/**
 * struct asx_link - LINK and UNLINK argument
 * @size:     in: sizeof(struct asx_link)
 * @fd:       LINK in: the Stream to link under this mux
 * @id:       LINK out: the lower Stream's mux id; UNLINK in: id or ASX_MUX_ALL
 * @reserved: in: must be 0
 */
struct asx_link {
	__u32 size;
	__s32 fd;
	__u32 id;
	__u32 reserved;
};

#define ASX_LINK_SIZE_VER0	16

/* asx_pipe.flags */
#define ASX_PIPE_CLOEXEC	0x1
#define ASX_PIPE_NONBLOCK	0x2

/**
 * struct asx_pipe - PIPE argument
 * @size:     in: sizeof(struct asx_pipe)
 * @flags:    in: ASX_PIPE_CLOEXEC, ASX_PIPE_NONBLOCK for the new descriptor
 * @fd:       out: the descriptor of the other end
 * @reserved: in: must be 0
 */
struct asx_pipe {
	__u32 size;
	__u32 flags;
	__s32 fd;
	__u32 reserved;
};

#define ASX_PIPE_SIZE_VER0	16

/* Autopush (ASX_IOC_AUTOPUSH): the modules pushed when a Stream gets a driver */
#define ASX_AUTOPUSH_MAX	8	/* modules in one driver's list */
#define ASX_AUTOPUSH_DRIVERS	16	/* drivers with a list */
#define ASX_AP_SET		1	/* set @driver's list (CAP_SYS_ADMIN) */
#define ASX_AP_GET		2	/* read it */
#define ASX_AP_CLEAR		3	/* remove it (CAP_SYS_ADMIN) */

/**
 * struct asx_autopush - AUTOPUSH argument
 * @size:     in: sizeof(struct asx_autopush)
 * @cmd:      in: ASX_AP_SET, ASX_AP_GET or ASX_AP_CLEAR
 * @driver:   in: the driver's name (loop, null, pipe, mux)
 * @count:    SET in, GET out: modules in @modules (1..ASX_AUTOPUSH_MAX)
 * @reserved: in: must be 0
 * @modules:  SET in, GET out: the names, pushed first to last (the last
 *            ends up on top), NUL-terminated
 *
 * A Stream gets its driver's list pushed when it is opened (loop), given a
 * driver by SETDRV, or made a pipe end (both ends: pipe).  SET checks that
 * every module is registered (ENOENT) and replaces the list; GET of a driver
 * with no list fails with ENOENT.
 */
struct asx_autopush {
	__u32 size;
	__u32 cmd;
	char driver[ASX_NAME_MAX];
	__u32 count;
	__u32 reserved;
	char modules[ASX_AUTOPUSH_MAX][ASX_NAME_MAX];
};

#define ASX_AUTOPUSH_SIZE_VER0	304

/* Scheduler activations: limits, ring sizes in events */
#define ASX_SA_MAX_GROUPS	256	/* default of sa_max_groups: groups in the system */
#define ASX_SA_MAX_VPS		1024	/* members of one group */
#define ASX_SA_DEF_VPS		64
#define ASX_SA_MIN_RING		64
#define ASX_SA_MAX_RING		16384
#define ASX_SA_DEF_RING		4096
#define ASX_SA_WAIT_MAX		1024	/* events one SA_WAIT returns */

/* asx_sa_create.flags */
#define ASX_SA_CLOEXEC		0x1	/* the group descriptor is close-on-exec */
#define ASX_SA_PREEMPT		0x2	/* also PREEMPTED and RESUMED (ASX_FEAT_SA_PREEMPT) */

/**
 * struct asx_sa_create - SA_CREATE argument (on any /dev/asx descriptor)
 * @size:      in: sizeof(struct asx_sa_create)
 * @flags:     in: ASX_SA_CLOEXEC, ASX_SA_PREEMPT
 * @max_vps:   in: member limit, 0 for ASX_SA_DEF_VPS (<= ASX_SA_MAX_VPS);
 *             out: the limit
 * @ring_size: in: events the ring holds, a power of two in [ASX_SA_MIN_RING,
 *             ASX_SA_MAX_RING], 0 for ASX_SA_DEF_RING; out: the size
 * @fd:        out: the new group's descriptor
 * @reserved:  in: must be 0
 * @id:        out: the group's id (in the tracepoints)
 * @reserved2: in: must be 0
 */
struct asx_sa_create {
	__u32 size;
	__u32 flags;
	__u32 max_vps;
	__u32 ring_size;
	__s32 fd;
	__u32 reserved;
	__aligned_u64 id;
	__u64 reserved2;
};

#define ASX_SA_CREATE_SIZE_VER0	40

/**
 * struct asx_sa_join - SA_JOIN and SA_LEAVE argument (on a group descriptor)
 * @size:     in: sizeof(struct asx_sa_join)
 * @flags:    in: must be 0
 * @vp:       out: the VP id of the calling thread in the group (0..max_vps-1)
 * @tid:      out: the calling thread's id
 * @reserved: in: must be 0
 */
struct asx_sa_join {
	__u32 size;
	__u32 flags;
	__u32 vp;
	__u32 tid;
	__u64 reserved;
};

#define ASX_SA_JOIN_SIZE_VER0	24

/* asx_sa_event.type */
#define ASX_SA_BLOCKED		1	/* member @vp went to sleep in the kernel */
#define ASX_SA_UNBLOCKED	2	/* member @vp runs again after BLOCKED */
#define ASX_SA_EXITED		3	/* member @vp exited without SA_LEAVE */
#define ASX_SA_OVERFLOW		4	/* @arg events from @seq on were lost: ring full */
#define ASX_SA_USER		5	/* posted by ASX_IOC_SA_POST: @arg its value (0.3) */
#define ASX_SA_PREEMPTED	6	/* member @vp was preempted, still runnable (ASX_SA_PREEMPT) */
#define ASX_SA_RESUMED		7	/* member @vp runs again after PREEMPTED */

#define ASX_SA_NO_VP		0xffffffffu	/* asx_sa_event.vp of a USER event */

/**
 * struct asx_sa_event - one activation event
 * @type:  ASX_SA_*
 * @vp:    the member's VP id (0 for OVERFLOW, ASX_SA_NO_VP for USER)
 * @ts_ns: CLOCK_MONOTONIC time of the event, nanoseconds
 * @seq:   the group's event number: consecutive, an OVERFLOW accounts for the
 *         @arg numbers it stands for
 * @tid:   the member's thread id (0 for OVERFLOW; USER: the poster's)
 * @arg:   OVERFLOW: events lost; USER: the value posted; PREEMPTED: the
 *         member's preemptions the rate limit left unreported since its
 *         last PREEMPTED; else 0
 */
struct asx_sa_event {
	__u32 type;
	__u32 vp;
	__aligned_u64 ts_ns;
	__aligned_u64 seq;
	__u32 tid;
	__u32 arg;
};

#define ASX_SA_DEADLINE_NONE	(~0ULL)	/* asx_sa_wait.deadline_ns: wait for ever */

/**
 * struct asx_sa_wait - SA_WAIT argument: the upcall
 * @size:        in: sizeof(struct asx_sa_wait)
 * @flags:       in: must be 0
 * @deadline_ns: in: absolute CLOCK_MONOTONIC deadline; 0 takes what is there
 *               without sleeping; ASX_SA_DEADLINE_NONE waits for ever
 * @events:      in: user pointer to @max struct asx_sa_event
 * @max:         in: 1..ASX_SA_WAIT_MAX
 * @count:       out: events stored (also the ioctl's return value); 0 when
 *               the deadline passed
 * @reserved:    in: must be 0
 */
struct asx_sa_wait {
	__u32 size;
	__u32 flags;
	__aligned_u64 deadline_ns;
	__aligned_u64 events;
	__u32 max;
	__u32 count;
	__u64 reserved;
};

#define ASX_SA_WAIT_SIZE_VER0	40

/**
 * struct asx_sa_info - SA_INFO argument (on a group descriptor)
 * @size:        in: sizeof(struct asx_sa_info)
 * @flags:       in: must be 0
 * @id:          out: the group's id
 * @max_vps:     out: its member limit
 * @nr_vps:      out: its members now
 * @ring_size:   out: its ring size
 * @pending:     out: events in its ring
 * @events:      out: events it recorded (lost ones included)
 * @lost:        out: events it lost to a full ring
 * @sys_groups:  out: groups open in the system
 * @sys_members: out: threads with an activation notifier registered by
 *               asx.ko, in any group or in none (group closed before the
 *               thread left or exited: see Documentation/sa.rst)
 * @reserved:    in: must be 0
 */
struct asx_sa_info {
	__u32 size;
	__u32 flags;
	__aligned_u64 id;
	__u32 max_vps;
	__u32 nr_vps;
	__u32 ring_size;
	__u32 pending;
	__aligned_u64 events;
	__aligned_u64 lost;
	__u32 sys_groups;
	__u32 sys_members;
	__u64 reserved[2];
};

#define ASX_SA_INFO_SIZE_VER0	72

/**
 * struct asx_sa_post - SA_POST argument (on a group descriptor; ABI 0.3)
 * @size:     in: sizeof(struct asx_sa_post)
 * @flags:    in: must be 0
 * @arg:      in: the value the ASX_SA_USER event carries
 * @reserved: in: must be 0
 *
 * Appends one ASX_SA_USER event to the group's ring, which wakes one spare
 * parked in SA_WAIT: a user-level scheduler uses it to hand a spare work or
 * to tell it to leave. Any holder of the descriptor may post.
 */
struct asx_sa_post {
	__u32 size;
	__u32 flags;
	__u32 arg;
	__u32 reserved;
};

#define ASX_SA_POST_SIZE_VER0	16

#define ASX_IOC_VERSION		_IOWR(ASX_IOC_MAGIC, 0x00, struct asx_version)
#define ASX_IOC_PUSH		_IOW(ASX_IOC_MAGIC, 0x01, struct asx_modname)
#define ASX_IOC_POP		_IOW(ASX_IOC_MAGIC, 0x02, struct asx_modname)
#define ASX_IOC_LIST		_IOWR(ASX_IOC_MAGIC, 0x03, struct asx_list)
#define ASX_IOC_PUTMSG		_IOW(ASX_IOC_MAGIC, 0x04, struct asx_strmsg)
#define ASX_IOC_GETMSG		_IOWR(ASX_IOC_MAGIC, 0x05, struct asx_strmsg)
#define ASX_IOC_PEEK		_IOWR(ASX_IOC_MAGIC, 0x06, struct asx_strmsg)
#define ASX_IOC_FLUSH		_IOW(ASX_IOC_MAGIC, 0x07, struct asx_flush)
#define ASX_IOC_SRDOPT		_IOW(ASX_IOC_MAGIC, 0x08, struct asx_opt)
#define ASX_IOC_GRDOPT		_IOWR(ASX_IOC_MAGIC, 0x09, struct asx_opt)
#define ASX_IOC_SWROPT		_IOW(ASX_IOC_MAGIC, 0x0a, struct asx_opt)
#define ASX_IOC_GWROPT		_IOWR(ASX_IOC_MAGIC, 0x0b, struct asx_opt)
#define ASX_IOC_NREAD		_IOWR(ASX_IOC_MAGIC, 0x0c, struct asx_nread)
#define ASX_IOC_GETWM		_IOWR(ASX_IOC_MAGIC, 0x0d, struct asx_wm)
#define ASX_IOC_SETWM		_IOW(ASX_IOC_MAGIC, 0x0e, struct asx_wm)
#define ASX_IOC_QSTATS		_IOWR(ASX_IOC_MAGIC, 0x0f, struct asx_qstats)
#define ASX_IOC_STR		_IOWR(ASX_IOC_MAGIC, 0x10, struct asx_strioctl)
#define ASX_IOC_LINK		_IOWR(ASX_IOC_MAGIC, 0x11, struct asx_link)
#define ASX_IOC_UNLINK		_IOW(ASX_IOC_MAGIC, 0x12, struct asx_link)
#define ASX_IOC_PIPE		_IOWR(ASX_IOC_MAGIC, 0x13, struct asx_pipe)
#define ASX_IOC_SETDRV		_IOW(ASX_IOC_MAGIC, 0x14, struct asx_modname)
#define ASX_IOC_AUTOPUSH	_IOWR(ASX_IOC_MAGIC, 0x15, struct asx_autopush)
/* Scheduler activations: SA_CREATE on /dev/asx, the others on a group */
#define ASX_IOC_SA_CREATE	_IOWR(ASX_IOC_MAGIC, 0x20, struct asx_sa_create)
#define ASX_IOC_SA_JOIN		_IOWR(ASX_IOC_MAGIC, 0x21, struct asx_sa_join)
#define ASX_IOC_SA_LEAVE	_IOW(ASX_IOC_MAGIC, 0x22, struct asx_sa_join)
#define ASX_IOC_SA_WAIT		_IOWR(ASX_IOC_MAGIC, 0x23, struct asx_sa_wait)
#define ASX_IOC_SA_INFO		_IOWR(ASX_IOC_MAGIC, 0x24, struct asx_sa_info)
#define ASX_IOC_SA_POST		_IOW(ASX_IOC_MAGIC, 0x25, struct asx_sa_post)

/*
 * The XSI STREAMS ioctls (streamio(7)), accepted on /dev/asx with the request
 * numbers Linux STREAMS implementations use ('S' << 8 | n) and the XSI
 * argument conventions: an int or a pointer, no size field.  <asx/stropts.h>
 * gives them their XSI names (I_PUSH, struct strioctl, ...).  The structs
 * below are their 64-bit layouts; a 32-bit process gets ENOTTY for the
 * requests whose argument holds a pointer (I_STR, I_PEEK, I_LIST).
 */
#define ASX_XSI_SID		('S' << 8)
#define ASX_I_NREAD		(ASX_XSI_SID | 1)
#define ASX_I_PUSH		(ASX_XSI_SID | 2)
#define ASX_I_POP		(ASX_XSI_SID | 3)
#define ASX_I_LOOK		(ASX_XSI_SID | 4)
#define ASX_I_FLUSH		(ASX_XSI_SID | 5)
#define ASX_I_SRDOPT		(ASX_XSI_SID | 6)
#define ASX_I_GRDOPT		(ASX_XSI_SID | 7)
#define ASX_I_STR		(ASX_XSI_SID | 8)
#define ASX_I_SETSIG		(ASX_XSI_SID | 9)
#define ASX_I_GETSIG		(ASX_XSI_SID | 10)
#define ASX_I_FIND		(ASX_XSI_SID | 11)
#define ASX_I_LINK		(ASX_XSI_SID | 12)
#define ASX_I_UNLINK		(ASX_XSI_SID | 13)
#define ASX_I_RECVFD		(ASX_XSI_SID | 14)
#define ASX_I_PEEK		(ASX_XSI_SID | 15)
#define ASX_I_FDINSERT		(ASX_XSI_SID | 16)
#define ASX_I_SENDFD		(ASX_XSI_SID | 17)
#define ASX_I_SWROPT		(ASX_XSI_SID | 19)
#define ASX_I_GWROPT		(ASX_XSI_SID | 20)
#define ASX_I_LIST		(ASX_XSI_SID | 21)
#define ASX_I_PLINK		(ASX_XSI_SID | 22)
#define ASX_I_PUNLINK		(ASX_XSI_SID | 23)
#define ASX_I_FLUSHBAND		(ASX_XSI_SID | 28)
#define ASX_I_CKBAND		(ASX_XSI_SID | 29)
#define ASX_I_GETBAND		(ASX_XSI_SID | 30)
#define ASX_I_ATMARK		(ASX_XSI_SID | 31)
#define ASX_I_SETCLTIME		(ASX_XSI_SID | 32)
#define ASX_I_GETCLTIME		(ASX_XSI_SID | 33)
#define ASX_I_CANPUT		(ASX_XSI_SID | 34)

#define ASX_XSI_FMNAMESZ	8	/* module names I_LOOK and I_LIST report */
#define ASX_XSI_ANYBAND		(-1)	/* I_CANPUT: any band */
#define ASX_XSI_MUXID_ALL	(-1)	/* I_UNLINK: every lower */
#define ASX_XSI_ANYMARK		0x01	/* I_ATMARK */
#define ASX_XSI_LASTMARK	0x02
#define ASX_XSI_RS_HIPRI	0x01	/* I_PEEK flags, getmsg() */
#define ASX_XSI_MSG_HIPRI	0x01	/* getpmsg()/putpmsg() flags */
#define ASX_XSI_MSG_ANY		0x02
#define ASX_XSI_MSG_BAND	0x04
#define ASX_XSI_MORECTL		0x01
#define ASX_XSI_MOREDATA	0x02
#define ASX_XSI_FLUSHR		0x01	/* I_FLUSH; bandinfo.bi_flag */
#define ASX_XSI_FLUSHW		0x02
#define ASX_XSI_FLUSHRW		0x03
#define ASX_XSI_RNORM		0x0000	/* I_SRDOPT / I_GRDOPT */
#define ASX_XSI_RMSGD		0x0001
#define ASX_XSI_RMSGN		0x0002
#define ASX_XSI_RMODEMASK	0x0003
#define ASX_XSI_RPROTNORM	0x0000
#define ASX_XSI_RPROTDAT	0x0004
#define ASX_XSI_RPROTDIS	0x0008
#define ASX_XSI_RPROTMASK	0x001c
#define ASX_XSI_SNDZERO		0x0001	/* I_SWROPT / I_GWROPT */
#define ASX_XSI_SNDPIPE		0x0002
#define ASX_XSI_INFTIM		(-1)	/* strioctl.ic_timout: no timeout */
#define ASX_XSI_DEF_CLTIME	15000	/* I_GETCLTIME before any I_SETCLTIME: ms (SVR4's) */
#define ASX_XSI_MAX_CLTIME	300000	/* I_SETCLTIME: at most 5 minutes */
/* I_SETSIG / I_GETSIG events: SIGPOLL (SIGURG for S_RDBAND with S_BANDURG) */
#define ASX_XSI_S_INPUT		0x0001	/* a message other than high-priority arrived */
#define ASX_XSI_S_HIPRI		0x0002	/* a high-priority message arrived */
#define ASX_XSI_S_OUTPUT	0x0004	/* the write side (band 0) has room again */
#define ASX_XSI_S_MSG		0x0008	/* an M_SIG message (asx.ko has none) */
#define ASX_XSI_S_ERROR		0x0010	/* an M_ERROR came up */
#define ASX_XSI_S_HANGUP	0x0020	/* an M_HANGUP came up (a pipe's other end closed) */
#define ASX_XSI_S_RDNORM	0x0040	/* a band-0 message arrived */
#define ASX_XSI_S_WRNORM	ASX_XSI_S_OUTPUT
#define ASX_XSI_S_RDBAND	0x0080	/* a message of band > 0 arrived */
#define ASX_XSI_S_WRBAND	0x0100	/* the write side has room for bands > 0 */
#define ASX_XSI_S_BANDURG	0x0200	/* with S_RDBAND: SIGURG instead of SIGPOLL */
#define ASX_XSI_S_ALL		0x03ff

/* struct strbuf: one part of a message; buf a user pointer */
struct asx_xsi_strbuf {
	__s32 maxlen;
	__s32 len;
	__u64 buf;
};

/* struct strpeek: I_PEEK */
struct asx_xsi_strpeek {
	struct asx_xsi_strbuf ctlbuf;
	struct asx_xsi_strbuf databuf;
	__u32 flags;
	__u32 pad;
};

/* struct strioctl: I_STR (ic_timout in seconds; 0: 15 s; ASX_XSI_INFTIM) */
struct asx_xsi_strioctl {
	__s32 ic_cmd;
	__s32 ic_timout;
	__s32 ic_len;
	__u32 pad;
	__u64 ic_dp;
};

/* struct str_mlist, struct str_list: I_LIST */
struct asx_xsi_str_mlist {
	char l_name[ASX_XSI_FMNAMESZ + 1];
};

struct asx_xsi_str_list {
	__s32 sl_nmods;
	__u32 pad;
	__u64 sl_modlist;
};

/*
 * struct strfdinsert: I_FDINSERT. asx.ko stores at ctlbuf + offset the id of
 * fildes's Stream (its number in /proc/asx/streams, low 32 bits), never a
 * kernel pointer.
 */
struct asx_xsi_strfdinsert {
	struct asx_xsi_strbuf ctlbuf;
	struct asx_xsi_strbuf databuf;
	__u32 flags;
	__s32 fildes;
	__s32 offset;
	__u32 pad;
};

/* struct strrecvfd: I_RECVFD (uid, gid: the sender's effective ids, as the reader sees them) */
struct asx_xsi_strrecvfd {
	__s32 fd;
	__u32 uid;
	__u32 gid;
	char fill[8];
};

/* struct bandinfo: I_FLUSHBAND */
struct asx_xsi_bandinfo {
	unsigned char bi_pri;
	unsigned char pad[3];
	__s32 bi_flag;
};

#endif /* _UAPI_LINUX_ASX_H */
