/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * bench_raw.h - the raw context-switch benchmark (bench_raw.c), for
 * asx-bench and lib/tests: not part of the ABI, so they link libasx.a.
 */
#ifndef ASX_BENCH_RAW_H
#define ASX_BENCH_RAW_H

/* Nanoseconds per raw context switch (no scheduler), @n round trips;
 * -1 when @n is 0 or no stack could be had. */
double asx__asc_raw_switch_ns(unsigned long n);

#endif /* ASX_BENCH_RAW_H */
