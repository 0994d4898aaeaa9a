// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * link.c - Multiplexors configured in svc.conf (link.h):
 *
 *	mux Router
 *	link Router Codec		# every band without its own link
 *	link Router Fast band 1		# messages of band 1
 *
 * A mux is a Multiplexor (<asx/mux.h>) keyed by a message's band, and one
 * upper Stream, the one its name gives (asx_svc_stream(), asxctl stream),
 * bound to band 0.  Down, a message put there goes down the Stream linked
 * for its band, else down the one linked without a band; up, what reaches
 * the head of a linked Stream goes up the upper Stream if its band is 0,
 * and is freed and counted (asx_mux_stats' unroutable) otherwise.
 *
 * A mux's links follow the transaction: they are made in prepare(), after
 * every other step (so they name the Streams as the transaction leaves
 * them), each one logged; a failure unlinks what was linked and links
 * back what was taken off.  A Stream the configuration removes or
 * replaces while a mux keeps a link to it is refused.  Calls conf.c only.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <asx/mux.h>
#include <asx/stream.h>

#include "svc/link.h"

static int band_key(const struct asx_msg *m, void *key, void *arg)
{
	(void)arg;
	*(uint8_t *)key = m->band;
	return 0;
}

static int link_one(struct asx_mux *mux, const struct asx__svc_link *l)
{
	uint8_t k = (uint8_t)l->band;

	return asx_mux_link(mux, l->s, l->band == ASX__SVC_BAND_ANY ? NULL : &k);
}

static bool same_link(const struct asx__svc_link *a, const struct asx__svc_link *b)
{
	return !strcmp(a->stream, b->stream) && a->band == b->band && a->s == b->s;
}

static void say_band(char *buf, size_t n, int band)
{
	if (band == ASX__SVC_BAND_ANY)
		snprintf(buf, n, "any band");
	else
		snprintf(buf, n, "band %d", band);
}

/* @mux's link to @stream (@e's) names no Stream the transaction leaves: why (@r). */
static int say_unresolved(struct asx__svc_plan *p, const struct asx__svc_ent *e, int r,
			  const char *mux, const char *stream)
{
	return asx__svc_say(p, e, r, r == -ENOENT ?
			    "mux '%s': cannot link '%s': no stream '%s' (a Stream a mux links cannot be removed while the link stays)" :
			    "mux '%s': cannot link '%s': %s is not a stream",
			    mux, stream, stream);
}

/* The links @st's mux is to have, each with its Stream resolved. */
static int wanted(struct asx__svc_plan *p, struct asx__svc_step *st)
{
	const struct asx__svc_ent *e = st->def;
	size_t n = e ? e->nmods : st->old->nlinks;
	const char *mux = st->name;

	st->links = calloc(n + 1, sizeof(*st->links));
	st->linked_new = calloc(n + 1, sizeof(*st->linked_new));
	if (!st->links || !st->linked_new)
		return asx__svc_say(p, e, -ENOMEM, "out of memory");
	st->nlinks = n;
	for (size_t i = 0; i < n; i++) {
		struct asx__svc_link *l = &st->links[i];
		int r;

		if (e) {
			strcpy(l->stream, e->mods[i].name);
			l->band = e->mods[i].band;
		} else {
			strcpy(l->stream, st->old->links[i].stream);
			l->band = st->old->links[i].band;
		}
		r = p->resolve(p, l->stream, &l->s);
		if (r)
			return say_unresolved(p, e ? &e->mods[i] : NULL, r, mux, l->stream);
	}
	return 0;
}

static void links_undo(struct asx__svc_step *st, struct asx_mux *mux)
{
	for (size_t i = st->nlinks; i-- > 0;)
		if (st->linked_new[i]) {
			(void)asx_mux_unlink(mux, st->links[i].s);
			st->linked_new[i] = false;
		}
	for (size_t i = st->nunlinked; i-- > 0;)
		(void)link_one(mux, &st->unlinked[i]);	/* was linked: the key is free again */
	free(st->unlinked);
	st->unlinked = NULL;
	st->nunlinked = 0;
}

static int link_new(struct asx__svc_plan *p, struct asx__svc_step *st, struct asx_mux *mux,
		    const struct asx__svc_link *have, size_t nhave)
{
	for (size_t i = 0; i < st->nlinks; i++) {
		const struct asx__svc_link *l = &st->links[i];
		bool there = false;
		char b[16];
		int r;

		for (size_t k = 0; k < nhave && !there; k++)
			there = same_link(&have[k], l);
		if (there)
			continue;
		r = link_one(mux, l);
		if (r) {
			say_band(b, sizeof(b), l->band);
			return asx__svc_say(p, st->def ? &st->def->mods[i] : NULL, r,
					    "mux '%s': cannot link '%s' (%s): %s%s", st->name,
					    l->stream, b, strerror(-r),
					    r == -EBUSY ? " (it is linked under another mux)" : "");
		}
		st->linked_new[i] = true;
	}
	return 0;
}

static int mux_start(struct asx__svc_plan *p, struct asx__svc_step *st)
{
	const struct asx__svc_ent *e = st->def;
	struct asx_svc *s = calloc(1, sizeof(*s));
	uint8_t zero = 0;
	int r;

	if (!s)
		return asx__svc_say(p, e, -ENOMEM, "out of memory");
	strcpy(s->name, e->name);
	s->kind = ASX__SVC_MUXK;
	s->state = ASX_SVC_ACTIVE;
	r = asx_mux_create(&s->mux, ASX_MAP_MUTEX, 1, band_key, NULL);
	if (!r)
		r = asx_mux_open_upper(s->mux, &zero, NULL, &s->stream);
	if (r) {
		asx__svc_mux_stop(s);
		return asx__svc_say(p, e, r, "mux '%s': cannot make it: %s", e->name, strerror(-r));
	}
	r = link_new(p, st, s->mux, NULL, 0);
	if (r) {
		asx__svc_mux_stop(s);	/* unlinks what was linked */
		memset(st->linked_new, 0, st->nlinks * sizeof(*st->linked_new));
		return r;
	}
	st->fresh = s;
	return 0;
}

int asx__svc_mux_prepare(struct asx__svc_plan *p, struct asx__svc_step *st)
{
	struct asx_svc *old = st->old;
	int r = wanted(p, st);

	if (!r && st->act == START)
		return mux_start(p, st);
	if (r)
		return r;
	/* a running mux: take off the links that go or change, then make the new ones */
	st->unlinked = calloc(old->nlinks + 1, sizeof(*st->unlinked));
	if (!st->unlinked)
		return asx__svc_say(p, st->def, -ENOMEM, "out of memory");
	for (size_t k = 0; k < old->nlinks; k++) {
		bool stays = false;

		for (size_t i = 0; i < st->nlinks && !stays; i++)
			stays = same_link(&old->links[k], &st->links[i]);
		if (stays)
			continue;
		r = asx_mux_unlink(old->mux, old->links[k].s);
		if (r) {
			asx__svc_say(p, st->def, r, "mux '%s': cannot unlink '%s': %s", st->name,
				     old->links[k].stream, strerror(-r));
			break;
		}
		st->unlinked[st->nunlinked++] = old->links[k];
	}
	if (!r)
		r = link_new(p, st, old->mux, old->links, old->nlinks);
	if (r)
		links_undo(st, old->mux);
	return r;
}

void asx__svc_mux_undo(struct asx__svc_step *st)
{
	if (st->fresh) {
		asx__svc_mux_stop(st->fresh);
		st->fresh = NULL;
	} else if (st->old && st->links) {
		links_undo(st, st->old->mux);
	}
	free(st->links);
	free(st->linked_new);
	st->links = NULL;
	st->linked_new = NULL;
	st->nlinks = 0;
}

void asx__svc_mux_commit(struct asx__svc_step *st)
{
	struct asx_svc *s = st->fresh ? st->fresh : st->old;

	free(s->links);
	s->links = st->links;
	s->nlinks = st->nlinks;
	st->links = NULL;
	st->nlinks = 0;
	free(st->linked_new);
	st->linked_new = NULL;
	free(st->unlinked);
	st->unlinked = NULL;
	st->nunlinked = 0;
}

void asx__svc_mux_stop(struct asx_svc *s)
{
	if (s->mux)
		asx_mux_destroy(s->mux);	/* unlinks every lower, closes the upper */
	free(s->links);
	free(s);
}

int asx__svc_mux_check(struct asx__svc_plan *p, const struct asx__svc_step *st)
{
	const struct asx__svc_ent *e = st->def;
	size_t n = e ? e->nmods : st->old->nlinks;

	for (size_t i = 0; i < n; i++) {
		const char *name = e ? e->mods[i].name : st->old->links[i].stream;
		struct asx_stream *s;
		int r = p->resolve(p, name, &s);

		if (r)
			return say_unresolved(p, e ? &e->mods[i] : NULL, r, st->name, name);
	}
	return 0;
}

struct asx_svc *asx__svc_mux_holding(struct asx_svc_repo *repo, const struct asx_stream *s)
{
	for (struct asx_svc *m = repo->svcs; m; m = m->next)
		for (size_t i = 0; m->kind == ASX__SVC_MUXK && i < m->nlinks; i++)
			if (m->links[i].s == s)
				return m;
	return NULL;
}

size_t asx__svc_mux_describe(const struct asx_svc *s, char *buf, size_t len)
{
	struct asx_mux_stats ms;
	size_t n;

	asx_mux_stats(s->mux, &ms);
	n = (size_t)snprintf(buf, len, "Multiplexor by band, %llu down, %llu up, %llu unroutable; links:",
			     (unsigned long long)ms.down, (unsigned long long)ms.up,
			     (unsigned long long)ms.unroutable);
	if (!s->nlinks && n < len)
		n += (size_t)snprintf(buf + n, len - n, " none");
	for (size_t i = 0; i < s->nlinks && n < len; i++) {
		char b[16];

		say_band(b, sizeof(b), s->links[i].band);
		n += (size_t)snprintf(buf + n, len - n, " %s(%s)", s->links[i].stream, b);
	}
	return n;
}
