// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * rcudepth.c - the calling thread's RCU read-side depth (core/rcudepth.h).
 */
#include "core/rcudepth.h"

__thread int asx__rcu_depth = -1;
