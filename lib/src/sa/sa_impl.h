/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* sa_impl.h - internals of the activation API, for lib/tests. */
#ifndef ASX_SA_IMPL_H
#define ASX_SA_IMPL_H

#include <asx/sa.h>

#define ASX_SA_DEV	"/dev/asx"

struct asx_sa_group {
	int fd;
	unsigned int max_vps;
	unsigned int ring_size;
	uint64_t id;
	uint64_t features;	/* ASX_FEAT_* of the module */
};

/* asx_sa_probe() and asx_sa_open() on the device at @path. */
int asx__sa_probe_dev(const char *path);
int asx__sa_open_dev(const char *path, struct asx_sa_group **grp, const struct asx_sa_opts *opts);

#endif /* ASX_SA_IMPL_H */
