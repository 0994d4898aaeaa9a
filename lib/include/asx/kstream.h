/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * asx/kstream.h - kernel Streams (/dev/asx) from libasx, and user-space
 * Streams whose driver end is a kernel Stream or any descriptor.
 *
 * A struct asx_kstream is one open /dev/asx descriptor: one kernel Stream.
 * The calls below are the size-first ioctls of <linux/asx.h> (the kernel
 * ABI; Documentation/kmod.rst has each one's semantics), so that no
 * program writes them again.  Each returns 0 (or a count) on success and a
 * negative errno on failure; none sets errno.  The kernel ABI's own names
 * (struct asx_qstats, ASX_SIDE_*, ASX_LEVEL_DRIVER, ASX_R*, ASX_STR_*,
 * ASX_MSG_HIPRI/BAND as flags of the raw putmsg/getmsg) are used where a
 * call hands the kernel's structure through; library messages (struct
 * asx_msg, enum asx_msg_type) never see them: asx_kstream_put/get and the
 * drivers map message types and flush bits through one table
 * (asx_kstream_type_to_kernel() and friends).
 *
 * Spanning Streams.  asx_kstream_driver() makes a Module to use as the
 * driver (tail) of a user-space Stream (ASX_STREAM_DRIVER in
 * asx_stream_open()) whose lower end is a kernel Stream: messages going
 * down leave through PUTMSG (or FLUSH), messages the kernel Stream sends
 * up come in through GETMSG, so one Stream runs Modules in user space
 * above Modules pushed in the kernel.  asx_fd_driver() does the same over
 * any descriptor (a pipe, a socket), each message framed so that its
 * type, band and parts survive.  Each driver has one service thread per
 * direction.  Flow control holds across the boundary both ways: the
 * write-side thread stops while the kernel Stream (or the descriptor) is
 * full, its queue fills to its high water mark and the Stream's writers
 * wait; the read-side thread stops while the Stream above cannot take a
 * message (a slow reader at the head), and the kernel Stream then fills to
 * its own water marks.  Waits are poll()s in bounded slices, never a spin.
 * Messages keep their type, band and order (per band: a higher band
 * overtakes a lower one in every queue, as everywhere in Streams).
 *
 * Full reference and an example: Documentation/kstream.rst.
 */
#ifndef ASX_KSTREAM_H
#define ASX_KSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/asx.h>
#include <asx/common.h>
#include <asx/msg.h>
#include <asx/stream.h>

#ifdef __cplusplus
extern "C" {
#endif

struct asx_kstream;

#define ASX_KSTREAM_DEV		"/dev/asx"
#define ASX_KSTREAM_NAME_MAX	32	/* module and driver names, with the NUL */

/* asx_kstream_open / asx_kstream_pipe_open @flags */
#define ASX_KSTREAM_NONBLOCK	0x1u	/* O_NONBLOCK on the descriptor */

/* ---------------------------------------------------------------- life cycle */

/*
 * Open a new kernel Stream (close-on-exec) with driver @driver ("loop",
 * "null", "mux", ...; NULL: the default, loop).  0 and *@out, or -ENOENT
 * (no /dev/asx, or no such driver), -EACCES, -ENOMEM, -EINVAL.
 */
ASX_API int asx_kstream_open(struct asx_kstream **out, const char *driver,
			     unsigned int flags);
/*
 * A handle for an open /dev/asx descriptor @fd; with @own the handle owns
 * it (asx_kstream_close closes it).  0 and *@out, -EBADF, -ENOMEM.
 */
ASX_API int asx_kstream_attach(struct asx_kstream **out, int fd, bool own);
/* Free the handle and return its descriptor, left open (-EINVAL for NULL). */
ASX_API int asx_kstream_detach(struct asx_kstream *ks);
/* Free the handle, closing the descriptor if the handle owns it. */
ASX_API void asx_kstream_close(struct asx_kstream *ks);
/* The descriptor (for poll, read, write), or -EINVAL. */
ASX_API int asx_kstream_fd(const struct asx_kstream *ks);

/* ASX_IOC_VERSION into @v (the kernel's struct; its size is set here). */
ASX_API int asx_kstream_version(struct asx_kstream *ks, struct asx_version *v);

/* ---------------------------------------------------------------- configuration */

/* Push the kernel module @name on top.  -ENOENT, -ENOSR (ASX_MAX_DEPTH), ... */
ASX_API int asx_kstream_push(struct asx_kstream *ks, const char *name);
/* Pop the top module (@name NULL or ""), or the module @name wherever it is. */
ASX_API int asx_kstream_pop(struct asx_kstream *ks, const char *name);
/* Set the driver of a fresh Stream (ASX_IOC_SETDRV).  -ENOENT, -EBUSY. */
ASX_API int asx_kstream_set_driver(struct asx_kstream *ks, const char *name);
/*
 * The modules, top first, into @names (@n entries; may be NULL with 0) and
 * the driver's name into @driver (may be NULL).  Returns the number of
 * modules (may exceed @n: only @n are stored).
 */
ASX_API int asx_kstream_list(struct asx_kstream *ks, char (*names)[ASX_KSTREAM_NAME_MAX],
			     unsigned int n, char *driver);

/* ---------------------------------------------------------------- messages, raw */

/*
 * One part of a message for the raw calls: @buf, @maxlen bytes available
 * (getmsg), @len bytes used (putmsg in, getmsg out; -1: no such part).
 */
struct asx_kstream_part {
	void *buf;
	uint32_t maxlen;
	int32_t len;
};

/*
 * PUTMSG: @ctl and @data (either NULL: no such part), @flags 0 or
 * ASX_MSG_HIPRI (the kernel ABI's flag), @band 0..255.  0, -EAGAIN
 * (non-blocking, flow-controlled), -ERANGE, -EPIPE, -ENOBUFS, ...
 */
ASX_API int asx_kstream_putmsg(struct asx_kstream *ks, const struct asx_kstream_part *ctl,
			       const struct asx_kstream_part *data, unsigned int flags,
			       unsigned int band);
/*
 * GETMSG: into @ctl and @data (either NULL: that part is not wanted and
 * kept queued).  *@flags in: ASX_MSG_ANY, ASX_MSG_HIPRI or ASX_MSG_BAND
 * (with *@band the lowest band); out: ASX_MSG_HIPRI or ASX_MSG_BAND, and
 * *@band the message's band.  Returns ASX_MORECTL | ASX_MOREDATA (>= 0)
 * or a negative errno (-EAGAIN when non-blocking and nothing is there).
 */
ASX_API int asx_kstream_getmsg(struct asx_kstream *ks, struct asx_kstream_part *ctl,
			       struct asx_kstream_part *data, unsigned int *flags,
			       unsigned int *band);
/* PEEK: as getmsg without taking the message; 1 if one was there, else 0. */
ASX_API int asx_kstream_peek(struct asx_kstream *ks, struct asx_kstream_part *ctl,
			     struct asx_kstream_part *data, unsigned int *flags,
			     unsigned int *band);

/* ---------------------------------------------------------------- messages */

/*
 * Send the library message @m down the kernel Stream: DATA as a data
 * part, PROTO and PCPROTO with their first block as the control part and
 * the rest of the chain as the data part (PCPROTO high priority), band
 * kept; FLUSH as the flush ioctl with its flags mapped.  0 when @m was
 * sent and freed; else a negative errno and @m is still the caller's:
 * -EOPNOTSUPP (a type the kernel Stream cannot carry), -ERANGE (a part
 * too long), -EAGAIN (non-blocking and flow-controlled), ...
 */
ASX_API int asx_kstream_put(struct asx_kstream *ks, struct asx_msg *m);
/*
 * Take the next message of the kernel Stream as a library message
 * (types mapped back: DATA, PROTO, PCPROTO; band kept).  0 and *@mp,
 * -EAGAIN (non-blocking and nothing there), -ENOMEM, ...
 */
ASX_API int asx_kstream_get(struct asx_kstream *ks, struct asx_msg **mp);

/* ---------------------------------------------------------------- control */

/* FLUSH with the library's ASX_STREAM_FLUSH* bits (mapped), @band with FLUSHBAND. */
ASX_API int asx_kstream_flush(struct asx_kstream *ks, unsigned int flags, unsigned int band);
/* SRDOPT / GRDOPT (ASX_RNORM ... | ASX_RPROT*): set returns 0, get the options. */
ASX_API int asx_kstream_set_rdopt(struct asx_kstream *ks, unsigned int opt);
ASX_API int asx_kstream_get_rdopt(struct asx_kstream *ks);
/* SWROPT / GWROPT (ASX_SNDZERO). */
ASX_API int asx_kstream_set_wropt(struct asx_kstream *ks, unsigned int opt);
ASX_API int asx_kstream_get_wropt(struct asx_kstream *ks);
/* NREAD: messages, bytes (control and data) of the first, of all at the head (any may be NULL). */
ASX_API int asx_kstream_nread(struct asx_kstream *ks, uint32_t *msgs, uint64_t *first,
			      uint64_t *bytes);
/* SETWM / GETWM of the queue at @level (0 head, 1.. modules, ASX_LEVEL_DRIVER), @side. */
ASX_API int asx_kstream_set_water(struct asx_kstream *ks, unsigned int level,
				  unsigned int side, uint64_t hiwat, uint64_t lowat);
ASX_API int asx_kstream_get_water(struct asx_kstream *ks, unsigned int level,
				  unsigned int side, uint64_t *hiwat, uint64_t *lowat);
/*
 * The same for one band's flow control, band 1..255 (0: the queue's own, as
 * above); a band without its own marks has the queue's. Needs
 * ASX_FEAT_QBAND (an older asx.ko refuses a band with -EINVAL).
 */
ASX_API int asx_kstream_set_band_water(struct asx_kstream *ks, unsigned int level,
				       unsigned int side, unsigned int band, uint64_t hiwat,
				       uint64_t lowat);
ASX_API int asx_kstream_get_band_water(struct asx_kstream *ks, unsigned int level,
				       unsigned int side, unsigned int band, uint64_t *hiwat,
				       uint64_t *lowat);
/* QSTATS of the queue at @level, @side into @qs (the kernel's struct). */
ASX_API int asx_kstream_qstats(struct asx_kstream *ks, unsigned int level, unsigned int side,
			       struct asx_qstats *qs);
/*
 * STR: the module command @cmd carried down with @len bytes of @data; the
 * reply (up to @maxlen bytes) replaces them.  @timeout_ms 0: the default
 * (15 s), -1: none.  Returns the reply's length, or the module's negative
 * errno (-EINVAL when no module took it), -ETIME, -ERANGE, ...
 */
ASX_API int asx_kstream_str(struct asx_kstream *ks, unsigned int cmd, void *data,
			    uint32_t len, uint32_t maxlen, int timeout_ms);
/*
 * STR with the kernel's struct (uapi/linux/asx.h), for what asx_kstream_str()
 * does not return: @si's cmd, timeout_ms, len, maxlen and data as there,
 * rval and reserved 0 (the size is filled in).  On 0, @si->len is the
 * reply's length and @si->rval the value the module acknowledged with (what
 * XSI I_STR returns); else the module's negative errno, -ETIME, -ERANGE, ...
 */
ASX_API int asx_kstream_strioctl(struct asx_kstream *ks, struct asx_strioctl *si);
/*
 * AUTOPUSH through @ks (any Stream): @ap's cmd (ASX_AP_SET, ASX_AP_GET,
 * ASX_AP_CLEAR), driver, count and modules as in <linux/asx.h>; the size is
 * filled in.  -EPERM: SET and CLEAR need CAP_SYS_ADMIN; -ENOENT: no such
 * driver or module, or (GET, CLEAR) no list.
 */
ASX_API int asx_kstream_autopush(struct asx_kstream *ks, struct asx_autopush *ap);

/* ---------------------------------------------------------------- mux, pipes */

/* LINK @lower under the mux Stream @ks; its mux id in *@id. */
ASX_API int asx_kstream_link(struct asx_kstream *ks, struct asx_kstream *lower, uint32_t *id);
/* UNLINK the lower Stream @id (ASX_MUX_ALL: every one). */
ASX_API int asx_kstream_unlink(struct asx_kstream *ks, uint32_t id);
/*
 * Make @ks, which must still have the loop driver (modules may be pushed),
 * a pipe end; *@other is a new handle owning the other end (@flags:
 * ASX_KSTREAM_NONBLOCK for it).  -EBUSY: already a pipe end, a mux, linked.
 */
ASX_API int asx_kstream_pipe(struct asx_kstream *ks, struct asx_kstream **other,
			     unsigned int flags);
/* A new pipe pair: two kernel Streams cross-linked. */
ASX_API int asx_kstream_pipe_open(struct asx_kstream **a, struct asx_kstream **b,
				  unsigned int flags);

/* ---------------------------------------------------------------- the one mapping */

/*
 * Library message type -> the kernel's (ASX_M_* of asx.ko: DATA 0x00,
 * PROTO 0x01, IOCTL 0x02, CTL 0x03, PCPROTO 0x80, FLUSH 0x81, IOCACK 0x82,
 * IOCNAK 0x83, ERROR 0x84, HANGUP 0x85), or -EINVAL for a type the kernel
 * has not (USER, PCUSER).
 */
ASX_API int asx_kstream_type_to_kernel(unsigned int lib_type);
/* The kernel's message type -> the library's, or -EINVAL. */
ASX_API int asx_kstream_type_from_kernel(unsigned int kernel_type);
/* ASX_STREAM_FLUSH* -> ASX_FLUSH* and back (unknown bits: -EINVAL). */
ASX_API int asx_kstream_flush_to_kernel(unsigned int lib_flags);
ASX_API int asx_kstream_flush_from_kernel(unsigned int kernel_flags);

/* ---------------------------------------------------------------- spanning drivers */

/* asx_kstream_driver / asx_fd_driver @flags */
#define ASX_DRIVER_OWN		0x1u	/* the driver closes the kernel Stream / fds */

/*
 * A driver Module named @name (NULL: "kstream") whose lower end is the
 * kernel Stream @ks: give it to asx_stream_open() as ASX_STREAM_DRIVER.
 * The descriptor is made non-blocking.  A message with a part longer than
 * the kernel takes (ASX_MAX_CTL, ASX_MAX_DATA) is refused when it is put
 * (-EMSGSIZE from asx_stream_put() or put_next, the message still the
 * caller's); one the kernel Stream cannot carry (IOCTL, CTL, USER types)
 * or refuses is dropped and counted.  When the kernel Stream hangs up or
 * fails, one ASX_MSG_HANGUP goes up.  0 and *@out, -EINVAL, -ENOMEM.  The
 * Module is the caller's until the Stream takes it.
 */
ASX_API int asx_kstream_driver(struct asx_module **out, const char *name,
			       struct asx_kstream *ks, unsigned int flags);
/*
 * The same over descriptors: messages are read from @rfd and written to
 * @wfd (the same one for a socket), each framed with its type, band and
 * control length (8 bytes, network order: be32 length of the rest, type,
 * band, be16 control length), so any message type passes.  A message
 * longer than ASX_FD_FRAME_MAX bytes, or whose control part (the first
 * block of a PROTO or PCPROTO) is longer than ASX_FD_CTL_MAX, is refused
 * when it is put (-EMSGSIZE, the message still the caller's).  Both
 * descriptors are made non-blocking.  The far end going away never raises
 * SIGPIPE: end of file on @rfd, or @wfd refusing a write with EPIPE or
 * ECONNRESET, brings one ASX_MSG_HANGUP up; messages written after that
 * are dropped and counted.
 */
#define ASX_FD_FRAME_MAX	(16u << 20)	/* bytes of one message, control and data */
#define ASX_FD_CTL_MAX		65535u		/* bytes of its control part */
ASX_API int asx_fd_driver(struct asx_module **out, const char *name, int rfd, int wfd,
			  unsigned int flags);

/* Counters of a spanning driver (any pointer may be NULL). */
struct asx_driver_stats {
	uint64_t down_msgs;	/* messages sent down into the kernel / descriptor */
	uint64_t up_msgs;	/* messages brought up from it (both counted as the
				 * hand-over starts: exact once they arrived) */
	uint64_t down_waits;	/* times the write side waited: lower end full */
	uint64_t up_waits;	/* times the read side waited: the Stream above full */
	uint64_t drops;		/* messages that could not be carried */
};
/* Copy the counters of @drv (made by one of the two calls above) into @st. */
ASX_API int asx_driver_stats(struct asx_module *drv, struct asx_driver_stats *st);

#ifdef __cplusplus
}
#endif
#endif /* ASX_KSTREAM_H */
