// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * proto/cksum.c - the transport checksum as a protocol task of its own
 * (Functional Parallelism, exp/arch): coming up, the TCP-lite segment's or
 * the UDP-lite datagram's checksum is verified (and a UDP datagram cut to
 * its length field) before the transport Module, configured with
 * rx_cksum_done, does the rest.  Bad segments are counted and freed, as
 * the transport Module would.  Going down, messages pass through.
 */
#include <errno.h>
#include <stdlib.h>

#include <asx/modules.h>

#include "proto/proto.h"

struct tpck {
	struct exp_proto_common c;
	uint8_t proto;
};

static int tpck_rd_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	struct tpck *k = (struct tpck *)exp_proto_of(t);
	size_t len, hlen = k->proto == EXP_PROTO_IP_TCP ? EXP_PROTO_TCP_HLEN : EXP_PROTO_UDP_HLEN;
	const unsigned char *p;

	if (m->type != ASX_MSG_DATA)
		return asx_task_put_next(t, m, dl);
	len = asx_msg_length(m);
	if (len < hlen)
		return EXP_PROTO_DROP(&k->c, short_drop, m);
	p = exp_proto_pull(m, hlen);
	if (!p)
		return EXP_PROTO_DROP(&k->c, nomem, m);
	if (k->proto == EXP_PROTO_IP_UDP) {
		size_t ulen = (size_t)(p[4] << 8 | p[5]);

		if (ulen < EXP_PROTO_UDP_HLEN || ulen > len)
			return EXP_PROTO_DROP(&k->c, bad_len, m);
		if (ulen < len)
			exp_proto_trim(m, ulen);
		if (!(p[6] | p[7]))	/* sent without a checksum */
			goto up;
	}
	if (asx_msg_cksum(m) != 0)
		return EXP_PROTO_DROP(&k->c, bad_cksum, m);
up:
	EXP_PROTO_COUNT(&k->c, up, 1);
	return asx_task_put_next(t, m, dl);
}

static int tpck_wr_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	return asx_task_put_next(t, m, dl);
}

static const struct asx_task_ops tpck_wr = { .put = tpck_wr_put };
static const struct asx_task_ops tpck_rd = { .put = tpck_rd_put };

int exp_proto_cksum_create(struct asx_module **out, const char *name, uint8_t proto)
{
	struct tpck *k;
	int r;

	if (proto != EXP_PROTO_IP_TCP && proto != EXP_PROTO_IP_UDP)
		return -EINVAL;
	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->c.magic = EXP_PROTO_MAGIC;
	k->c.kind = EXP_PROTO_CKSUM;
	k->proto = proto;
	r = exp_proto_module_new(out, NULL, name, &tpck_wr, &tpck_rd, k, free);
	if (r)
		free(k);
	return r;
}
