// SPDX-License-Identifier: GPL-2.0
/*
 * ASX module "csum": RFC 1071 Internet checksums. Going down, each M_DATA
 * message gets the 16-bit one's complement of the one's complement sum of
 * its bytes (as big-endian 16-bit words, an odd last byte padded with zero)
 * appended, big-endian. Coming up, the last two bytes are checked against
 * the rest and removed; a message that fails is dropped and counted.
 * ASX_STR_CSUM_GET answers with a struct asx_csum_stats.
 *
 * Copyright (C) 2026 ASX developers
 */

#include "asx_api.h"
#include "compat.h"


struct csum_priv {
	atomic64_t computed;
	atomic64_t good;
	atomic64_t bad;
};

/* The RFC 1071 checksum of the first @len bytes of @mp. */
static u16 rfc1071(const struct asx_msg *mp, size_t len)
{
	size_t off = 0, i, n;
	u64 sum = 0;

	for (; mp && off < len; mp = mp->cont) {
		n = min_t(size_t, asx_blen(mp), len - off);
		for (i = 0; i < n; i++, off++)
			sum += (off & 1) ? mp->rptr[i] : (u32)mp->rptr[i] << 8;
	}
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum & 0xffff;
}

/* Cuts the chain down to its first @len bytes. */
static void trim_to(struct asx_msg *mp, size_t len)
{
	for (; mp; mp = mp->cont) {
		if (asx_blen(mp) > len)
			mp->wptr = mp->rptr + len;
		len -= asx_blen(mp);
	}
}

static void csum_wput(struct asx_queue *q, struct asx_msg *mp)
{
	const struct asx_iocblk *ioc = (const struct asx_iocblk *)mp->rptr;
	struct csum_priv *c = q->priv;
	struct asx_csum_stats cs;
	struct asx_msg *t, *last;

	switch (mp->type) {
	case ASX_M_FLUSH:
		asx_flush_msg(q, mp);
		return;
	case ASX_M_IOCTL:
		if (asx_blen(mp) < sizeof(*ioc) || ioc->cmd != ASX_STR_CSUM_GET ||
		    asx_ioc_transparent(mp))
			break;
		cs.computed = atomic64_read(&c->computed);
		cs.good = atomic64_read(&c->good);
		cs.bad = atomic64_read(&c->bad);
		t = asx_ctlmsg(ASX_M_DATA, &cs, sizeof(cs), GFP_ATOMIC | __GFP_ACCOUNT);
		if (t)
			asx_iocack(q, mp, 0, t);
		else
			asx_iocnak(q, mp, ENOMEM);
		return;
	case ASX_M_DATA:
		t = asx_allocb(2, GFP_ATOMIC | __GFP_ACCOUNT);
		if (!t) {
			atomic64_inc(&q->drops);
			asx_freemsg(mp);
			return;
		}
		put_unaligned_be16(rfc1071(mp, asx_msgdsize(mp)), t->wptr);
		t->wptr += 2;
		for (last = mp; last->cont; last = last->cont)
			;
		last->cont = t;
		atomic64_inc(&c->computed);
		break;
	}
	asx_putnext(q, mp);
}

static void csum_rput(struct asx_queue *q, struct asx_msg *mp)
{
	struct csum_priv *c = q->priv;
	size_t len;
	u8 sum[2];

	if (mp->type == ASX_M_FLUSH) {
		asx_flush_msg(q, mp);
		return;
	}
	if (mp->type != ASX_M_DATA) {
		asx_putnext(q, mp);
		return;
	}
	len = asx_msgdsize(mp);
	if (len < 2)
		goto bad;
	asx_msg_copy_out(mp, len - 2, sum, 2);
	if (get_unaligned_be16(sum) != rfc1071(mp, len - 2))
		goto bad;
	trim_to(mp, len - 2);
	atomic64_inc(&c->good);
	asx_putnext(q, mp);
	return;
bad:
	atomic64_inc(&c->bad);
	atomic64_inc(&q->drops);
	asx_freemsg(mp);
}

struct asx_modinfo asx_mod_csum = {
	.name		= "csum",
	.owner		= THIS_MODULE,
	.rinit		= { .put = csum_rput },
	.winit		= { .put = csum_wput },
	.priv_size	= sizeof(struct csum_priv),
};
