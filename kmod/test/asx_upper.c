// SPDX-License-Identifier: GPL-2.0
/*
 * asx_upper: registers the ASX driver "upper", an echo that upper-cases the
 * letters of every M_DATA message written to it and sends it back up. An
 * example of the exported driver registration API, and the driver the
 * selftests (drvreg_test) load to test it.
 *
 * Per Stream it counts the bytes it echoed; the STR ioctl UPPER_GETCOUNT
 * returns the count. Two parameters are for the tests: "registered"
 * (writing 0 unregisters the driver, which fails with EBUSY while a Stream
 * has it; 1 registers it again) and "refuse_open" (the driver's open fails
 * with ENXIO). Loaded with name=NAME it registers under that name; with
 * twice=1 it registers a second driver of the same name and fails to load.
 *
 * Copyright (C) 2026 ASX developers
 */

#include "asx_api.h"

#include <linux/init.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/sysfs.h>

#define UPPER_GETCOUNT	(('U' << 8) | 1)

struct upper_priv {
	atomic64_t echoed;
};

static bool refuse_open;
module_param(refuse_open, bool, 0644);
MODULE_PARM_DESC(refuse_open, "the driver's open fails with ENXIO");

static char *name = "upper";
module_param(name, charp, 0444);
MODULE_PARM_DESC(name, "the name to register the driver under");

static bool twice;
module_param(twice, bool, 0444);
MODULE_PARM_DESC(twice, "register a second driver of the same name (and fail to load)");

static u8 upper(u8 c)
{
	return c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c;
}

/* Upper-cases a private copy of @mp (its data may be shared with a dup). */
static struct asx_msg *upper_msg(struct asx_queue *q, struct asx_msg *mp)
{
	struct upper_priv *p = q->priv;
	struct asx_msg *copy, *b;
	unsigned char *c;

	copy = asx_copymsg(mp, GFP_ATOMIC);
	asx_freemsg(mp);
	if (!copy)
		return NULL;
	for (b = copy; b; b = b->cont)
		for (c = b->rptr; c < b->wptr; c++)
			*c = upper(*c);
	atomic64_add(asx_msgdsize(copy), &p->echoed);
	return copy;
}

/* Sends @mp up: the write queue's next is the driver's read queue. */
static void upper_send(struct asx_queue *q, struct asx_msg *mp)
{
	if (mp->type == ASX_M_DATA)
		mp = upper_msg(q, mp);
	if (mp)
		asx_putnext(q, mp);
}

static void upper_ioctl(struct asx_queue *q, struct asx_msg *mp)
{
	struct asx_iocblk *ioc = (struct asx_iocblk *)mp->rptr;
	struct upper_priv *p = q->priv;

	if (ioc->cmd == UPPER_GETCOUNT)
		asx_iocack(q, mp, (int)min_t(s64, atomic64_read(&p->echoed), INT_MAX), NULL);
	else
		asx_iocnak(q, mp, EINVAL);
}

static void upper_wput(struct asx_queue *q, struct asx_msg *mp)
{
	switch (mp->type) {
	case ASX_M_FLUSH:
		asx_drv_flush(q, mp);
		return;
	case ASX_M_IOCTL:
		upper_ioctl(q, mp);
		return;
	}
	/* in order: behind what waits here, or when the Stream head is full */
	if (!asx_hipri(mp) && (!asx_queue_idle(q) || !asx_canputnext(q)))
		asx_putq(q, mp);
	else
		upper_send(q, mp);
}

/* Runs when the head has room again (back-enabled) or a message was queued. */
static void upper_wsrv(struct asx_queue *q)
{
	struct asx_msg *mp;

	while ((mp = asx_getq(q))) {
		if (!asx_hipri(mp) && !asx_canputnext(q)) {
			asx_putbq(q, mp);
			break;
		}
		upper_send(q, mp);
	}
}

static int upper_open(struct asx_queue *rq, struct asx_queue *wq)
{
	struct upper_priv *p = wq->priv;

	if (READ_ONCE(refuse_open))
		return -ENXIO;
	atomic64_set(&p->echoed, 0);
	return 0;
}

static struct asx_drvinfo upper_drv = {
	.owner		= THIS_MODULE,
	.winit		= { .put = upper_wput, .srv = upper_wsrv },
	.priv_size	= sizeof(struct upper_priv),
	.open		= upper_open,
};

/* "registered": reads whether the driver is registered; 0 or 1 changes it. */
static DEFINE_MUTEX(upper_lock);
static bool upper_registered;

static int registered_set(const char *val, const struct kernel_param *kp)
{
	bool on;
	int ret;

	ret = kstrtobool(val, &on);
	if (ret)
		return ret;
	mutex_lock(&upper_lock);
	if (on && !upper_registered)
		ret = asx_register_driver(&upper_drv);
	else if (!on && upper_registered)
		ret = asx_unregister_driver(&upper_drv);
	if (!ret)
		upper_registered = on;
	mutex_unlock(&upper_lock);
	return ret;
}

static int registered_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(upper_registered));
}

static const struct kernel_param_ops registered_ops = {
	.set	= registered_set,
	.get	= registered_get,
};
module_param_cb(registered, &registered_ops, NULL, 0644);
MODULE_PARM_DESC(registered, "whether the driver is registered (write 0 or 1)");

static struct asx_drvinfo upper_twin;

static int __init upper_init(void)
{
	int ret;

	upper_drv.name = name;
	ret = asx_register_driver(&upper_drv);
	if (ret)
		return ret;
	if (twice) {
		upper_twin = upper_drv;
		upper_twin.reg = NULL;
		ret = asx_register_driver(&upper_twin);
		if (ret) {
			asx_unregister_driver(&upper_drv);
			return ret;
		}
		/* not reached: a registered name is refused */
		asx_unregister_driver(&upper_twin);
	}
	upper_registered = true;
	return 0;
}

static void __exit upper_exit(void)
{
	/* No Stream has it (each pins this module): this cannot fail. */
	if (upper_registered)
		WARN_ON(asx_unregister_driver(&upper_drv));
}

module_init(upper_init);
module_exit(upper_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("ASX developers");
MODULE_DESCRIPTION("ASX example driver: an echo that upper-cases");
