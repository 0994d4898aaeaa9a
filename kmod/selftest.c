// SPDX-License-Identifier: GPL-2.0
/*
 * ASX boot-time self-tests, run by asx_init() in a debug build (ASX_DEBUG=y,
 * the default on kernels built with CONFIG_DEBUG_KERNEL; see kmod/Kbuild).
 *
 * Copyright (C) 2026 ASX developers
 */

#include "main.h"
#include "queue.h"

#include <linux/slab.h>

/*
 * Checks at load time, WireGuard-style, that dup shares data instead of
 * copying it and that a queue orders messages by priority and band.
 */
static bool __init dup_selftest(void)
{
	struct asx_msg *a, *b, *dup;
	bool ok;

	a = asx_allocb(3000, GFP_KERNEL);
	b = asx_allocb(10, GFP_KERNEL);
	if (!a || !b)
		goto err_free;
	memset(a->wptr, 'a', 3000);
	a->wptr += 3000;
	memcpy(b->wptr, "0123456789", 10);
	b->wptr += 10;
	a->cont = b;
	dup = asx_dupmsg(a, GFP_KERNEL);
	if (!dup)
		goto err_free;
	ok = dup->db == a->db && dup->cont->db == b->db && dup->rptr == a->rptr &&
	     refcount_read(&a->db->ref) == 2 && asx_msgdsize(dup) == 3010;
	asx_freemsg(a);
	ok = ok && refcount_read(&dup->db->ref) == 1 && dup->rptr[2999] == 'a' &&
	     !memcmp(dup->cont->rptr, "0123456789", 10);
	asx_freemsg(dup);
	return ok;

err_free:
	if (a)
		a->cont = NULL;
	asx_freemsg(a);
	asx_freemsg(b);
	return false;
}

static bool __init order_selftest(void)
{
	static const u8 band[] = { 0, 3, ASX_M_HIPRI, 1, 3, 0, ASX_M_HIPRI };
	static const u8 want[] = { 2, 6, 1, 4, 3, 0, 5 };
	static const struct asx_qinit qi = { .put = asx_putq };
	struct asx_queue *q;
	struct asx_msg *mp;
	bool ok = true;
	u8 i;

	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q)
		return false;
	asx_queue_init(q, NULL, &qi, "selftest", ASX_SIDE_READ, 0, 0);
	for (i = 0; i < ARRAY_SIZE(band); i++) {
		mp = asx_ctlmsg(band[i] == ASX_M_HIPRI ? ASX_M_PCPROTO : ASX_M_DATA, &i, 1,
				GFP_KERNEL);
		if (!mp) {
			ok = false;
			break;
		}
		mp->band = band[i] == ASX_M_HIPRI ? 0 : band[i];
		asx_putq(q, mp);
	}
	for (i = 0; (mp = asx_getq(q)); i++) {
		ok = ok && i < ARRAY_SIZE(want) && mp->rptr[0] == want[i];
		asx_freemsg(mp);
	}
	kfree(q);
	return ok && i == ARRAY_SIZE(want);
}

int __init asx_selftest(void)
{
	if (!dup_selftest() || !order_selftest()) {
		pr_err("message self-test failed\n");
		return -ENOTRECOVERABLE;
	}
	return 0;
}
