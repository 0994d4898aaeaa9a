/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * asx/svc.h - the Service Configurator: service objects, the Service
 * Repository, and configuration from svc.conf (Documentation/svc.rst).
 *
 * A service object is what a factory makes: a table of operations
 * (struct asx_svc_ops: init, fini, suspend, resume, info) and a private
 * pointer.  A factory is either linked into the program and registered by
 * name (asx_svc_register(), for svc.conf's "static" directive), or found
 * in a shared object (svc.conf's "dynamic NAME Service_Object * lib.so:
 * factory()"), where it must be defined with ASX_SVC_FACTORY() so that
 * the library can check it was built against this service ABI.
 *
 * The repository holds the running services by name, each with its state
 * (active or suspended) and the shared object it came from; a shared
 * object is unloaded when its last service is removed.  Applying a
 * configuration is a transaction: every new service is made and
 * initialised first, and if any step fails all of them are finalised and
 * the services that ran before run on, untouched.
 *
 * A repository is not thread-safe for concurrent reconfiguration; calls on
 * one repository are serialised by an internal lock, and a service's
 * operations are called with it held (an operation must not call back
 * into its repository).
 */
#ifndef ASX_SVC_H
#define ASX_SVC_H

#include <stddef.h>

#include <asx/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The service ABI: struct asx_svc_ops and the factory's signature. */
#define ASX_SVC_ABI 1

struct asx_svc;		/* a service in a repository (opaque) */
struct asx_svc_repo;	/* a Service Repository (opaque) */

struct asx_svc_ops {
	size_t sz;		/* sizeof(struct asx_svc_ops) as built: ASX_OPTS() sets it */
	/* Start the service; argv[0] is its name.  0 or -errno (the service is then not added). */
	int (*init)(struct asx_svc *svc, int argc, char **argv);
	/*
	 * Stop it and free what it holds, the private pointer included.  Called
	 * once for every service object a factory made with a valid table, also
	 * when its init failed or was never called (its parameters did not
	 * split): it must cope with an object init did not finish.
	 */
	void (*fini)(struct asx_svc *svc);
	/* Optional (NULL: the service cannot be suspended, -EOPNOTSUPP). */
	int (*suspend)(struct asx_svc *svc);
	int (*resume)(struct asx_svc *svc);
	/* Optional: a one-line description (addresses, what it does) into buf. */
	void (*info)(struct asx_svc *svc, char *buf, size_t len);
};

/*
 * Declare the table with ASX_OPTS(), which sets sz, as every size-first
 * struct of libasx is declared:
 *	static const ASX_OPTS(struct asx_svc_ops, my_ops, .init = f, .fini = g);
 * A table built against a newer libasx is accepted if what this one does
 * not know is zero; an older, shorter one gets NULL for what it lacks.
 */

/*
 * A factory fills in *ops and *priv (the service's private pointer, read
 * back with asx_svc_priv()) for a new service called @name; 0 or -errno.
 */
typedef int asx_svc_factory_fn(const char *name, const struct asx_svc_ops **ops, void **priv);

struct asx_module;	/* <asx/stream.h> */
struct asx_stream;

/*
 * A Module factory, for the Modules of a Stream in svc.conf: a new Module
 * (asx_module_create(), or a built-in such as asx_mod_pass(), which have
 * this very shape) called @name in *out, ready to push; 0 or -errno.  The
 * Module's Tasks get the entry's parameters in their open().
 */
typedef int asx_svc_module_fn(struct asx_module **out, const char *name);

/*
 * Define a factory in a shared object:
 *
 *	ASX_SVC_FACTORY(make_logger)(const char *name, const struct asx_svc_ops **ops,
 *				     void **priv) { ... }
 *
 * Besides the function it defines make_logger_asx_svc_abi, the ABI stamp
 * the loader checks: a factory without a stamp, or with another ABI, is
 * refused with a message that says so.  A Module factory's stamp has
 * another name (fn_asx_svc_module_abi), so that one kind of factory named
 * where the other is wanted is refused too, not called with the wrong
 * arguments.
 */
#define ASX_SVC_FACTORY(fn)                                                  \
	ASX_API extern const unsigned int fn##_asx_svc_abi;                  \
	ASX_API const unsigned int fn##_asx_svc_abi = ASX_SVC_ABI;           \
	ASX_API asx_svc_factory_fn fn;                                       \
	ASX_API int fn

/* The same for a Module factory in a shared object ("dynamic NAME Module * lib.so:fn()"). */
#define ASX_SVC_MODULE_FACTORY(fn)                                           \
	ASX_API extern const unsigned int fn##_asx_svc_module_abi;           \
	ASX_API const unsigned int fn##_asx_svc_module_abi = ASX_SVC_ABI;    \
	ASX_API asx_svc_module_fn fn;                                        \
	ASX_API int fn

/* What a service says of itself (asx_svc_list()). */
enum asx_svc_state {
	ASX_SVC_ACTIVE = 1,
	ASX_SVC_SUSPENDED = 2,
};

#define ASX_SVC_NAME_MAX 64	/* with the NUL */

struct asx_svc_info {
	char name[ASX_SVC_NAME_MAX];
	enum asx_svc_state state;
	const char *library;	/* the shared object's path, NULL if linked in */
	const char *factory;	/* the factory's name */
	const char *args;	/* the parameters it was started with ("" if none) */
	char desc[128];		/* its info() line, cut at 127 bytes ("" if none) */
};

/* A repository with no service.  0 or -ENOMEM. */
ASX_API int asx_svc_repo_create(struct asx_svc_repo **out);
/* Finalise every service (in the reverse order of their start), unload their libraries, free. */
ASX_API void asx_svc_repo_destroy(struct asx_svc_repo *repo);

/*
 * Make @factory known under @name for "static" directives.  -EEXIST if the
 * name is taken, -EINVAL for a name svc.conf could not write.
 */
ASX_API int asx_svc_register(struct asx_svc_repo *repo, const char *name,
			     asx_svc_factory_fn *factory);

/*
 * Make a Module factory known under @name for a Stream's "static NAME"
 * entries.  The built-in Modules pass, counter, framer and cksum are
 * known without it.  -EEXIST, -EINVAL as asx_svc_register().
 */
ASX_API int asx_svc_register_module(struct asx_svc_repo *repo, const char *name,
				    asx_svc_module_fn *factory);

/*
 * Apply a configuration, from a file or from text (@name is the file name
 * its messages use; includes and relative library paths are resolved
 * against its directory).  The directives run in order, as ACE runs them,
 * on top of what runs: a definition of a running service with the same
 * library, factory and parameters leaves it running; a different one
 * replaces it (the new one is started before the old one is stopped).
 * Either way a definition gives the service its state: active, or
 * suspended if it says "inactive"; suspend and resume directives then
 * change it ("suspend STREAM/MODULE": one Module of a Stream).  With
 * ASX_SVC_RELOAD the text is the whole configuration: a running service
 * it does not define is removed.
 *
 * All or nothing: on failure nothing has changed and @err (if not NULL)
 * holds one line, "file:line:column: message" (an error in the text, or
 * the directive whose service failed, and why).  0 or -errno.
 */
#define ASX_SVC_RELOAD 0x1u
ASX_API int asx_svc_apply_file(struct asx_svc_repo *repo, const char *path, unsigned int flags,
			       char *err, size_t errlen);
ASX_API int asx_svc_apply_text(struct asx_svc_repo *repo, const char *name, const char *text,
			       unsigned int flags, char *err, size_t errlen);

/*
 * Check a configuration's text only (what `asxd -t` does): 0 if @path and
 * what it includes parse, else -errno and the first error in @err as
 * "file:line:column: message".  Nothing is loaded or started.
 */
ASX_API int asx_svc_check_file(const char *path, char *err, size_t errlen);

/*
 * A dry run of asx_svc_apply_file(@repo, @path, @flags) (what `asxd -t`
 * does): the file is parsed and its directives are planned against what
 * runs in @repo, as applying would plan them (a remove, suspend or resume
 * of a service or Module that is not there, a reorder of a running
 * Stream's Modules, ... are refused with the message applying would give);
 * then every service and Module that would start is checked as far as
 * that needs no loading: a static one must be registered (or a built-in
 * Module), a dynamic one's library, if its path has a '/', must be a
 * readable regular file, a kernel Stream needs /dev/asx.  Nothing is
 * loaded, started or changed: a library's factory, its ABI stamp and a
 * service's init are checked only by applying.  0 or -errno, with the
 * first error in @err as "file:line:column: message".
 */
ASX_API int asx_svc_check(struct asx_svc_repo *repo, const char *path, unsigned int flags,
			  char *err, size_t errlen);

/*
 * Act on one service by name: -ENOENT if there is none.  Suspend and
 * resume also take "STREAM/MODULE", a user-space Module of a configured
 * Stream, which then holds its messages until resumed (asx_stream_suspend;
 * -EOPNOTSUPP for an asx.ko module or for remove, -EMEDIUMTYPE if STREAM
 * is a service object).  A reload then keeps or changes the Module's state
 * as its entry says ("inactive" or not).
 */
ASX_API int asx_svc_suspend(struct asx_svc_repo *repo, const char *name);
ASX_API int asx_svc_resume(struct asx_svc_repo *repo, const char *name);
ASX_API int asx_svc_remove(struct asx_svc_repo *repo, const char *name);

/*
 * Describe up to @n services, in the order they started, into @out;
 * returns how many there are (which may be more than @n).  The strings
 * stay valid until the service is removed.
 */
ASX_API int asx_svc_list(struct asx_svc_repo *repo, struct asx_svc_info *out, size_t n);
/* 0 and *info for the service called @name, or -ENOENT. */
ASX_API int asx_svc_find(struct asx_svc_repo *repo, const char *name, struct asx_svc_info *info);

/*
 * The Stream a "stream NAME { ... }" directive made, for the program to
 * put and get messages through (<asx/stream.h>); for "mux NAME", the
 * Multiplexor's upper Stream.  0 and *out, -ENOENT (no such service) or
 * -EMEDIUMTYPE (NAME is a service object or an ASC policy).  A Stream with an endpoint
 * ("listen") has its head served there, and a Stream linked under a mux
 * gives what reaches its head to the mux: get from neither.  The pointer stays
 * valid while the Stream is configured, reshaped or not; the program must
 * stop using it before a configuration removes or replaces the Stream.
 */
ASX_API int asx_svc_stream(struct asx_svc_repo *repo, const char *name, struct asx_stream **out);

/* For a service's operations: its private pointer and its name. */
ASX_API void *asx_svc_priv(const struct asx_svc *svc);
ASX_API const char *asx_svc_name(const struct asx_svc *svc);

struct asx_reactor;	/* <asx/reactor.h> */

/*
 * Event-handler services (Documentation/svc.rst, "Reactive services").  A
 * service that calls asx_svc_reactor() in its init gets a Reactor of its
 * own, which the repository nests in its Reactor as one handle once init
 * has returned: the service registers descriptors, timers and
 * notifications there (or gives it to an Acceptor's ASX_SVC_REACTIVE
 * strategy), and its callbacks run on the thread that runs the
 * repository's Reactor.  The repository then:
 *   - suspends it by taking that handle off its Reactor (events wait in
 *     the kernel, nothing is lost, order is kept) and resumes it by
 *     putting it back; the service's own suspend/resume operations, if
 *     any, run too (suspend after its handle is off, resume before it is
 *     back), and are not needed;
 *   - finalises it (remove, reload, repository destroyed) with none of its
 *     callbacks running: once the repository decided to stop it, none
 *     starts; fini must end what it registered (asx_acceptor_destroy,
 *     asx_reactor_remove_handler, ...); whatever it left is closed
 *     (handle_close) right after fini, before its library is unloaded.
 * Its callbacks must not call the repository (-EDEADLK).
 * 0 and *out (the same Reactor on every call), -EINVAL (a Stream, or
 * NULL), -ENOMEM or the Reactor's error.
 */
ASX_API int asx_svc_reactor(struct asx_svc *svc, struct asx_reactor **out);

/*
 * The repository's Reactor (made on first use, destroyed by
 * asx_svc_repo_destroy(), which must not be called while a thread runs
 * it).  The program runs it (asx_reactor_run, on one thread: asxd's main
 * loop) for the reactive services' callbacks to run, and may register
 * its own handlers there.  0 and *out, -EINVAL, -ENOMEM, ...
 */
ASX_API int asx_svc_repo_reactor(struct asx_svc_repo *repo, struct asx_reactor **out);

#ifdef __cplusplus
}
#endif

#endif /* ASX_SVC_H */
