/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * rr2.h - a two-level round-robin ASC policy, written against libasx's
 * installed headers only (<asx/asc_policy.h>).
 *
 * Threads are foreground (level 0) or background (level 1); each level is
 * a FIFO served round robin.  Foreground threads run first, but while
 * background threads wait, every RR2_RATIO foreground dispatches are
 * followed by one background dispatch, so the background never starves.
 */
#ifndef RR2_H
#define RR2_H

#include <asx/asc_policy.h>

#define RR2_NAME	"rr2"
#define RR2_SCHEMA	(ASX_QOS_USER + 0x32)
#define RR2_RATIO	3

struct rr2_qos {
	struct asx_qos qos;
	int level;		/* 0 foreground, 1 background */
};
#define RR2_QOS(lvl) ((struct rr2_qos){ { RR2_SCHEMA, sizeof(struct rr2_qos) }, (lvl) })

/* Register the policy as "rr2": 0 or -errno (asx_asc_policy_register()). */
int rr2_register(void);

/*
 * The same ops for svc.conf (Documentation/svc.rst, "ASC policies"): build
 * rr2.c as a shared object (make rr2.so) and load it with
 * "dynamic rr2 ASC_Policy * ./rr2.so:rr2_factory()".
 */
const struct asx_asc_policy_ops *rr2_factory(void);

#endif /* RR2_H */
