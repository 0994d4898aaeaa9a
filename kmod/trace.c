// SPDX-License-Identifier: GPL-2.0
/*
 * The asx:* tracepoints (trace.h) are made here: their records name the
 * Stream of a queue, which only this layer knows. queue.c and sa.c fire
 * them and need only trace.h.
 *
 * Copyright (C) 2026 ASX developers
 */

#include "stream.h"

#define CREATE_TRACE_POINTS
#include "trace.h"
