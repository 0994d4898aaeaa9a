// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * addr.c - IPC SAP addresses: build, parse, print, resolve.
 *
 * The parser is strict on purpose: a port is 1-5 decimal digits no larger
 * than 65535, an IPv4 host is a dotted quad (inet_pton, so no "010" octal
 * or "1.2" short forms), an IPv6 host must be in brackets.  Every reject
 * says why through a static string, so a configuration error can be
 * reported without guesswork.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <asx/addr.h>

#define UN_OFF offsetof(struct sockaddr_un, sun_path)
#define UN_MAX (sizeof(((struct sockaddr_un *)0)->sun_path))

static int fail(const char **why, const char *reason, int err)
{
	if (why)
		*why = reason;
	return err;
}

int asx_addr_inet4(struct asx_addr *a, uint32_t host_order_ip, uint16_t port)
{
	memset(a, 0, sizeof(*a));
	a->u.in4.sin_family = AF_INET;
	a->u.in4.sin_port = htons(port);
	a->u.in4.sin_addr.s_addr = htonl(host_order_ip);
	a->len = sizeof(struct sockaddr_in);
	return 0;
}

int asx_addr_inet6(struct asx_addr *a, const struct in6_addr *ip, uint16_t port,
		   uint32_t scope_id)
{
	memset(a, 0, sizeof(*a));
	a->u.in6.sin6_family = AF_INET6;
	a->u.in6.sin6_port = htons(port);
	a->u.in6.sin6_addr = ip ? *ip : in6addr_any;
	a->u.in6.sin6_scope_id = scope_id;
	a->len = sizeof(struct sockaddr_in6);
	return 0;
}

int asx_addr_unix(struct asx_addr *a, const char *path)
{
	size_t n;

	memset(a, 0, sizeof(*a));
	if (!path || !*path)
		return -EINVAL;
	n = strlen(path);
	if (n >= UN_MAX)
		return -ENAMETOOLONG;
	a->u.un.sun_family = AF_UNIX;
	memcpy(a->u.un.sun_path, path, n);
	a->len = (socklen_t)(UN_OFF + n + 1);
	return 0;
}

int asx_addr_abstract(struct asx_addr *a, const void *name, size_t len)
{
	memset(a, 0, sizeof(*a));
	if (!name || !len)
		return -EINVAL;
	if (len > UN_MAX - 1)
		return -ENAMETOOLONG;
	a->u.un.sun_family = AF_UNIX;
	memcpy(a->u.un.sun_path + 1, name, len);
	a->len = (socklen_t)(UN_OFF + 1 + len);
	return 0;
}

int asx_addr_from_sockaddr(struct asx_addr *a, const struct sockaddr *sa, socklen_t len)
{
	size_t need;

	memset(a, 0, sizeof(*a));
	if (!sa || len < sizeof(sa_family_t))
		return -EINVAL;
	switch (sa->sa_family) {
	case AF_INET:
		need = sizeof(struct sockaddr_in);
		break;
	case AF_INET6:
		need = sizeof(struct sockaddr_in6);
		break;
	case AF_UNIX:
		need = UN_OFF;
		if (len > sizeof(struct sockaddr_un))
			return -EINVAL;
		break;
	default:
		return -EAFNOSUPPORT;
	}
	if (len < need)
		return -EINVAL;
	if (sa->sa_family != AF_UNIX)
		len = (socklen_t)need;
	memcpy(&a->u, sa, len);
	a->len = len;
	return 0;
}

int asx_addr_family(const struct asx_addr *a)
{
	return a->len ? a->u.sa.sa_family : AF_UNSPEC;
}

int asx_addr_port(const struct asx_addr *a)
{
	switch (asx_addr_family(a)) {
	case AF_INET:
		return ntohs(a->u.in4.sin_port);
	case AF_INET6:
		return ntohs(a->u.in6.sin6_port);
	default:
		return -EAFNOSUPPORT;
	}
}

int asx_addr_set_port(struct asx_addr *a, uint16_t port)
{
	switch (asx_addr_family(a)) {
	case AF_INET:
		a->u.in4.sin_port = htons(port);
		return 0;
	case AF_INET6:
		a->u.in6.sin6_port = htons(port);
		return 0;
	default:
		return -EAFNOSUPPORT;
	}
}

bool asx_addr_is_abstract(const struct asx_addr *a)
{
	return asx_addr_family(a) == AF_UNIX && a->len > UN_OFF && a->u.un.sun_path[0] == '\0';
}

bool asx_addr_equal(const struct asx_addr *a, const struct asx_addr *b)
{
	int f = asx_addr_family(a);

	if (f != asx_addr_family(b))
		return false;
	switch (f) {
	case AF_INET:
		return a->u.in4.sin_port == b->u.in4.sin_port &&
		       a->u.in4.sin_addr.s_addr == b->u.in4.sin_addr.s_addr;
	case AF_INET6:
		return a->u.in6.sin6_port == b->u.in6.sin6_port &&
		       a->u.in6.sin6_scope_id == b->u.in6.sin6_scope_id &&
		       !memcmp(&a->u.in6.sin6_addr, &b->u.in6.sin6_addr, sizeof(struct in6_addr));
	case AF_UNIX:
		return a->len == b->len &&
		       !memcmp(a->u.un.sun_path, b->u.un.sun_path, a->len - UN_OFF);
	default:
		return true;		/* both empty */
	}
}

/* ------------------------------------------------------------ parsing */

static int parse_port(const char *s, uint16_t *port, const char **why)
{
	unsigned long v = 0;
	size_t i;

	if (!*s)
		return fail(why, "missing port number after ':'", -EINVAL);
	for (i = 0; s[i]; i++) {
		if (s[i] < '0' || s[i] > '9')
			return fail(why, "port is not a decimal number", -EINVAL);
		if (i >= 5)
			return fail(why, "port out of range (0-65535)", -EINVAL);
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > 65535)
		return fail(why, "port out of range (0-65535)", -EINVAL);
	*port = (uint16_t)v;
	return 0;
}

/*
 * Split "host:port" / "[host]:port" into @host (copied into @hbuf) and
 * @port text.  Sets *@bracketed for the IPv6 form.
 */
static int split_host_port(const char *str, char *hbuf, size_t hlen, const char **port,
			   bool *bracketed, const char **why)
{
	const char *colon, *end;
	size_t n;

	*bracketed = false;
	if (str[0] == '[') {
		end = strchr(str, ']');
		if (!end)
			return fail(why, "missing ']' after IPv6 address", -EINVAL);
		if (end[1] != ':')
			return fail(why, "expected ':port' after ']'", -EINVAL);
		n = (size_t)(end - str - 1);
		if (!n)
			return fail(why, "empty IPv6 address in brackets", -EINVAL);
		if (n >= hlen)
			return fail(why, "host part too long", -EINVAL);
		memcpy(hbuf, str + 1, n);
		hbuf[n] = '\0';
		*port = end + 2;
		*bracketed = true;
		return 0;
	}
	colon = strrchr(str, ':');
	if (!colon)
		return fail(why, "missing ':port' (expected host:port, [v6]:port, /path or @name)",
			    -EINVAL);
	if (memchr(str, ':', (size_t)(colon - str)))
		return fail(why, "IPv6 addresses must be written in brackets: [addr]:port",
			    -EINVAL);
	n = (size_t)(colon - str);
	if (n >= hlen)
		return fail(why, "host part too long", -EINVAL);
	memcpy(hbuf, str, n);
	hbuf[n] = '\0';
	*port = colon + 1;
	return 0;
}

static int parse_unix(struct asx_addr *a, const char *str, const char **why)
{
	int r;

	if (str[0] == '@') {
		if (!str[1])
			return fail(why, "empty abstract socket name after '@'", -EINVAL);
		r = asx_addr_abstract(a, str + 1, strlen(str + 1));
	} else {
		r = asx_addr_unix(a, str);
	}
	if (r == -ENAMETOOLONG)
		return fail(why, "UNIX socket name longer than 107 bytes", r);
	return r;
}

static bool is_unix_form(const char *str)
{
	return str[0] == '/' || str[0] == '.' || str[0] == '@';
}

/* Parse "addr%scope" into @ip and @scope. */
static int parse_v6(const char *host, struct in6_addr *ip, uint32_t *scope, const char **why)
{
	char buf[INET6_ADDRSTRLEN + IF_NAMESIZE + 2];
	char *pct;

	if (strlen(host) >= sizeof(buf))
		return fail(why, "not a numeric IPv6 address", -EINVAL);
	strcpy(buf, host);
	*scope = 0;
	pct = strchr(buf, '%');
	if (pct) {
		char *e = pct + 1;

		*pct = '\0';
		if (!*e)
			return fail(why, "empty IPv6 scope after '%'", -EINVAL);
		if (strspn(e, "0123456789") == strlen(e)) {
			unsigned long v = strtoul(e, NULL, 10);

			if (strlen(e) > 10 || v > UINT32_MAX)
				return fail(why, "IPv6 scope id out of range", -EINVAL);
			*scope = (uint32_t)v;
		} else {
			*scope = if_nametoindex(e);
			if (!*scope)
				return fail(why, "unknown interface in IPv6 scope", -EINVAL);
		}
	}
	if (inet_pton(AF_INET6, buf, ip) != 1)
		return fail(why, "not a numeric IPv6 address", -EINVAL);
	return 0;
}

int asx_addr_parse(struct asx_addr *a, const char *str, const char **why)
{
	char host[INET6_ADDRSTRLEN + IF_NAMESIZE + 2];
	const char *port_s;
	bool br;
	uint16_t port;
	int r;

	memset(a, 0, sizeof(*a));
	if (why)
		*why = NULL;
	if (!str || !*str)
		return fail(why, "empty address", -EINVAL);
	if (is_unix_form(str))
		return parse_unix(a, str, why);
	r = split_host_port(str, host, sizeof(host), &port_s, &br, why);
	if (r)
		return r;
	r = parse_port(port_s, &port, why);
	if (r)
		return r;
	if (br) {
		struct in6_addr ip;
		uint32_t scope;

		r = parse_v6(host, &ip, &scope, why);
		if (r)
			return r;
		return asx_addr_inet6(a, &ip, port, scope);
	}
	if (!host[0] || !strcmp(host, "*"))
		return asx_addr_inet4(a, INADDR_ANY, port);
	{
		struct in_addr ip;

		if (inet_pton(AF_INET, host, &ip) != 1)
			return fail(why, "not a numeric IPv4 address (asx_addr_resolve() looks up names)",
				    -EINVAL);
		return asx_addr_inet4(a, ntohl(ip.s_addr), port);
	}
}

static int gai_errno(int e)
{
	switch (e) {
	case EAI_NONAME:
#ifdef EAI_NODATA
	case EAI_NODATA:
#endif
#ifdef EAI_ADDRFAMILY
	case EAI_ADDRFAMILY:
#endif
		return -ENOENT;
	case EAI_AGAIN:
		return -EAGAIN;
	case EAI_MEMORY:
		return -ENOMEM;
	case EAI_FAMILY:
		return -EAFNOSUPPORT;
	case EAI_SYSTEM:
		return errno ? -errno : -EIO;
	default:
		return -EINVAL;
	}
}

int asx_addr_resolve(struct asx_addr *a, const char *str, int family, const char **why)
{
	char host[256];
	const char *port_s;
	struct addrinfo hints, *res = NULL;
	bool br;
	int r;

	memset(a, 0, sizeof(*a));
	if (why)
		*why = NULL;
	if (family != AF_UNSPEC && family != AF_INET && family != AF_INET6)
		return fail(why, "family must be AF_UNSPEC, AF_INET or AF_INET6", -EINVAL);
	if (!str || !*str)
		return fail(why, "empty address", -EINVAL);
	if (is_unix_form(str))
		return parse_unix(a, str, why);
	r = split_host_port(str, host, sizeof(host), &port_s, &br, why);
	if (r)
		return r;
	if (!*port_s)
		return fail(why, "missing port number after ':'", -EINVAL);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = br ? AF_INET6 : family;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_ADDRCONFIG;
	if (!host[0] || !strcmp(host, "*"))
		hints.ai_flags |= AI_PASSIVE;
	if (br && family == AF_INET)
		return fail(why, "bracketed IPv6 address but AF_INET requested", -EINVAL);
	r = getaddrinfo((hints.ai_flags & AI_PASSIVE) ? NULL : host, port_s, &hints, &res);
	if (r == EAI_NONAME || r == EAI_FAMILY) {
		/* AI_ADDRCONFIG hides ::1 when only lo has IPv6: ask again without it */
		hints.ai_flags &= ~AI_ADDRCONFIG;
		r = getaddrinfo((hints.ai_flags & AI_PASSIVE) ? NULL : host, port_s, &hints, &res);
	}
	if (r) {
		int e = gai_errno(r);

		return fail(why, gai_strerror(r), e);
	}
	r = asx_addr_from_sockaddr(a, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return r;
}

/* ------------------------------------------------------------ printing */

int asx_addr_format(const struct asx_addr *a, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN], scope[IF_NAMESIZE + 12];
	size_t i, n, o;
	int w;

	switch (asx_addr_family(a)) {
	case AF_INET:
		inet_ntop(AF_INET, &a->u.in4.sin_addr, ip, sizeof(ip));
		w = snprintf(buf, len, "%s:%u", ip, ntohs(a->u.in4.sin_port));
		break;
	case AF_INET6:
		inet_ntop(AF_INET6, &a->u.in6.sin6_addr, ip, sizeof(ip));
		scope[0] = '\0';
		if (a->u.in6.sin6_scope_id) {
			char ifn[IF_NAMESIZE];

			if (if_indextoname(a->u.in6.sin6_scope_id, ifn))
				snprintf(scope, sizeof(scope), "%%%s", ifn);
			else
				snprintf(scope, sizeof(scope), "%%%u", a->u.in6.sin6_scope_id);
		}
		w = snprintf(buf, len, "[%s%s]:%u", ip, scope, ntohs(a->u.in6.sin6_port));
		break;
	case AF_UNIX:
		n = a->len - UN_OFF;
		if (n == 0) {
			w = snprintf(buf, len, "(unnamed)");
			break;
		}
		if (a->u.un.sun_path[0]) {
			w = snprintf(buf, len, "%.*s", (int)strnlen(a->u.un.sun_path, n),
				     a->u.un.sun_path);
			break;
		}
		/* abstract: '@' then the name with unprintable bytes escaped */
		if (len < 2)
			return -ENOSPC;
		buf[0] = '@';
		for (i = 1, o = 1; i < n; i++) {
			unsigned char c = (unsigned char)a->u.un.sun_path[i];

			if (c >= 0x20 && c < 0x7f && c != '\\') {
				if (o + 1 >= len)
					return -ENOSPC;
				buf[o++] = (char)c;
			} else {
				if (o + 4 >= len)
					return -ENOSPC;
				snprintf(buf + o, 5, "\\x%02x", c);
				o += 4;
			}
		}
		buf[o] = '\0';
		return (int)o;
	default:
		return -EAFNOSUPPORT;
	}
	if (w < 0 || (size_t)w >= len)
		return -ENOSPC;
	return w;
}
