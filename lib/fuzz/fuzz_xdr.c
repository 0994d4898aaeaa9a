// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * fuzz_xdr.c - libFuzzer target for the XDR decoders.
 *
 * The input is decoded as a sequence of records (scalars, arrays, variable
 * arrays, opaque, bytes, strings, optional data, a union, nested records)
 * three ways: from one memory buffer, from a message chain whose block
 * sizes come from the first input byte, and (input permitting) as RFC 5531
 * records read from a pipe through the buffered channel.  Memory and
 * message-chain decoding must agree exactly (same result, same values,
 * same position).  Whatever decodes is encoded again and must decode to
 * the same values.  Sanitizers catch any read outside the input.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <asx/msg.h>
#include <asx/xdr.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct pt {
	int32_t x, y;
};

ASX_XDR_RECORD_STATIC(pt_rec, struct pt,
	ASX_XDR_FIELD(struct pt, x, ASX_XDR_INT),
	ASX_XDR_FIELD(struct pt, y, ASX_XDR_INT));

struct shape {
	int32_t kind;
	union {
		struct pt p;
		double r;
		char name[9];
	} u;
};

static const struct asx_xdr_arm shape_arms[] = {
	{ 1, { .type = ASX_XDR_STRUCT, .count = 1, .sub.rec = &pt_rec } },
	{ 2, { .type = ASX_XDR_DOUBLE, .count = 1 } },
	{ 3, { .type = ASX_XDR_STRING, .count = 9 } },
	{ 4, { .type = 0 } },
};
static const struct asx_xdr_union shape_un = { .narms = 4, .arms = shape_arms };

struct rec {
	uint64_t id;
	short s;
	char c;
	bool b;
	float f[3];
	double d[2];
	int32_t v[6];
	uint32_t nv;
	unsigned char blob[5];
	unsigned char bytes[24];
	uint32_t nbytes;
	char name[10];
	bool has_pt;
	struct pt pt;
	struct shape shape;
	struct pt pts[2];
	uint32_t npts;
};

ASX_XDR_RECORD_STATIC(rec_rec, struct rec,
	ASX_XDR_FIELD(struct rec, id, ASX_XDR_UHYPER),
	ASX_XDR_FIELD(struct rec, s, ASX_XDR_SHORT),
	ASX_XDR_FIELD(struct rec, c, ASX_XDR_CHAR),
	ASX_XDR_FIELD(struct rec, b, ASX_XDR_BOOL),
	ASX_XDR_FIELD_ARRAY(struct rec, f, ASX_XDR_FLOAT),
	ASX_XDR_FIELD_ARRAY(struct rec, d, ASX_XDR_DOUBLE),
	ASX_XDR_FIELD_VARRAY(struct rec, v, ASX_XDR_INT, nv),
	ASX_XDR_FIELD_OPAQUE(struct rec, blob),
	ASX_XDR_FIELD_BYTES(struct rec, bytes, nbytes),
	ASX_XDR_FIELD_STRING(struct rec, name),
	ASX_XDR_FIELD_OPTIONAL(struct rec, pt, pt_rec, has_pt),
	ASX_XDR_FIELD_UNION(struct rec, shape.u, shape.kind, shape_un),
	{ .offset = offsetof(struct rec, pts), .type = ASX_XDR_STRUCT, .flags = ASX_XDR_F_VAR,
	  .count = 2, .aux = offsetof(struct rec, npts), .sub.rec = &pt_rec });

#define the_rec() (&rec_rec)

#define MAXREC 16

/* The bytes XDR carries of @r (unused array tails are not carried). */
static void canon(struct rec *r)
{
	struct rec c;

	memset(&c, 0, sizeof(c));
	c.id = r->id;
	c.s = r->s;
	c.c = r->c;
	c.b = r->b;
	memcpy(c.f, r->f, sizeof(c.f));
	memcpy(c.d, r->d, sizeof(c.d));
	c.nv = r->nv;
	memcpy(c.v, r->v, r->nv * 4);
	memcpy(c.blob, r->blob, 5);
	c.nbytes = r->nbytes;
	memcpy(c.bytes, r->bytes, r->nbytes);
	memcpy(c.name, r->name, strlen(r->name));
	c.has_pt = r->has_pt;
	if (r->has_pt)
		c.pt = r->pt;
	c.shape.kind = r->shape.kind;
	if (c.shape.kind == 1)
		c.shape.u.p = r->shape.u.p;
	else if (c.shape.kind == 2)
		memcpy(&c.shape.u.r, &r->shape.u.r, 8);
	else if (c.shape.kind == 3)
		memcpy(c.shape.u.name, r->shape.u.name, strlen(r->shape.u.name));
	c.npts = r->npts;
	memcpy(c.pts, r->pts, r->npts * sizeof(struct pt));
	*r = c;
}

/* Decode records one by one until an error; returns how many decoded. */
static int decode_all(struct asx_xdr *x, struct rec *out, int *err)
{
	int n;

	for (n = 0; n < MAXREC; n++) {
		memset(&out[n], 0, sizeof(out[n]));
		*err = asx_xdr_record(x, the_rec(), &out[n]);
		if (*err)
			break;
		canon(&out[n]);
	}
	return n;
}

static struct asx_msg *chain_of(const uint8_t *data, size_t size, unsigned int step)
{
	struct asx_msg *head = NULL;
	size_t off = 0, k = 0;

	do {
		size_t len = (size - off) < step ? size - off : step;
		struct asx_msg *m = asx_msg_alloc(len, ASX_MSG_DATA);

		if (!m) {
			asx_msg_free_chain(head);
			return NULL;
		}
		if (len)
			asx_msg_append(m, data + off, len);
		if (head)
			asx_msg_link(head, m);
		else
			head = m;
		off += len;
		/* an empty block now and then */
		if (++k % 3 == 0) {
			struct asx_msg *e = asx_msg_alloc(0, ASX_MSG_DATA);

			if (e)
				asx_msg_link(head, e);
		}
	} while (off < size);
	return head;
}

static void check_primitives(const uint8_t *data, size_t size)
{
	unsigned char buf[64];
	char s[16];
	uint32_t len, n;
	int32_t iv[20];
	struct asx_xdr x;
	bool b;

	asx_xdr_mem_decoder(&x, data, size);
	asx_xdr_get_bytes(&x, buf, sizeof(buf), &len);
	asx_xdr_mem_decoder(&x, data, size);
	asx_xdr_get_string(&x, s, sizeof(s));
	asx_xdr_mem_decoder(&x, data, size);
	if (!asx_xdr_get_count(&x, &n, 20, 4))
		asx_xdr_get_i32_array(&x, iv, n);
	asx_xdr_mem_decoder(&x, data, size);
	asx_xdr_get_bool(&x, &b);
	asx_xdr_mem_decoder(&x, data, size);
	asx_xdr_off(&x);
	asx_raw_get(&x, buf, size < sizeof(buf) ? size : sizeof(buf));
}

static void check_chan(const uint8_t *data, size_t size)
{
	ASX_OPTS(struct asx_xdr_chan_opts, o, .recvsize = 64, .max_record = 4096);
	struct asx_xdr_chan *c;
	static struct rec r;
	int p[2], i;

	if (size > 60000 || pipe(p))
		return;
	if (write(p[1], data, size) != (ssize_t)size) {
		close(p[0]);
		close(p[1]);
		return;
	}
	close(p[1]);
	c = NULL;
	(void)asx_xdr_chan_create(&c, p[0], &o);
	for (i = 0; c && i < 64 && asx_xdr_chan_next_record(c) == 1; i++)
		while (!asx_xdr_record(asx_xdr_chan_in(c), the_rec(), &r))
			;
	asx_xdr_chan_destroy(c);
	close(p[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rec a[MAXREC], b[MAXREC], c[MAXREC];
	struct asx_xdr x, y;
	struct asx_msg *m;
	int na, nb, ea, eb, i;
	uint64_t pos;

	if (size < 1)
		return 0;
	/* first byte: block size of the chain; the rest is the XDR input */
	{
		unsigned int step = 1 + data[0] % 17;

		data++;
		size--;
		asx_xdr_mem_decoder(&x, data, size);
		asx_xdr_set_limit(&x, 1000);
		na = decode_all(&x, a, &ea);
		pos = asx_xdr_pos(&x);

		m = chain_of(data, size, step);
		if (m) {
			asx_xdr_msg_decoder(&y, m);
			asx_xdr_set_limit(&y, 1000);
			nb = decode_all(&y, b, &eb);
			if (na != nb || ea != eb || memcmp(a, b, sizeof(a[0]) * (size_t)na))
				abort();
			if (!ea && asx_xdr_pos(&y) != pos)
				abort();
			asx_msg_free_chain(m);
		}
	}
	if (ea != -EBADMSG && ea != -EMSGSIZE && ea != 0)
		abort();	/* decoders report only these */

	/* whatever decoded re-encodes and decodes to the same values */
	if (na) {
		size_t len;
		void *enc;

		if (asx_xdr_mem_grow_encoder(&y, 16, 1 << 20))
			return 0;
		for (i = 0; i < na; i++)
			if (asx_xdr_record(&y, the_rec(), &a[i]))
				abort();
		enc = asx_xdr_mem_data(&y, &len);
		if (len > pos)
			abort();	/* the canonical form is never longer */
		asx_xdr_mem_decoder(&x, enc, len);
		for (i = 0; i < na; i++) {
			memset(&c[i], 0, sizeof(c[i]));
			if (asx_xdr_record(&x, the_rec(), &c[i]))
				abort();
			canon(&c[i]);
		}
		if (memcmp(a, c, sizeof(a[0]) * (size_t)na))
			abort();
		asx_xdr_fini(&y);
	}
	check_primitives(data, size);
	check_chan(data, size);
	return 0;
}
