/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * asx/addr.h - IPC SAP addresses: IPv4, IPv6, UNIX path and abstract.
 *
 * struct asx_addr is a value type (copy it with =) that holds any of the
 * socket address families the IPC SAP wrappers speak, together with its
 * length, so a sockaddr is never left half zeroed.  Text forms:
 *
 *   "192.0.2.1:80"     IPv4 address and port
 *   "*:80" or ":80"    IPv4 wildcard (INADDR_ANY) and port
 *   "[2001:db8::1]:80" IPv6 address and port ("[::]:80" is the wildcard;
 *                      "[fe80::1%eth0]:80" names a scope by interface)
 *   "/run/x.sock"      UNIX-domain path (anything starting with '/' or '.')
 *   "@name"            Linux abstract UNIX name (no file; "@" + bytes)
 *
 * asx_addr_parse() is numeric only and never touches the network or the
 * name service; asx_addr_resolve() is the separate call that looks a host
 * name up with getaddrinfo().  Both return -EINVAL on malformed text and,
 * through the optional @why, a static string saying what is wrong.
 */
#ifndef ASX_ADDR_H
#define ASX_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <sys/un.h>
#include <asx/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct asx_addr {
	socklen_t len;			/* 0: empty */
	union {
		struct sockaddr sa;
		struct sockaddr_in in4;
		struct sockaddr_in6 in6;
		struct sockaddr_un un;
		struct sockaddr_storage ss;
	} u;
};

/* Enough for every string asx_addr_format() produces, NUL included
 * (an abstract name of 107 unprintable bytes escaped as \xNN). */
#define ASX_ADDR_STRLEN 432

/*
 * Parse a numeric address (forms above) into @a.  0, or -EINVAL with
 * *@why (if @why is not NULL) set to a static, human-readable reason;
 * -ENAMETOOLONG for a UNIX path or abstract name that does not fit.
 */
ASX_API int asx_addr_parse(struct asx_addr *a, const char *str, const char **why);

/*
 * Resolve "host:port" or "[host]:port" with getaddrinfo(); @family is
 * AF_UNSPEC, AF_INET or AF_INET6; the first result is stored.  UNIX forms
 * are accepted and parsed as asx_addr_parse() does.  Errors: -EINVAL
 * (malformed, *@why says why), -ENOENT (no such host), -EAGAIN (temporary
 * name-service failure), -ENOMEM; *@why gets gai_strerror()'s text.
 */
ASX_API int asx_addr_resolve(struct asx_addr *a, const char *str, int family,
			     const char **why);

/*
 * Write the text form of @a into @buf (size @len, ASX_ADDR_STRLEN is
 * always enough).  Returns the string length, -ENOSPC if it does not fit,
 * -EAFNOSUPPORT for an empty or unknown address.  Abstract names with
 * non-printable bytes are written with \xNN escapes.
 */
ASX_API int asx_addr_format(const struct asx_addr *a, char *buf, size_t len);

/* Builders; all return 0 or a negative errno value. */
ASX_API int asx_addr_inet4(struct asx_addr *a, uint32_t host_order_ip, uint16_t port);
ASX_API int asx_addr_inet6(struct asx_addr *a, const struct in6_addr *ip, uint16_t port,
			   uint32_t scope_id);
ASX_API int asx_addr_unix(struct asx_addr *a, const char *path);	/* -ENAMETOOLONG */
ASX_API int asx_addr_abstract(struct asx_addr *a, const void *name, size_t len);
/* Copy a raw sockaddr (AF_INET, AF_INET6, AF_UNIX); -EAFNOSUPPORT, -EINVAL. */
ASX_API int asx_addr_from_sockaddr(struct asx_addr *a, const struct sockaddr *sa,
				   socklen_t len);

/* AF_INET, AF_INET6, AF_UNIX, or AF_UNSPEC for an empty address. */
ASX_API int asx_addr_family(const struct asx_addr *a);
/* The port in host order, or -EAFNOSUPPORT for a UNIX address. */
ASX_API int asx_addr_port(const struct asx_addr *a);
ASX_API int asx_addr_set_port(struct asx_addr *a, uint16_t port);
/* true for a UNIX address in the abstract namespace ("@name"). */
ASX_API bool asx_addr_is_abstract(const struct asx_addr *a);
/* Same family, address, port (and scope) or same UNIX name. */
ASX_API bool asx_addr_equal(const struct asx_addr *a, const struct asx_addr *b);

static inline const struct sockaddr *asx_addr_sockaddr(const struct asx_addr *a)
{
	return &a->u.sa;
}

static inline socklen_t asx_addr_len(const struct asx_addr *a)
{
	return a->len;
}

#ifdef __cplusplus
}
#endif
#endif /* ASX_ADDR_H */
