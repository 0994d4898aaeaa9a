/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * asx/stropts.h - the XSI STREAMS interface (<stropts.h> of SUSv3/XSI) for
 * kernel Streams on /dev/asx.
 *
 * glibc dropped its <stropts.h> (stubs failing with ENOSYS) in 2.30.  A
 * STREAMS program built against asx.ko changes one line, the include, and
 * opens /dev/asx (a new Stream with the loop driver; I_PUSH modules, or
 * make it a mux or a pipe end with <asx/kstream.h>); the rest of it works
 * unchanged:
 *
 *   - ioctl(fd, I_PUSH, "name") and the other requests of streamio(7):
 *     asx.ko takes them with these numbers, arguments and return values
 *     (the kernel does the work; no library call is involved);
 *   - getmsg(), getpmsg(), putmsg(), putpmsg() and isastream(): inline
 *     functions below over asx.ko's GETMSG and PUTMSG, which translate the
 *     flags and the end-of-file lengths and set errno as XSI says;
 *   - fattach() and fdetach() fail with ENOSYS: a Stream has no inode of its
 *     own to mount on a path.
 *
 * What differs from SVR4 and XSI is listed in Documentation/xsi.rst (among
 * it: I_PLINK and I_PUNLINK need a named mux, "mux.N"; ASX_IOC_VERSION's
 * ASX_FEAT_PLINK and ASX_FEAT_XSI_FD say whether the module has them and
 * the descriptor passing).  No function of libasx is needed: the header
 * is self-contained, and a program may use it without linking libasx.
 */
#ifndef ASX_STROPTS_H
#define ASX_STROPTS_H

#if defined(_STROPTS_H) || defined(_SYS_STROPTS_H)
#error "<asx/stropts.h> replaces the C library's <stropts.h>: include only one"
#endif

#include <errno.h>
#include <sys/ioctl.h>
#include <linux/asx.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int t_scalar_t;
typedef unsigned int t_uscalar_t;

#define I_NREAD		ASX_I_NREAD
#define I_PUSH		ASX_I_PUSH
#define I_POP		ASX_I_POP
#define I_LOOK		ASX_I_LOOK
#define I_FLUSH		ASX_I_FLUSH
#define I_FLUSHBAND	ASX_I_FLUSHBAND
#define I_SETSIG	ASX_I_SETSIG
#define I_GETSIG	ASX_I_GETSIG
#define I_FIND		ASX_I_FIND
#define I_PEEK		ASX_I_PEEK
#define I_SRDOPT	ASX_I_SRDOPT
#define I_GRDOPT	ASX_I_GRDOPT
#define I_FDINSERT	ASX_I_FDINSERT
#define I_STR		ASX_I_STR
#define I_SWROPT	ASX_I_SWROPT
#define I_GWROPT	ASX_I_GWROPT
#define I_SENDFD	ASX_I_SENDFD
#define I_RECVFD	ASX_I_RECVFD
#define I_LIST		ASX_I_LIST
#define I_ATMARK	ASX_I_ATMARK
#define I_CKBAND	ASX_I_CKBAND
#define I_GETBAND	ASX_I_GETBAND
#define I_CANPUT	ASX_I_CANPUT
#define I_SETCLTIME	ASX_I_SETCLTIME
#define I_GETCLTIME	ASX_I_GETCLTIME
#define I_LINK		ASX_I_LINK
#define I_UNLINK	ASX_I_UNLINK
#define I_PLINK		ASX_I_PLINK
#define I_PUNLINK	ASX_I_PUNLINK

#define FMNAMESZ	ASX_XSI_FMNAMESZ
#define FLUSHR		ASX_XSI_FLUSHR
#define FLUSHW		ASX_XSI_FLUSHW
#define FLUSHRW		ASX_XSI_FLUSHRW
#define SNDZERO		ASX_XSI_SNDZERO
#define SNDPIPE		ASX_XSI_SNDPIPE
#define RNORM		ASX_XSI_RNORM
#define RMSGD		ASX_XSI_RMSGD
#define RMSGN		ASX_XSI_RMSGN
#define RPROTNORM	ASX_XSI_RPROTNORM
#define RPROTDAT	ASX_XSI_RPROTDAT
#define RPROTDIS	ASX_XSI_RPROTDIS
#define RS_HIPRI	ASX_XSI_RS_HIPRI
#define MSG_HIPRI	ASX_XSI_MSG_HIPRI
#define MSG_ANY		ASX_XSI_MSG_ANY
#define MSG_BAND	ASX_XSI_MSG_BAND
#define MORECTL		ASX_XSI_MORECTL
#define MOREDATA	ASX_XSI_MOREDATA
#define MUXID_ALL	ASX_XSI_MUXID_ALL
#define ANYMARK		ASX_XSI_ANYMARK
#define LASTMARK	ASX_XSI_LASTMARK
#define ANYBAND		ASX_XSI_ANYBAND
#define INFTIM		ASX_XSI_INFTIM

/* I_SETSIG events: SIGPOLL to the registered process (SIGURG: S_BANDURG) */
#define S_INPUT		ASX_XSI_S_INPUT
#define S_HIPRI		ASX_XSI_S_HIPRI
#define S_OUTPUT	ASX_XSI_S_OUTPUT
#define S_MSG		ASX_XSI_S_MSG
#define S_ERROR		ASX_XSI_S_ERROR
#define S_HANGUP	ASX_XSI_S_HANGUP
#define S_RDNORM	ASX_XSI_S_RDNORM
#define S_WRNORM	ASX_XSI_S_WRNORM
#define S_RDBAND	ASX_XSI_S_RDBAND
#define S_WRBAND	ASX_XSI_S_WRBAND
#define S_BANDURG	ASX_XSI_S_BANDURG

struct strbuf {
	int maxlen;	/* getmsg: bytes at buf; -1: leave this part queued */
	int len;	/* putmsg in, getmsg out; -1: no such part */
	char *buf;
};

struct strpeek {
	struct strbuf ctlbuf;
	struct strbuf databuf;
	t_uscalar_t flags;
};

struct strfdinsert {
	struct strbuf ctlbuf;
	struct strbuf databuf;
	t_uscalar_t flags;
	int fildes;
	t_scalar_t offset;
};

struct strioctl {
	int ic_cmd;
	int ic_timout;	/* seconds; 0: 15 s; INFTIM: none */
	int ic_len;
	char *ic_dp;
};

struct strrecvfd {
	int fd;
	unsigned int uid;
	unsigned int gid;
	char __fill[8];
};

struct str_mlist {
	char l_name[FMNAMESZ + 1];
};

struct str_list {
	int sl_nmods;
	struct str_mlist *sl_modlist;
};

struct bandinfo {
	unsigned char bi_pri;
	int bi_flag;
};

#if defined(__x86_64__) || defined(__aarch64__) || defined(__powerpc64__) || \
	(defined(__riscv) && __riscv_xlen == 64) || defined(__s390x__)
/* the kernel reads these with the layouts of <linux/asx.h> */
#ifdef __cplusplus
#define ASX__XSI_SAME(a, b) static_assert(sizeof(struct a) == sizeof(struct b), #a)
#else
#define ASX__XSI_SAME(a, b) _Static_assert(sizeof(struct a) == sizeof(struct b), #a)
#endif
ASX__XSI_SAME(strbuf, asx_xsi_strbuf);
ASX__XSI_SAME(strpeek, asx_xsi_strpeek);
ASX__XSI_SAME(strioctl, asx_xsi_strioctl);
ASX__XSI_SAME(str_list, asx_xsi_str_list);
ASX__XSI_SAME(bandinfo, asx_xsi_bandinfo);
ASX__XSI_SAME(strrecvfd, asx_xsi_strrecvfd);
ASX__XSI_SAME(strfdinsert, asx_xsi_strfdinsert);
#undef ASX__XSI_SAME
#endif

/* ------------------------------------------------------------ the functions */

/* One part for GETMSG: -1 or NULL leaves it queued (maxlen 0 takes nothing). */
static inline void asx__xsi_in(struct asx_strbuf *k, const struct strbuf *p)
{
	k->maxlen = (p && p->maxlen > 0) ? (__u32)p->maxlen : 0;
	k->len = -1;
	k->buf = p ? (__u64)(unsigned long)p->buf : 0;
}

/* GETMSG or PUTMSG: ENOSTR (getmsg(2), putmsg(2)) where the file is no Stream. */
static inline int asx__xsi_msg_ioctl(int fd, unsigned long req, struct asx_strmsg *sm)
{
	int r = ioctl(fd, req, sm);

	if (r < 0 && errno == ENOTTY)
		errno = ENOSTR;
	return r;
}

static inline int asx__xsi_getmsg(int fd, struct strbuf *ctlptr, struct strbuf *dataptr,
				  unsigned int flags, unsigned int band, int *oflags,
				  int *oband)
{
	struct asx_strmsg sm;
	int eof;

	__builtin_memset(&sm, 0, sizeof(sm));
	sm.size = sizeof(sm);
	sm.flags = flags;
	sm.band = band;
	asx__xsi_in(&sm.ctl, ctlptr);
	asx__xsi_in(&sm.data, dataptr);
	if (asx__xsi_msg_ioctl(fd, ASX_IOC_GETMSG, &sm) < 0)
		return -1;
	/* a hung-up Stream with nothing queued: XSI says both lengths are 0 */
	eof = sm.ctl.len < 0 && sm.data.len < 0;
	if (ctlptr && ctlptr->maxlen != -1)
		ctlptr->len = eof ? 0 : sm.ctl.len;
	if (dataptr && dataptr->maxlen != -1)
		dataptr->len = eof ? 0 : sm.data.len;
	*oflags = eof ? 0 : sm.flags == ASX_MSG_HIPRI ? MSG_HIPRI : MSG_BAND;
	*oband = eof ? 0 : (int)sm.band;
	return (int)sm.more;
}

/*
 * getpmsg(): *flagsp MSG_HIPRI (a high-priority message only), MSG_ANY or
 * MSG_BAND (the first message of band *bandp or above); on return the kind
 * and band of the message taken.  MORECTL | MOREDATA or 0, or -1 and errno.
 */
static inline int getpmsg(int fd, struct strbuf *ctlptr, struct strbuf *dataptr, int *bandp,
			  int *flagsp)
{
	unsigned int f;
	int r, of, ob;

	if (!bandp || !flagsp) {
		errno = EINVAL;
		return -1;
	}
	switch (*flagsp) {
	case MSG_HIPRI:
		f = ASX_MSG_HIPRI;
		break;
	case MSG_ANY:
		f = ASX_MSG_ANY;
		break;
	case MSG_BAND:
		f = ASX_MSG_BAND;
		break;
	default:
		errno = EINVAL;
		return -1;
	}
	if (*bandp < 0 || *bandp > 255 || (f != ASX_MSG_BAND && *bandp)) {
		errno = EINVAL;
		return -1;
	}
	r = asx__xsi_getmsg(fd, ctlptr, dataptr, f, (unsigned int)*bandp, &of, &ob);
	if (r >= 0) {
		*flagsp = of;
		*bandp = ob;
	}
	return r;
}

/* getmsg(): *flagsp 0 (the first message) or RS_HIPRI; out RS_HIPRI or 0. */
static inline int getmsg(int fd, struct strbuf *ctlptr, struct strbuf *dataptr, int *flagsp)
{
	int r, of, ob;

	if (!flagsp || (*flagsp != 0 && *flagsp != RS_HIPRI)) {
		errno = EINVAL;
		return -1;
	}
	r = asx__xsi_getmsg(fd, ctlptr, dataptr, *flagsp ? ASX_MSG_HIPRI : ASX_MSG_ANY, 0,
			    &of, &ob);
	if (r >= 0)
		*flagsp = of == MSG_HIPRI ? RS_HIPRI : 0;
	return r;
}

static inline int asx__xsi_putmsg(int fd, const struct strbuf *ctlptr,
				  const struct strbuf *dataptr, unsigned int flags,
				  unsigned int band)
{
	struct asx_strmsg sm;

	__builtin_memset(&sm, 0, sizeof(sm));
	sm.size = sizeof(sm);
	sm.flags = flags | ASX_MSG_XSI;
	sm.band = band;
	sm.ctl.len = ctlptr ? ctlptr->len : -1;
	sm.ctl.buf = ctlptr ? (__u64)(unsigned long)ctlptr->buf : 0;
	sm.data.len = dataptr ? dataptr->len : -1;
	sm.data.buf = dataptr ? (__u64)(unsigned long)dataptr->buf : 0;
	if (sm.ctl.len < -1)
		sm.ctl.len = -1;	/* XSI: any negative length is "no part" */
	if (sm.data.len < -1)
		sm.data.len = -1;
	return asx__xsi_msg_ioctl(fd, ASX_IOC_PUTMSG, &sm) < 0 ? -1 : 0;
}

/*
 * putpmsg(): @flags MSG_HIPRI (a control part, band 0) or MSG_BAND (@band);
 * a NULL part or a negative len sends no such part.  0, or -1 and errno
 * (ENXIO, without SIGPIPE, on a hung-up Stream or pipe end).
 */
static inline int putpmsg(int fd, const struct strbuf *ctlptr, const struct strbuf *dataptr,
			  int band, int flags)
{
	if ((flags != MSG_HIPRI && flags != MSG_BAND) || band < 0 || band > 255 ||
	    (flags == MSG_HIPRI && band)) {
		errno = EINVAL;
		return -1;
	}
	return asx__xsi_putmsg(fd, ctlptr, dataptr, flags == MSG_HIPRI ? ASX_MSG_HIPRI : 0,
			       (unsigned int)band);
}

/* putmsg(): @flags 0 or RS_HIPRI. */
static inline int putmsg(int fd, const struct strbuf *ctlptr, const struct strbuf *dataptr,
			 int flags)
{
	if (flags != 0 && flags != RS_HIPRI) {
		errno = EINVAL;
		return -1;
	}
	return asx__xsi_putmsg(fd, ctlptr, dataptr, flags ? ASX_MSG_HIPRI : 0, 0);
}

/* isastream(): 1 for a kernel Stream, 0 for another file, -1 and EBADF. */
static inline int isastream(int fd)
{
	struct asx_version v;
	int saved = errno;

	__builtin_memset(&v, 0, sizeof(v));
	v.size = sizeof(v);
	if (ioctl(fd, ASX_IOC_VERSION, &v) == 0)
		return 1;
	if (errno == EBADF)
		return -1;
	errno = saved;
	return 0;
}

/* fattach(), fdetach(): ENOSYS (Documentation/xsi.rst says why). */
static inline int fattach(int fd, const char *path)
{
	(void)fd;
	(void)path;
	errno = ENOSYS;
	return -1;
}

static inline int fdetach(const char *path)
{
	(void)path;
	errno = ENOSYS;
	return -1;
}

#ifdef __cplusplus
}
#endif

#endif /* ASX_STROPTS_H */
