// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * XDR (Documentation/xdr.rst): a record declared once, its exact RFC 4506
 * bytes, the round trip; a table record with a string, a variable
 * array, variable opaque, inline optional data and a custom field;
 * optional data by pointer; sticky
 * errors on truncated and invalid input; a record-marked channel over a
 * pipe.
 */
#include <stdbool.h>
#include <string.h>
#include <asx/xdr.h>
#include "outsider.h"

struct foo {
	int32_t i;
	short s;
	unsigned char tag[3];
};
#define FOO_FIELDS(X) X(INT, i) X(SHORT, s) X(OPAQUE, tag)
ASX_XDR_DEFINE(foo, struct foo, FOO_FIELDS)

struct point { int32_t x, y; };
ASX_XDR_RECORD_STATIC(point_rec, struct point,
	ASX_XDR_FIELD(struct point, x, ASX_XDR_INT),
	ASX_XDR_FIELD(struct point, y, ASX_XDR_INT));

struct note {
	char name[8];
	uint32_t vals[4];
	uint32_t nvals;
	unsigned char data[6];
	uint32_t ndata;
	bool has_at;
	struct point at;
	uint32_t twice;				/* custom: sent halved */
};

/* A custom field's codec gets the member (here &note.twice), in either direction. */
static int halved(struct asx_xdr *x, void *member)
{
	uint32_t *v = member, w = *v / 2;
	int r = asx_xdr_uint(x, &w);

	if (!r && asx_xdr_op(x) == ASX_XDR_DECODE)
		*v = w * 2;
	return r;
}

/* optional data by pointer: RFC 4506 "point *at" */
struct located {
	int32_t id;
	struct point *at;
};
ASX_XDR_RECORD_STATIC(located_rec, struct located,
	ASX_XDR_FIELD(struct located, id, ASX_XDR_INT),
	ASX_XDR_FIELD_POINTER(struct located, at, point_rec));

ASX_XDR_RECORD_STATIC(note_rec, struct note,
	ASX_XDR_FIELD_STRING(struct note, name),
	ASX_XDR_FIELD_VARRAY(struct note, vals, ASX_XDR_UINT, nvals),
	ASX_XDR_FIELD_BYTES(struct note, data, ndata),
	ASX_XDR_FIELD_OPTIONAL(struct note, at, point_rec, has_at),
	ASX_XDR_FIELD_CUSTOM(struct note, twice, halved));

static const unsigned char foo_wire[] = {
	0, 0, 0, 1,  0xff, 0xff, 0xff, 0xfe,  'x', 'y', 'z', 0,		/* foo 1 */
	0xff, 0xff, 0xff, 0xff,  0, 0, 0, 7,  'a', 'b', 'c', 0,		/* foo 2 */
};

int main(void)
{
	struct foo f[2] = { { 1, -2, "xyz" }, { -1, 7, "abc" } }, g[2];
	struct note n = { .name = "hi", .vals = { 5, 6 }, .nvals = 2, .data = "\1\2\3",
			  .ndata = 3, .has_at = true, .at = { -3, 4 }, .twice = 84 }, m;
	unsigned char buf[256];
	struct asx_xdr x;
	struct asx_xdr_chan *out, *in;
	size_t len;
	int p[2];

	watchdog(60);
	/* declared once: exact bytes out, the same values back */
	asx_xdr_mem_encoder(&x, buf, sizeof(buf));
	CHECK0(foo_xdr_encode(&x, f, 2));
	CHECK(asx_xdr_pos(&x) == sizeof(foo_wire) && memcmp(buf, foo_wire, sizeof(foo_wire)) == 0);
	asx_xdr_fini(&x);
	asx_xdr_mem_decoder(&x, buf, sizeof(foo_wire));
	CHECK0(foo_xdr_decode(&x, g, 2));
	CHECK(g[0].i == 1 && g[0].s == -2 && memcmp(g[1].tag, "abc", 3) == 0 && g[1].i == -1);
	asx_xdr_fini(&x);

	/* truncated: -EBADMSG, and it sticks */
	asx_xdr_mem_decoder(&x, buf, sizeof(foo_wire) - 1);
	CHECK(foo_xdr_decode(&x, g, 2) == -EBADMSG);
	CHECK(asx_xdr_error(&x) == -EBADMSG && foo_xdr_decode(&x, g, 1) == -EBADMSG);
	asx_xdr_fini(&x);
	/* a short out of range is invalid input */
	asx_xdr_mem_decoder(&x, (const unsigned char[]){ 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0 }, 12);
	CHECK(foo_xdr_decode(&x, g, 1) == -EBADMSG);
	asx_xdr_fini(&x);

	/* the table record, through a growing buffer */
	CHECK0(asx_xdr_mem_grow_encoder(&x, 16, 4096));
	CHECK0(asx_xdr_record(&x, &note_rec, &n));
	n.has_at = false;
	CHECK0(asx_xdr_record(&x, &note_rec, &n));
	{
		const void *data = asx_xdr_mem_data(&x, &len);
		struct asx_xdr d;

		asx_xdr_mem_decoder(&d, data, len);
		memset(&m, 0xa5, sizeof(m));
		CHECK0(asx_xdr_record(&d, &note_rec, &m));
		CHECK(strcmp(m.name, "hi") == 0 && m.nvals == 2 && m.vals[1] == 6);
		CHECK(m.ndata == 3 && memcmp(m.data, "\1\2\3", 3) == 0);
		CHECK(m.has_at && m.at.x == -3 && m.at.y == 4 && m.twice == 84);
		CHECK0(asx_xdr_record(&d, &note_rec, &m));
		CHECK(!m.has_at && m.twice == 84 && asx_xdr_pos(&d) == len);
		asx_xdr_fini(&d);
	}
	asx_xdr_fini(&x);
	/* more elements than the array holds: refused both ways */
	n.nvals = 5;
	asx_xdr_mem_encoder(&x, buf, sizeof(buf));
	CHECK(asx_xdr_record(&x, &note_rec, &n) == -EMSGSIZE);
	asx_xdr_fini(&x);

	/* a pointer: present then absent; decoded into storage we provide */
	{
		struct point where = { 5, -6 }, store;
		struct located l[2] = { { 1, &where }, { 2, NULL } };
		struct located r[2] = { { 0, &store }, { 0, &store } };
		static const unsigned char wire[] = { 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 5,
						      0xff, 0xff, 0xff, 0xfa, 0, 0, 0, 2, 0, 0, 0, 0 };

		asx_xdr_mem_encoder(&x, buf, sizeof(buf));
		CHECK0(asx_xdr_records(&x, &located_rec, l, 2));
		CHECK(asx_xdr_pos(&x) == sizeof(wire) && memcmp(buf, wire, sizeof(wire)) == 0);
		asx_xdr_fini(&x);
		asx_xdr_mem_decoder(&x, buf, sizeof(wire));
		CHECK0(asx_xdr_records(&x, &located_rec, r, 2));
		CHECK(r[0].at == &store && store.x == 5 && store.y == -6 && r[1].at == NULL);
		asx_xdr_fini(&x);
		buf[7] = 2;					/* neither FALSE nor TRUE */
		r[0].at = &store;
		asx_xdr_mem_decoder(&x, buf, sizeof(wire));
		CHECK(asx_xdr_record(&x, &located_rec, &r[0]) == -EBADMSG);
		asx_xdr_fini(&x);
	}

	/* a record-marked channel over a pipe */
	CHECK(pipe(p) == 0);
	CHECK0(asx_xdr_chan_create(&out, p[1], NULL));
	CHECK0(asx_xdr_chan_create(&in, p[0], NULL));
	CHECK0(foo_xdr_encode(asx_xdr_chan_out(out), f, 2));
	CHECK0(asx_xdr_chan_end_record(out, true));
	close(p[1]);
	CHECK(asx_xdr_chan_next_record(in) == 1);
	CHECK0(foo_xdr_decode(asx_xdr_chan_in(in), g, 2));
	CHECK(asx_xdr_chan_record_done(in) && g[1].s == 7);
	CHECK(asx_xdr_chan_next_record(in) == 0);		/* end of file between records */
	asx_xdr_chan_destroy(out);
	asx_xdr_chan_destroy(in);
	close(p[0]);
	puts("xdr: ok");
	return 0;
}
