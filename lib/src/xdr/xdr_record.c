// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * xdr_record.c - records declared once as a field table, coded in either
 * direction.
 *
 * The loops keep the cursor in a local and handle the common scalar and
 * fixed-opaque fields inline while the window has room; everything else
 * (variable parts, nested records, unions, a field straddling the window
 * end) goes through asx_xdr_field(), which uses the stream primitives.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include <asx/xdr.h>
#include "core/compiler.h"
#include "xdr/xdr_internal.h"

static inline void st32(unsigned char *p, uint32_t v)
{
	v = asx__be32(v);
	memcpy(p, &v, 4);
}

static inline uint32_t ld32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return asx__be32(v);
}

static inline void st64(unsigned char *p, uint64_t v)
{
	v = asx__be64(v);
	memcpy(p, &v, 8);
}

static inline uint64_t ld64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return asx__be64(v);
}

/*
 * Copy a short run without a call into the C library: overlapping fixed
 * size moves, which the compiler turns into single loads and stores.
 */
static inline void copy_short(unsigned char *d, const unsigned char *s, size_t n)
{
	if (n >= 16) {
		size_t i;

		for (i = 0; i + 16 < n; i += 16)
			memcpy(d + i, s + i, 16);
		memcpy(d + n - 16, s + n - 16, 16);
	} else if (n >= 8) {
		memcpy(d, s, 8);
		memcpy(d + n - 8, s + n - 8, 8);
	} else if (n >= 4) {
		memcpy(d, s, 4);
		memcpy(d + n - 4, s + n - 4, 4);
	} else {
		while (n--)
			*d++ = *s++;
	}
}

static inline void copy_body(unsigned char *d, const unsigned char *s, size_t n)
{
	if (n <= 128)
		copy_short(d, s, n);
	else
		asx__xdr_copy(d, s, n);
}

/* ---- one element of a scalar type, through the stream ---- */

static int put_scalar(struct asx_xdr *x, unsigned int t, const unsigned char *m)
{
	switch (t) {
	case ASX_XDR_INT: case ASX_XDR_UINT: case ASX_XDR_FLOAT: case ASX_XDR_ENUM: {
		uint32_t v;

		memcpy(&v, m, 4);
		return asx_xdr_put_u32(x, v);
	}
	case ASX_XDR_HYPER: case ASX_XDR_UHYPER: case ASX_XDR_DOUBLE: {
		uint64_t v;

		memcpy(&v, m, 8);
		return asx_xdr_put_u64(x, v);
	}
	case ASX_XDR_BOOL:
		return asx_xdr_put_u32(x, *(const bool *)m ? 1 : 0);
	case ASX_XDR_CHAR:
		return asx_xdr_put_i32(x, *(const char *)m);
	case ASX_XDR_UCHAR:
		return asx_xdr_put_u32(x, *m);
	case ASX_XDR_SHORT:
		return asx_xdr_put_i32(x, *(const short *)m);
	case ASX_XDR_USHORT:
		return asx_xdr_put_u32(x, *(const unsigned short *)m);
	case ASX_XDR_LONG: {
		long v = *(const long *)m;

		if (v < INT32_MIN || v > INT32_MAX)
			return asx__xdr_fail(x, -ERANGE);
		return asx_xdr_put_i32(x, (int32_t)v);
	}
	case ASX_XDR_ULONG: {
		unsigned long v = *(const unsigned long *)m;

		if (v > UINT32_MAX)
			return asx__xdr_fail(x, -ERANGE);
		return asx_xdr_put_u32(x, (uint32_t)v);
	}
	}
	return asx__xdr_fail(x, -EINVAL);
}

/* Store the XDR word @w into the member at @m of type @t: 0 or -EBADMSG. */
static inline int set_small(unsigned int t, unsigned char *m, uint32_t w)
{
	int32_t s = (int32_t)w;

	switch (t) {
	case ASX_XDR_BOOL:
		if (w > 1)
			return -EBADMSG;
		*(bool *)m = w;
		return 0;
	case ASX_XDR_CHAR:
		if (s < CHAR_MIN || s > CHAR_MAX)
			return -EBADMSG;
		*(char *)m = (char)s;
		return 0;
	case ASX_XDR_UCHAR:
		if (w > UCHAR_MAX)
			return -EBADMSG;
		*m = (unsigned char)w;
		return 0;
	case ASX_XDR_SHORT:
		if (s < SHRT_MIN || s > SHRT_MAX)
			return -EBADMSG;
		*(short *)m = (short)s;
		return 0;
	case ASX_XDR_USHORT:
		if (w > USHRT_MAX)
			return -EBADMSG;
		*(unsigned short *)m = (unsigned short)w;
		return 0;
	case ASX_XDR_LONG:
		*(long *)m = s;
		return 0;
	case ASX_XDR_ULONG:
		*(unsigned long *)m = w;
		return 0;
	}
	return -EINVAL;
}

static int get_scalar(struct asx_xdr *x, unsigned int t, unsigned char *m)
{
	uint32_t w;
	int ret;

	switch (t) {
	case ASX_XDR_INT: case ASX_XDR_UINT: case ASX_XDR_FLOAT: case ASX_XDR_ENUM:
		ret = asx_xdr_get_u32(x, &w);
		if (!ret)
			memcpy(m, &w, 4);
		return ret;
	case ASX_XDR_HYPER: case ASX_XDR_UHYPER: case ASX_XDR_DOUBLE: {
		uint64_t v;

		ret = asx_xdr_get_u64(x, &v);
		if (!ret)
			memcpy(m, &v, 8);
		return ret;
	}
	}
	ret = asx_xdr_get_u32(x, &w);
	if (ret)
		return ret;
	ret = set_small(t, m, w);
	return ret ? asx__xdr_fail(x, ret) : 0;
}

static size_t mem_size(unsigned int t)
{
	switch (t) {
	case ASX_XDR_INT: case ASX_XDR_UINT: case ASX_XDR_FLOAT: case ASX_XDR_ENUM:
		return 4;
	case ASX_XDR_HYPER: case ASX_XDR_UHYPER: case ASX_XDR_DOUBLE:
		return 8;
	case ASX_XDR_BOOL:
		return sizeof(bool);
	case ASX_XDR_CHAR: case ASX_XDR_UCHAR:
		return 1;
	case ASX_XDR_SHORT: case ASX_XDR_USHORT:
		return sizeof(short);
	case ASX_XDR_LONG: case ASX_XDR_ULONG:
		return sizeof(long);
	}
	return 0;
}

/* @n elements of field @f's type at @m. */
static int code_elems(struct asx_xdr *x, const struct asx_xdr_field *f, unsigned char *m,
		      size_t n)
{
	bool enc = asx_xdr_op(x) == ASX_XDR_ENCODE;
	unsigned int t = f->type;
	size_t i, sz;
	int ret;

	switch (t) {
	case ASX_XDR_INT: case ASX_XDR_UINT: case ASX_XDR_FLOAT: case ASX_XDR_ENUM:
		return enc ? asx_xdr_put_u32_array(x, (const uint32_t *)m, n)
			   : asx_xdr_get_u32_array(x, (uint32_t *)m, n);
	case ASX_XDR_HYPER: case ASX_XDR_UHYPER: case ASX_XDR_DOUBLE:
		return enc ? asx_xdr_put_u64_array(x, (const uint64_t *)m, n)
			   : asx_xdr_get_u64_array(x, (uint64_t *)m, n);
	case ASX_XDR_STRUCT:
		return asx_xdr_records(x, f->sub.rec, m, n);
	case ASX_XDR_CUSTOM:
		for (i = 0; i < n; i++) {
			ret = f->sub.fn(x, m);
			if (ret)
				return asx__xdr_fail(x, ret);
		}
		return x->err_;
	}
	sz = mem_size(t);
	if (!sz)
		return asx__xdr_fail(x, -EINVAL);
	for (i = 0; i < n; i++, m += sz) {
		ret = enc ? put_scalar(x, t, m) : get_scalar(x, t, m);
		if (ret)
			return ret;
	}
	return 0;
}

static int code_union(struct asx_xdr *x, const struct asx_xdr_field *f, unsigned char *obj)
{
	const struct asx_xdr_union *u = f->sub.un;
	const struct asx_xdr_field *arm = u->dflt;
	int32_t *disc = (int32_t *)(obj + f->aux);
	size_t i;
	int ret;

	ret = asx_xdr_int(x, disc);
	if (ret)
		return ret;
	for (i = 0; i < u->narms; i++)
		if (u->arms[i].value == *disc) {
			arm = &u->arms[i].field;
			break;
		}
	if (!arm)
		return asx__xdr_fail(x, asx_xdr_op(x) == ASX_XDR_ENCODE ? -EINVAL : -EBADMSG);
	if (!arm->type)
		return 0;	/* void arm */
	return asx_xdr_field(x, arm, obj + f->offset);
}

/* How many pointer fields this thread is inside (a bound on the recursion). */
static _Thread_local unsigned int ptr_depth;

/* ASX_XDR_F_PTR: the presence bool, then the record *m points to. */
static int code_pointer(struct asx_xdr *x, const struct asx_xdr_field *f, void **m)
{
	struct asx_xdr_field g = *f;
	bool present = *m != NULL;
	int ret;

	ret = asx_xdr_bool(x, &present);	/* decode: > 1 is -EBADMSG */
	if (ret)
		return ret;
	if (!present) {
		*m = NULL;
		return 0;
	}
	if (!*m)			/* decode: the caller gave no storage */
		return asx__xdr_fail(x, -EMSGSIZE);
	if (ptr_depth >= ASX_XDR_PTR_DEPTH_MAX)
		return asx__xdr_fail(x, -EMSGSIZE);
	g.flags &= (uint16_t)~ASX_XDR_F_PTR;
	g.offset = 0;
	ptr_depth++;
	ret = asx_xdr_field(x, &g, *m);
	ptr_depth--;
	return ret;
}

/* Whether @rec has a pointer field, directly or in nested records and unions. */
static bool has_pointer(const struct asx_xdr_record *rec, unsigned int depth)
{
	size_t i, a;

	if (depth > ASX_XDR_PTR_DEPTH_MAX)
		return true;		/* absurd nesting: treat as unsafe */
	for (i = 0; i < rec->nfields; i++) {
		const struct asx_xdr_field *f = &rec->fields[i];

		if (f->flags & ASX_XDR_F_PTR)
			return true;
		if (f->type == ASX_XDR_STRUCT && has_pointer(f->sub.rec, depth + 1))
			return true;
		if (f->type != ASX_XDR_UNION)
			continue;
		for (a = 0; a < f->sub.un->narms; a++)
			if (f->sub.un->arms[a].field.type == ASX_XDR_STRUCT &&
			    (f->sub.un->arms[a].field.flags & ASX_XDR_F_PTR ||
			     has_pointer(f->sub.un->arms[a].field.sub.rec, depth + 1)))
				return true;
		if (f->sub.un->dflt && f->sub.un->dflt->type == ASX_XDR_STRUCT &&
		    (f->sub.un->dflt->flags & ASX_XDR_F_PTR ||
		     has_pointer(f->sub.un->dflt->sub.rec, depth + 1)))
			return true;
	}
	return false;
}

int asx_xdr_field(struct asx_xdr *x, const struct asx_xdr_field *f, void *objp)
{
	unsigned char *obj = objp, *m = obj + f->offset;
	bool enc = asx_xdr_op(x) == ASX_XDR_ENCODE;
	uint32_t n;
	int ret;

	if (x->st_ & ASX__XDR_BROKEN)
		return x->err_;
	if (f->flags & ASX_XDR_F_OPT) {
		bool *present = (bool *)(obj + f->aux);
		struct asx_xdr_field g = *f;

		ret = asx_xdr_bool(x, present);
		if (ret || !*present)
			return ret;
		g.flags &= (uint16_t)~ASX_XDR_F_OPT;
		return asx_xdr_field(x, &g, obj);
	}
	if (f->flags & ASX_XDR_F_PTR)
		return code_pointer(x, f, (void **)m);
	switch (f->type) {
	case ASX_XDR_OPAQUE:
		return enc ? asx_xdr_put_opaque(x, m, f->count) : asx_xdr_get_opaque(x, m, f->count);
	case ASX_XDR_VOPAQUE: {
		uint32_t *len = (uint32_t *)(obj + f->aux);

		return asx_xdr_bytes(x, m, len, f->count);
	}
	case ASX_XDR_STRING:
		return asx_xdr_string(x, (char *)m, f->count);
	case ASX_XDR_UNION:
		return code_union(x, f, obj);
	}
	if (!(f->flags & ASX_XDR_F_VAR))
		return code_elems(x, f, m, f->count);
	n = *(uint32_t *)(obj + f->aux);
	if (enc) {
		if (n > f->count)
			return asx__xdr_fail(x, -EMSGSIZE);
		ret = asx_xdr_put_u32(x, n);
	} else {
		ret = asx_xdr_get_count(x, &n, f->count, 4);
		if (!ret)
			*(uint32_t *)(obj + f->aux) = n;
	}
	return ret ? ret : code_elems(x, f, m, n);
}

/* ---- the record loops ---- */

/*
 * Wire size of a record made only of fields the loops below handle inline
 * (scalars, fixed opaque), or 0.  Computed once per call: when the window
 * holds a whole record, its fields are coded without bounds checks.
 */
static size_t fixed_wire(const struct asx_xdr_record *rec)
{
	size_t i, w = 0;

	for (i = 0; i < rec->nfields; i++) {
		const struct asx_xdr_field *f = &rec->fields[i];

		if (f->flags)
			return 0;
		if (f->type == ASX_XDR_OPAQUE) {
			w += f->count + asx__xdr_pad(f->count);
			continue;
		}
		if (f->count != 1)
			return 0;
		switch (f->type) {
		case ASX_XDR_HYPER: case ASX_XDR_UHYPER: case ASX_XDR_DOUBLE:
			w += 8;
			break;
		case ASX_XDR_INT: case ASX_XDR_UINT: case ASX_XDR_FLOAT: case ASX_XDR_ENUM:
		case ASX_XDR_CHAR: case ASX_XDR_UCHAR: case ASX_XDR_SHORT: case ASX_XDR_USHORT:
		case ASX_XDR_LONG: case ASX_XDR_ULONG: case ASX_XDR_BOOL:
			w += 4;
			break;
		default:
			return 0;
		}
	}
	return w;
}

/* One record of a fixed_wire() type into room known to be there; false if a
 * value is out of range (the checked loop then reports it). */
/*
 * No jump tables: an indirect jump per field mispredicts far more often
 * than a short tree of compares on the repeating field pattern.
 */
#if defined(__clang__)
#define NO_JUMP_TABLES
#else
#define NO_JUMP_TABLES __attribute__((optimize("no-jump-tables")))
#endif

static inline NO_JUMP_TABLES bool enc_fixed(unsigned char *p, const struct asx_xdr_field *f,
			     const struct asx_xdr_field *fe, const unsigned char *obj)
{
	for (; f < fe; f++) {
		const unsigned char *m = obj + f->offset;

		switch (f->type) {
		case ASX_XDR_INT: case ASX_XDR_UINT: case ASX_XDR_FLOAT: case ASX_XDR_ENUM: {
			uint32_t v;

			memcpy(&v, m, 4);
			st32(p, v);
			p += 4;
			break;
		}
		case ASX_XDR_HYPER: case ASX_XDR_UHYPER: case ASX_XDR_DOUBLE: {
			uint64_t v;

			memcpy(&v, m, 8);
			st64(p, v);
			p += 8;
			break;
		}
		case ASX_XDR_CHAR:
			st32(p, (uint32_t)(int32_t)*(const char *)m);
			p += 4;
			break;
		case ASX_XDR_UCHAR:
			st32(p, *m);
			p += 4;
			break;
		case ASX_XDR_SHORT:
			st32(p, (uint32_t)(int32_t)*(const short *)m);
			p += 4;
			break;
		case ASX_XDR_USHORT:
			st32(p, *(const unsigned short *)m);
			p += 4;
			break;
		case ASX_XDR_BOOL:
			st32(p, *(const bool *)m);
			p += 4;
			break;
		case ASX_XDR_LONG: {
			long v = *(const long *)m;

			if (unlikely(v != (int32_t)v))
				return false;
			st32(p, (uint32_t)v);
			p += 4;
			break;
		}
		case ASX_XDR_ULONG: {
			unsigned long v = *(const unsigned long *)m;

			if (unlikely(v > UINT32_MAX))
				return false;
			st32(p, (uint32_t)v);
			p += 4;
			break;
		}
		case ASX_XDR_OPAQUE: {
			size_t len = f->count, pad = asx__xdr_pad(len);

			if (pad)
				memset(p + len + pad - 4, 0, 4);
			copy_body(p, m, len);
			p += len + pad;
			break;
		}
		}
	}
	return true;
}

/* Decode one fixed_wire() record from bytes known to be there; false on a bad value. */
static inline NO_JUMP_TABLES bool dec_fixed(const unsigned char *p, const struct asx_xdr_field *f,
			     const struct asx_xdr_field *fe, unsigned char *obj)
{
	for (; f < fe; f++) {
		unsigned char *m = obj + f->offset;
		int32_t s;
		uint32_t w;

		switch (f->type) {
		case ASX_XDR_INT: case ASX_XDR_UINT: case ASX_XDR_FLOAT: case ASX_XDR_ENUM:
			w = ld32(p);
			memcpy(m, &w, 4);
			p += 4;
			break;
		case ASX_XDR_HYPER: case ASX_XDR_UHYPER: case ASX_XDR_DOUBLE: {
			uint64_t v = ld64(p);

			memcpy(m, &v, 8);
			p += 8;
			break;
		}
		case ASX_XDR_CHAR:
			s = (int32_t)ld32(p);
			if (unlikely(s != (char)s))
				return false;
			*(char *)m = (char)s;
			p += 4;
			break;
		case ASX_XDR_SHORT:
			s = (int32_t)ld32(p);
			if (unlikely(s != (short)s))
				return false;
			*(short *)m = (short)s;
			p += 4;
			break;
		case ASX_XDR_LONG:
			*(long *)m = (int32_t)ld32(p);
			p += 4;
			break;
		case ASX_XDR_OPAQUE: {
			size_t len = f->count;

			copy_body(m, p, len);
			p += len + asx__xdr_pad(len);
			break;
		}
		default:
			if (unlikely(set_small(f->type, m, ld32(p))))
				return false;
			p += 4;
			break;
		}
	}
	return true;
}


static NO_JUMP_TABLES int encode_records(struct asx_xdr *x, const struct asx_xdr_record *rec,
			  const unsigned char *obj, size_t n)
{
	const struct asx_xdr_field *f0 = rec->fields, *fe = f0 + rec->nfields, *f;
	size_t wire = fixed_wire(rec);
	int ret;

	for (; n; n--, obj += rec->size) {
		unsigned char *p = x->p, *end = x->end;

		if (wire && (size_t)(end - p) >= wire && likely(enc_fixed(p, f0, fe, obj))) {
			x->p = p + wire;
			continue;
		}

		for (f = f0; f < fe; f++) {
			const unsigned char *m = obj + f->offset;

			if (unlikely(f->flags || (f->count != 1 && f->type != ASX_XDR_OPAQUE)))
				goto slow;
			switch (f->type) {
			case ASX_XDR_INT: case ASX_XDR_UINT: case ASX_XDR_FLOAT: case ASX_XDR_ENUM: {
				uint32_t v;

				if (unlikely(end - p < 4))
					goto slow;
				memcpy(&v, m, 4);
				st32(p, v);
				p += 4;
				continue;
			}
			case ASX_XDR_HYPER: case ASX_XDR_UHYPER: case ASX_XDR_DOUBLE: {
				uint64_t v;

				if (unlikely(end - p < 8))
					goto slow;
				memcpy(&v, m, 8);
				st64(p, v);
				p += 8;
				continue;
			}
			case ASX_XDR_CHAR:
				if (unlikely(end - p < 4))
					goto slow;
				st32(p, (uint32_t)(int32_t)*(const char *)m);
				p += 4;
				continue;
			case ASX_XDR_SHORT:
				if (unlikely(end - p < 4))
					goto slow;
				st32(p, (uint32_t)(int32_t)*(const short *)m);
				p += 4;
				continue;
			case ASX_XDR_LONG: {
				long v = *(const long *)m;

				if (unlikely(end - p < 4 || v != (int32_t)v))
					goto slow;
				st32(p, (uint32_t)v);
				p += 4;
				continue;
			}
			case ASX_XDR_BOOL:
				if (unlikely(end - p < 4))
					goto slow;
				st32(p, *(const bool *)m);
				p += 4;
				continue;
			case ASX_XDR_OPAQUE: {
				size_t len = f->count, pad = asx__xdr_pad(len);

				if (unlikely((size_t)(end - p) < len + pad))
					goto slow;
				if (pad)	/* zero the last word; the data overwrites its head */
					memset(p + len + pad - 4, 0, 4);
				copy_body(p, m, len);
				p += len + pad;
				continue;
			}
			default:
				goto slow;
			}
slow:
			x->p = p;
			ret = asx_xdr_field(x, f, (void *)obj);
			if (ret)
				return ret;
			p = x->p;
			end = x->end;
		}
		x->p = p;
	}
	return 0;
}

static NO_JUMP_TABLES int decode_records(struct asx_xdr *x, const struct asx_xdr_record *rec,
			  unsigned char *obj, size_t n)
{
	const struct asx_xdr_field *f0 = rec->fields, *fe = f0 + rec->nfields, *f;
	size_t wire = fixed_wire(rec);
	int ret;

	for (; n; n--, obj += rec->size) {
		const unsigned char *p = x->p, *end = x->end;

		if (wire && (size_t)(end - p) >= wire && likely(dec_fixed(p, f0, fe, obj))) {
			x->p += wire;
			continue;
		}

		for (f = f0; f < fe; f++) {
			unsigned char *m = obj + f->offset;

			if (unlikely(f->flags || (f->count != 1 && f->type != ASX_XDR_OPAQUE)))
				goto slow;
			switch (f->type) {
			case ASX_XDR_INT: case ASX_XDR_UINT: case ASX_XDR_FLOAT: case ASX_XDR_ENUM: {
				uint32_t v;

				if (unlikely(end - p < 4))
					goto slow;
				v = ld32(p);
				memcpy(m, &v, 4);
				p += 4;
				continue;
			}
			case ASX_XDR_HYPER: case ASX_XDR_UHYPER: case ASX_XDR_DOUBLE: {
				uint64_t v;

				if (unlikely(end - p < 8))
					goto slow;
				v = ld64(p);
				memcpy(m, &v, 8);
				p += 8;
				continue;
			}
			case ASX_XDR_CHAR: case ASX_XDR_SHORT: case ASX_XDR_LONG: case ASX_XDR_BOOL:
			case ASX_XDR_UCHAR: case ASX_XDR_USHORT: case ASX_XDR_ULONG:
				if (unlikely(end - p < 4))
					goto slow;
				ret = set_small(f->type, m, ld32(p));
				if (unlikely(ret)) {
					x->p = (unsigned char *)p;
					return asx__xdr_fail(x, ret);
				}
				p += 4;
				continue;
			case ASX_XDR_OPAQUE: {
				size_t len = f->count, padded = len + asx__xdr_pad(len);

				if (unlikely((size_t)(end - p) < padded))
					goto slow;
				copy_body(m, p, len);
				p += padded;
				continue;
			}
			default:
				goto slow;
			}
slow:
			x->p = (unsigned char *)p;
			ret = asx_xdr_field(x, f, obj);
			if (ret)
				return ret;
			p = x->p;
			end = x->end;
		}
		x->p = (unsigned char *)p;
	}
	return 0;
}

int asx_xdr_records(struct asx_xdr *x, const struct asx_xdr_record *rec, void *objs, size_t n)
{
	int ret;

	switch (x->st_) {
	case ASX_XDR_ENCODE | ASX_XDR_MODE_XDR:
		return encode_records(x, rec, objs, n);
	case ASX_XDR_DECODE | ASX_XDR_MODE_XDR:
		return decode_records(x, rec, objs, n);
	case ASX_XDR_ENCODE | ASX_XDR_MODE_RAW:
	case ASX_XDR_DECODE | ASX_XDR_MODE_RAW:
		/* a pointer's value means nothing to the peer */
		if (n > SIZE_MAX / rec->size || has_pointer(rec, 0))
			return asx__xdr_fail(x, -EINVAL);
		ret = asx_xdr_op(x) == ASX_XDR_ENCODE ? asx_raw_put(x, objs, n * rec->size)
						      : asx_raw_get(x, objs, n * rec->size);
		return ret;
	}
	return x->err_ ? x->err_ : -EINVAL;
}
