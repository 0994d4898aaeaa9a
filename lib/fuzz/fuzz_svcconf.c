// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * fuzz_svcconf.c - libFuzzer target for the svc.conf parser.
 *
 * The input is parsed as a file called fuzz.conf.  Either it parses, and
 * then every directive must be well formed (a valid name, a factory and a
 * path for each dynamic entry, kernel modules only at the bottom of kernel
 * Streams) and every parameter string must split; or it fails with a
 * message that names a file and a position.  Sanitizers catch any read
 * outside the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "svc/conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_ent(const struct asx__svc_ent *e, bool kernel_ok)
{
	char **v;
	int n;

	if (!e->name[0] || strlen(e->name) >= ASX__SVC_NAME_MAX)
		abort();
	if (e->dir == ASX__SVC_DYNAMIC && (!e->path || !e->factory || !e->factory[0]))
		abort();
	if (e->dir == ASX__SVC_KERNEL && !kernel_ok)
		abort();
	if (e->loc.line < 1 || e->loc.col < 1 || !e->loc.file)
		abort();
	if (asx__svc_split_args(e->name, e->args, &n, &v) == 0) {
		if (n < 1 || v[n] || strcmp(v[0], e->name))
			abort();
		free(v);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct asx__svc_conf *c;
	struct asx__svc_err err;
	size_t n = 0;

	if (asx__svc_parse_mem("fuzz.conf", (const char *)data, size, &c, &err)) {
		if (c || !err.err || !strchr(err.msg, ':'))
			abort();
		return 0;
	}
	for (const struct asx__svc_ent *e = c->head; e; e = e->next, n++) {
		bool below = true;

		check_ent(e, false);
		for (size_t i = 0; i < e->nmods; i++) {
			check_ent(&e->mods[i], e->kernel && below);
			below = e->mods[i].dir == ASX__SVC_KERNEL;
		}
	}
	if (n != c->n)
		abort();
	asx__svc_conf_free(c);
	return 0;
}
