/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * group.h - what the rest of libasx (the ASC run-time, lib/src/asc/) may
 * ask of an activation group beyond asx/sa.h, without seeing its layout
 * (sa_impl.h, for sa.c and lib/tests only).
 */
#ifndef ASX_SA_GROUP_H
#define ASX_SA_GROUP_H

#include <stdint.h>

#include <asx/sa.h>

/* The ASX_FEAT_* of the module @grp was opened on. */
uint64_t asx__sa_features(const struct asx_sa_group *grp);
/* The group's member limit: VP ids are below it. */
unsigned int asx__sa_max_vps(const struct asx_sa_group *grp);

#endif /* ASX_SA_GROUP_H */
