// SPDX-License-Identifier: GPL-2.0
/*
 * Drivers registered by other kernel modules (asx_register_driver()): the
 * tail of a Stream that SETDRV chooses by name, as it chooses loop or null.
 *
 * Each registration gets a struct asx_driver of its own, so the rest of
 * asx.ko treats it as it treats the built-in drivers; its open and release
 * hooks give the registrant's open and close procedures a Stream's private
 * data, and hold the registrant while a Stream has the driver: its owner
 * module (so it cannot be unloaded) and a count of users (so it cannot be
 * unregistered: asx_unregister_driver() fails with -EBUSY instead).
 *
 * Copyright (C) 2026 ASX developers
 */

#include "driver.h"
#include "registry.h"

#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>

struct asx_drvreg {
	struct asx_driver drv;
	struct asx_drvinfo *di;
	struct list_head list;
	unsigned int users;	/* Streams that have it, under asx_drvreg_lock */
};

static LIST_HEAD(asx_drvregs);
static DEFINE_MUTEX(asx_drvreg_lock);	/* a leaf, like asx_registry_lock */

static struct asx_drvreg *drvreg_of(const struct asx_driver *drv)
{
	return container_of(drv, struct asx_drvreg, drv);
}

static struct asx_drvreg *find_locked(const char *name)
{
	struct asx_drvreg *r;

	lockdep_assert_held(&asx_drvreg_lock);
	list_for_each_entry(r, &asx_drvregs, list) {
		if (!strcmp(r->drv.name, name))
			return r;
	}
	return NULL;
}

/*
 * SETDRV, under st->cfg, the Stream still a loop: its private data, then the
 * registrant's open; the water marks once that succeeded.
 */
static int drvreg_open(const struct asx_driver *drv, struct asx_stream *st)
{
	struct asx_drvinfo *di = drvreg_of(drv)->di;
	void *priv = NULL;
	int ret = 0;

	lockdep_assert_held(&st->cfg);
	if (di->priv_size) {
		priv = kzalloc(di->priv_size, GFP_KERNEL_ACCOUNT);
		if (!priv)
			return -ENOMEM;
	}
	/* the loop's procedures use no priv: setting it early is safe */
	st->drq.priv = priv;
	st->dwq.priv = priv;
	if (di->open)
		ret = di->open(&st->drq, &st->dwq);
	if (ret) {
		st->drq.priv = NULL;
		st->dwq.priv = NULL;
		kfree(priv);
		return ret;
	}
	if (di->hiwat) {
		asx_queue_set_wm(&st->drq, di->hiwat, di->lowat);
		asx_queue_set_wm(&st->dwq, di->hiwat, di->lowat);
	}
	return 0;
}

/* The Stream is being freed, its queues quiet and empty. */
static void drvreg_release(struct asx_stream *st)
{
	struct asx_drvinfo *di = drvreg_of(st->drv)->di;

	if (di->close)
		di->close(&st->drq, &st->dwq);
	kfree(st->drq.priv);
	asx_drvreg_put(st->drv);
}

/**
 * asx_register_driver() - make a driver available to ASX_IOC_SETDRV
 * @di: the driver; must stay valid until asx_unregister_driver()
 *
 * Return: 0; -EINVAL for a bad name, water marks or a missing write put
 * procedure; -EEXIST if a built-in or registered driver has the name, or
 * it names a unit of the mux driver ("mux.N");
 * -ENOMEM.
 */
int asx_register_driver(struct asx_drvinfo *di)
{
	struct asx_drvreg *r;
	int ret;

	if (!di || !di->winit.put)
		return -EINVAL;
	ret = asx_registry_check(di->name, di->hiwat, di->lowat);
	if (ret)
		return ret;
	/* "mux.N" names a unit of the mux driver (SETDRV, mux.c) */
	if (asx_builtin_driver(di->name) || asx_mux_unit_number(di->name) >= 0)
		return -EEXIST;
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	r->di = di;
	r->drv.name = di->name;
	r->drv.rinit = di->rinit;
	if (!r->drv.rinit.put)
		r->drv.rinit.put = asx_drv_rput;
	r->drv.winit = di->winit;
	r->drv.attach = asx_drv_loop_attach;
	r->drv.open = drvreg_open;
	r->drv.release = drvreg_release;

	mutex_lock(&asx_drvreg_lock);
	if (find_locked(di->name)) {
		ret = -EEXIST;
	} else {
		list_add_tail(&r->list, &asx_drvregs);
		di->reg = r;
	}
	mutex_unlock(&asx_drvreg_lock);
	if (ret)
		kfree(r);
	return ret;
}
EXPORT_SYMBOL_GPL(asx_register_driver);

/**
 * asx_unregister_driver() - withdraw a driver registered by asx_register_driver()
 * @di: the driver
 *
 * Open Streams keep their driver: while one has it (or a SETDRV is choosing
 * it) this fails and changes nothing. A Stream pins the driver's owner, so a
 * module that unregisters from its exit function always succeeds.
 *
 * Return: 0; -EBUSY while a Stream has the driver; -ENOENT if @di is not
 * registered.
 */
int asx_unregister_driver(struct asx_drvinfo *di)
{
	struct asx_drvreg *r;
	int ret = 0;

	mutex_lock(&asx_drvreg_lock);
	r = di->reg;
	if (!r) {
		ret = -ENOENT;
	} else if (r->users) {
		ret = -EBUSY;
	} else {
		list_del(&r->list);
		di->reg = NULL;
	}
	mutex_unlock(&asx_drvreg_lock);
	if (!ret)
		kfree(r);
	return ret;
}
EXPORT_SYMBOL_GPL(asx_unregister_driver);

/* Looks @name up among the registered drivers and pins it (owner and users). */
const struct asx_driver *asx_drvreg_get(const char *name)
{
	struct asx_drvreg *r;

	mutex_lock(&asx_drvreg_lock);
	r = find_locked(name);
	if (r && try_module_get(r->di->owner))
		r->users++;
	else
		r = NULL;
	mutex_unlock(&asx_drvreg_lock);
	return r ? &r->drv : NULL;
}

void asx_drvreg_put(const struct asx_driver *drv)
{
	struct asx_drvreg *r = drvreg_of(drv);
	struct module *owner = r->di->owner;

	mutex_lock(&asx_drvreg_lock);
	r->users--;
	mutex_unlock(&asx_drvreg_lock);
	/* last: the owner may go (and unregister @r) as soon as this returns */
	module_put(owner);
}

bool asx_drvreg_known(const char *name)
{
	bool known;

	mutex_lock(&asx_drvreg_lock);
	known = find_locked(name);
	mutex_unlock(&asx_drvreg_lock);
	return known;
}

void asx_drvreg_show(struct seq_file *m)
{
	struct asx_drvreg *r;

	mutex_lock(&asx_drvreg_lock);
	list_for_each_entry(r, &asx_drvregs, list)
		seq_printf(m, "driver %s %s %u\n", r->drv.name, module_name(r->di->owner),
			   r->users);
	mutex_unlock(&asx_drvreg_lock);
}
