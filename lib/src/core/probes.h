/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * probes.h - USDT probes (provider "asx") for bpftrace and bcc.
 *
 * ASX_PROBE(name) ... ASX_PROBE4(name, a, b, c, d) place a static probe
 * point: a single nop when nobody traces it.  List them with
 *   bpftrace -l 'usdt:build/lib/libasx.so.0:asx:*'
 * Every probe is documented where it is placed and in Documentation/.
 */
#ifndef ASX_PROBES_H
#define ASX_PROBES_H

#include <sys/sdt.h>

#define ASX_PROBE(name)			DTRACE_PROBE(asx, name)
#define ASX_PROBE1(name, a)		DTRACE_PROBE1(asx, name, a)
#define ASX_PROBE2(name, a, b)		DTRACE_PROBE2(asx, name, a, b)
#define ASX_PROBE3(name, a, b, c)	DTRACE_PROBE3(asx, name, a, b, c)
#define ASX_PROBE4(name, a, b, c, d)	DTRACE_PROBE4(asx, name, a, b, c, d)

#endif /* ASX_PROBES_H */
