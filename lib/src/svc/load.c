// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * load.c - loading a service's or a Module's library (load.h).
 *
 * A relative path with a '/' is taken from the configuration's directory;
 * the factory must carry the ABI stamp ASX_SVC_FACTORY() or
 * ASX_SVC_MODULE_FACTORY() defines, for this libasx's service ABI.
 *
 * Calls conf.c only (its messages); called by object.c and stream.c.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "svc/load.h"

/* The library path as dlopen() should see it. */
static char *lib_path(struct asx__svc_plan *p, const char *path)
{
	char *s = NULL;

	if (path[0] == '/' || !strchr(path, '/') || !p->confdir)
		return strdup(path);
	if (asprintf(&s, "%s/%s", p->confdir, path) < 0)
		return NULL;
	return s;
}

/*
 * The ABI stamp of @factory in @dl as a Module (@module) or a service
 * factory defines it (ASX_SVC_MODULE_FACTORY, ASX_SVC_FACTORY): *abi, NULL
 * if there is none.  -ENOMEM or 0.
 */
static int stamp_of(void *dl, const char *factory, bool module, const unsigned int **abi)
{
	char *stamp = NULL;

	*abi = NULL;
	if (asprintf(&stamp, "%s_asx_svc%s_abi", factory, module ? "_module" : "") < 0)
		return -ENOMEM;
	*abi = dlsym(dl, stamp);
	free(stamp);
	return 0;
}

int asx__svc_check_lib(struct asx__svc_plan *p, const struct asx__svc_ent *e)
{
	const char *what = e->type == ASX__SVC_T_MODULE ? "module" : "service";
	char *path;
	struct stat st;
	int fd, r = 0;

	if (!strchr(e->path, '/'))
		return 0;	/* searched as dlopen() searches: found only by loading */
	path = lib_path(p, e->path);
	if (!path)
		return asx__svc_say(p, e, -ENOMEM, "out of memory");
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st))
		r = -errno;
	else if (!S_ISREG(st.st_mode))
		r = -EINVAL;
	if (fd >= 0)
		close(fd);
	free(path);
	if (r)
		return asx__svc_say(p, e, r == -EINVAL ? -ENOENT : r, "%s '%s': cannot load %s: %s",
				    what, e->name, e->path,
				    r == -EINVAL ? "not a regular file" : strerror(-r));
	return 0;
}

int asx__svc_load(struct asx__svc_plan *p, const struct asx__svc_ent *e, void **dl, void **fn)
{
	const char *what = e->type == ASX__SVC_T_MODULE ? "module" : "service";
	bool module = e->type == ASX__SVC_T_MODULE;
	const char *macro = module ? "ASX_SVC_MODULE_FACTORY" : "ASX_SVC_FACTORY";
	const unsigned int *abi, *other;
	const char *why;
	char *path;

	path = lib_path(p, e->path);
	if (!path)
		return asx__svc_say(p, e, -ENOMEM, "out of memory");
	*dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	free(path);
	if (!*dl) {
		why = dlerror();
		return asx__svc_say(p, e, -ENOENT, "%s '%s': cannot load %s: %s", what, e->name,
				    e->path, why ? why : "unknown error");
	}
	dlerror();
	*fn = dlsym(*dl, e->factory);
	if (!*fn)
		return asx__svc_say(p, e, -ENOENT, "%s '%s': %s has no function %s", what, e->name,
				    e->path, e->factory);
	if (stamp_of(*dl, e->factory, module, &abi))
		return asx__svc_say(p, e, -ENOMEM, "out of memory");
	if (!abi && !stamp_of(*dl, e->factory, !module, &other) && other)
		return asx__svc_say(p, e, -ENOEXEC,
				    "%s '%s': %s in %s is a %s factory (%s()), not a %s factory: load it as %s, or define it with %s()",
				    what, e->name, e->factory, e->path, module ? "service" : "Module",
				    module ? "ASX_SVC_FACTORY" : "ASX_SVC_MODULE_FACTORY",
				    module ? "Module" : "service",
				    module ? "a 'Service_Object'" : "a 'Module' in a stream", macro);
	if (!abi)
		return asx__svc_say(p, e, -ENOEXEC,
				    "%s '%s': %s in %s has no ABI stamp (define it with %s())",
				    what, e->name, e->factory, e->path, macro);
	if (*abi != ASX_SVC_ABI)
		return asx__svc_say(p, e, -ENOEXEC,
				    "%s '%s': %s was built for service ABI %u, this libasx has ABI %u: rebuild it against this libasx",
				    what, e->name, e->path, *abi, ASX_SVC_ABI);
	return 0;
}
