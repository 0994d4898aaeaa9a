// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * load.c - loading a service's or a Module's library (load.h).
 *
 * A relative path with a '/' is taken from the configuration's directory;
 * a name that does not load as given is tried as ACE tries it
 * (lib<name>.so, then <name>.so); an empty one is the program itself;
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

#include <asx/asc_policy.h>

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

/* What each kind of factory is called, and the macro that stamps it. */
static const struct kind {
	enum asx__svc_type type;
	const char *what, *noun, *suffix, *macro, *as;
	unsigned int abi;
} kinds[] = {
	{ ASX__SVC_T_OBJECT, "service", "a service", "", "ASX_SVC_FACTORY", "a 'Service_Object'",
	  ASX_SVC_ABI },
	{ ASX__SVC_T_MODULE, "module", "a Module", "_module", "ASX_SVC_MODULE_FACTORY",
	  "a 'Module' in a stream", ASX_SVC_ABI },
	{ ASX__SVC_T_POLICY, "policy", "an ASC policy", "_policy", "ASX_ASC_POLICY_FACTORY", "an 'ASC_Policy'",
	  ASX_ASC_POLICY_ABI },
};

static const struct kind *kind_of(enum asx__svc_type t)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].type == t)
			return &kinds[i];
	return &kinds[0];
}

/*
 * The ABI stamp of @factory in @dl as a factory of kind @k defines it
 * (ASX_SVC_FACTORY, ASX_SVC_MODULE_FACTORY, ASX_ASC_POLICY_FACTORY): *abi,
 * NULL if there is none.  -ENOMEM or 0.
 */
static int stamp_of(void *dl, const char *factory, const struct kind *k, const unsigned int **abi)
{
	char *stamp = NULL;

	*abi = NULL;
	if (asprintf(&stamp, "%s_asx_svc%s_abi", factory, k->suffix) < 0)
		return -ENOMEM;
	*abi = dlsym(dl, stamp);
	free(stamp);
	return 0;
}

/*
 * The @i-th name to try for @path, as ACE searches: as given, then (a name
 * with no ".so" in its last part, ACE's short form) lib<name>.so and
 * <name>.so in the same directory.  NULL when there is no @i-th (errno 0)
 * or out of memory (errno ENOMEM).
 */
static char *lib_try(struct asx__svc_plan *p, const char *path, int i)
{
	const char *base = strrchr(path, '/');
	char *full, *s = NULL;
	int dir;

	errno = 0;
	base = base ? base + 1 : path;
	if (i == 0)
		return lib_path(p, path);
	if (i > 2 || !*base || strstr(base, ".so"))
		return NULL;
	dir = (int)(base - path);
	if (asprintf(&s, "%.*s%s%s.so", dir, path, i == 1 ? "lib" : "", base) < 0) {
		errno = ENOMEM;
		return NULL;
	}
	full = lib_path(p, s);
	free(s);
	if (!full)
		errno = ENOMEM;
	return full;
}

int asx__svc_check_lib(struct asx__svc_plan *p, const struct asx__svc_ent *e)
{
	const char *what = kind_of(e->type)->what;
	char *path;
	struct stat st;
	int fd, r = 0;

	if (!strchr(e->path, '/'))
		return 0;	/* searched as dlopen() searches: found only by loading */
	for (int i = 0;; i++) {
		int tr = 0;

		path = lib_try(p, e->path, i);
		if (!path && errno)
			return asx__svc_say(p, e, -ENOMEM, "out of memory");
		if (!path)
			break;
		fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st))
			tr = -errno;
		else if (!S_ISREG(st.st_mode))
			tr = -EINVAL;
		if (fd >= 0)
			close(fd);
		free(path);
		if (!tr)
			return 0;
		if (i == 0)
			r = tr;		/* the name as given is the one reported */
	}
	if (r)
		return asx__svc_say(p, e, r == -EINVAL ? -ENOENT : r, "%s '%s': cannot load %s: %s",
				    what, e->name, e->path,
				    r == -EINVAL ? "not a regular file" : strerror(-r));
	return 0;
}

int asx__svc_load(struct asx__svc_plan *p, const struct asx__svc_ent *e, void **dl, void **fn)
{
	const struct kind *k = kind_of(e->type);
	const char *what = k->what, *macro = k->macro;
	const unsigned int *abi, *other = NULL;
	const char *why;
	char *path;

	char first[256] = "";

	*dl = NULL;
	if (!e->path[0]) {	/* ":factory()": the program's own */
		*dl = dlopen(NULL, RTLD_NOW | RTLD_LOCAL);
		snprintf(first, sizeof(first), "%s", *dl ? "" : dlerror());
	}
	for (int i = 0; e->path[0] && !*dl; i++) {
		path = lib_try(p, e->path, i);
		if (!path && errno)
			return asx__svc_say(p, e, -ENOMEM, "out of memory");
		if (!path)
			break;
		*dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		free(path);
		why = *dl ? NULL : dlerror();
		if (i == 0)	/* the name as given is the one reported */
			snprintf(first, sizeof(first), "%s", why ? why : "unknown error");
	}
	if (!*dl)
		return asx__svc_say(p, e, -ENOENT, "%s '%s': cannot load %s: %s", what, e->name,
				    e->path, first);
	dlerror();
	*fn = dlsym(*dl, e->factory);
	if (!*fn && !e->path[0])
		return asx__svc_say(p, e, -ENOENT,
				    "%s '%s': the program exports no function %s (link it with -rdynamic, or name its library before the ':')",
				    what, e->name, e->factory);
	if (!*fn)
		return asx__svc_say(p, e, -ENOENT, "%s '%s': %s has no function %s", what, e->name,
				    e->path, e->factory);
	if (stamp_of(*dl, e->factory, k, &abi))
		return asx__svc_say(p, e, -ENOMEM, "out of memory");
	for (size_t i = 0; !abi && !other && i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (&kinds[i] == k)
			continue;
		if (stamp_of(*dl, e->factory, &kinds[i], &other))
			return asx__svc_say(p, e, -ENOMEM, "out of memory");
		if (other)
			return asx__svc_say(p, e, -ENOEXEC,
					    "%s '%s': %s in %s is %s factory (%s()), not %s factory: load it as %s, or define it with %s()",
					    what, e->name, e->factory, e->path, kinds[i].noun,
					    kinds[i].macro, k->noun, kinds[i].as, macro);
	}
	if (!abi)
		return asx__svc_say(p, e, -ENOEXEC,
				    "%s '%s': %s in %s has no ABI stamp (define it with %s())",
				    what, e->name, e->factory, e->path, macro);
	if (*abi != k->abi)
		return asx__svc_say(p, e, -ENOEXEC,
				    "%s '%s': %s was built for %s ABI %u, this libasx has ABI %u: rebuild it against this libasx",
				    what, e->name, e->path, k->type == ASX__SVC_T_POLICY ? "ASC policy" : "service",
				    *abi, k->abi);
	return 0;
}
