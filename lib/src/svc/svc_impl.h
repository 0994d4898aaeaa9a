/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * svc_impl.h - the Service Repository's data, shared by the files of
 * lib/src/svc: types only, no function.  Each file has its own header for
 * what it defines; they call each other one way, lowest first:
 *
 *	conf.c		the svc.conf language, the name rule, messages
 *	load.c		loading a library: dlopen, the ABI stamps
 *	registry.c	the static registry and the stock Module table
 *	object.c	service objects: make, change state, stop
 *	stream.c	Streams: open, reshape live, undo, commit, close
 *	policy.c	ASC policies from shared objects: register, unregister
 *	plan.c		a configuration's transaction: plan, prepare,
 *			undo, commit, dry run (one function per directive kind)
 *	api.c		the public API (<asx/svc.h>)
 *
 * object.c, stream.c and policy.c do not call each other.  tools/svc-calls.sh (the
 * style stage) fails on a circle; Documentation/svc.rst has the order.
 */
#ifndef ASX_SRC_SVC_IMPL_H
#define ASX_SRC_SVC_IMPL_H

#include <pthread.h>
#include <stdbool.h>

#include <asx/asc.h>
#include <asx/svc.h>

#include "svc/conf.h"

/* One Module of a configured Stream, as its definition gave it. */
struct asx__svc_mod {
	char name[ASX__SVC_NAME_MAX];
	bool dynamic;			/* from a shared object */
	bool kernel;			/* an asx.ko module on the kernel Stream below */
	bool inactive;			/* suspended (asx_stream_suspend) */
	char *library, *factory, *args;	/* args "" if none; library NULL if linked in */
	void *dl;			/* dynamic: its dlopen() handle */
	bool kept;			/* a reshape's new list: the running Module stays,
					 * dl is borrowed from the old list */
};

enum asx__svc_kind { ASX__SVC_OBJECT = 1, ASX__SVC_STREAMK, ASX__SVC_MUXK, ASX__SVC_POLICYK };

/* A configured Stream linked under a mux (mux.c) */
struct asx__svc_link {
	char stream[ASX__SVC_NAME_MAX];
	int band;			/* ASX__SVC_BAND_ANY: the default route */
	struct asx_stream *s;		/* the Stream linked (NULL: not yet, in a plan) */
};

struct asx_mux;

struct asx__svc_ep;

struct asx_svc {
	char name[ASX_SVC_NAME_MAX];
	enum asx__svc_kind kind;
	struct asx_svc_ops ops;		/* a service object's, copied and checked */
	void *priv;
	enum asx_svc_state state;
	void *dl;			/* its own dlopen() handle, or NULL */
	char *library, *factory, *args;	/* the definition (args "" if none) */
	bool linked_in;			/* from the static registry */
	/* a Stream: */
	struct asx_stream *stream;
	bool kernel;			/* over a kernel Stream (asx_kstream_driver) */
	char *driver;			/* ... with this asx.ko driver */
	struct asx_asc *asc;		/* "asc N": its Tasks' threads' ASC, or NULL */
	union {				/* their QoS (the Stream keeps a pointer) */
		struct asx_prio_qos prio;
		struct asx_direct_qos direct;
	} asc_qos;
	struct asx__svc_asc asc_cfg;	/* what made @asc (vps 0: none) */
	struct asx__svc_mod *mods;	/* bottom first */
	size_t nmods;
	char *listen;			/* "listen ADDRESS": its endpoint's address, or NULL */
	int framing;			/* ... and framing (enum asx__svc_framing) */
	struct asx__svc_ep *ep;		/* the endpoint serving its head (endpoint.c) */
	/* a mux (its upper Stream is @stream): */
	struct asx_mux *mux;
	struct asx__svc_link *links;
	size_t nlinks;
	struct asx_svc *next;		/* in start order */
	/* a service object: */
	struct asx_svc_repo *repo;	/* its repository */
	struct asx__svc_evh *evh;	/* reactive (asx_svc_reactor()), or NULL */
	bool started;			/* init returned 0 */
	/* an ASC policy (policy.c): */
	bool registered;		/* asx_asc_policy_register()ed under @name */
};

struct asx__svc_reg {
	char name[ASX_SVC_NAME_MAX];
	asx_svc_factory_fn *factory;		/* a service object, or */
	asx_svc_module_fn *module;		/* a Module */
	struct asx__svc_reg *next;
};

struct asx_svc_repo {
	pthread_mutex_t lock;
	pthread_mutex_t rx_lock;	/* makes @rx (not @lock: init asks for it) */
	struct asx_reactor *rx;		/* the repository's Reactor, or NULL */
	struct asx_svc *svcs;		/* in start order */
	struct asx__svc_reg *regs;	/* the static registry */
};

enum asx__svc_act { KEEP, START, STOP, RESHAPE };

/* An operation done on a running Stream, to undo if the transaction fails. */
struct asx__svc_undo {
	enum { UNDO_INSERTED, UNDO_REPLACED, UNDO_STATE } what;
	size_t old;			/* UNDO_REPLACED: index in the old list */
	char name[ASX__SVC_NAME_MAX];
	void *dl;			/* the new Module's library handle */
};

/* One service the configuration touches: what runs, what it becomes. */
struct asx__svc_step {
	char name[ASX_SVC_NAME_MAX];
	struct asx_svc *old;		/* running now, or NULL */
	const struct asx__svc_ent *def;	/* the definition that starts or reshapes it */
	enum asx__svc_act act;
	enum asx_svc_state want;
	const struct asx__svc_ent *why;	/* the directive deciding want (for messages) */
	unsigned int seq;		/* when a directive last touched it (0: never) */
	struct asx_svc *fresh;		/* prepare(): the new instance */
	bool state_changed;		/* prepare(): old's state was changed */
	bool unregistered;		/* prepare(): old, a policy, was unregistered */
	/* RESHAPE: what was done to old->stream, and the module list it gets */
	struct asx__svc_undo *undo;
	size_t nundo;
	struct asx__svc_mod *mods;
	size_t nmods;
	/* a mux: the links it gets, and what prepare() did (to undo) */
	struct asx__svc_link *links;
	size_t nlinks;
	struct asx__svc_link *unlinked;	/* old links taken off */
	size_t nunlinked;
	bool *linked_new;		/* links[i] was linked by prepare */
};

struct asx__svc_plan;
/* The Stream a link names, as the transaction leaves it: 0 and *out, or -errno. */
typedef int asx__svc_resolve_fn(struct asx__svc_plan *p, const char *name,
				struct asx_stream **out);

struct asx__svc_plan {
	struct asx__svc_step *v;
	size_t n;
	struct asx__svc_names names;	/* the steps by name */
	struct asx__svc_step **order;	/* the steps by seq: the file's order */
	const char *confdir;		/* for relative library paths */
	struct asx__svc_ent *owned;	/* definitions the plan made (linked by next;
					 * strings borrowed): asx__svc_stream_mod_state() */
	char *err;
	size_t errlen;
	asx__svc_resolve_fn *resolve;	/* for mux.c: plan.c's steps by name */
};

/* Write "file:line:col: " (if @e) and the message into @p's error; returns @r. */
#define asx__svc_say(p, e, r, ...) asx__svc_sayf((p)->err, (p)->errlen, e, r, __VA_ARGS__)

static inline const char *asx__svc_args(const struct asx__svc_ent *e)
{
	return e->args ? e->args : "";
}

#endif /* ASX_SRC_SVC_IMPL_H */
