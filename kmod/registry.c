// SPDX-License-Identifier: GPL-2.0
/*
 * ASX registry: modules by name, added by asx.ko and by other kernel modules.
 *
 * Copyright (C) 2026 ASX developers
 */

#include "registry.h"

#include <linux/seq_file.h>
#include <linux/string.h>

static LIST_HEAD(asx_modules);
static DEFINE_MUTEX(asx_registry_lock);

static struct asx_modinfo *find_locked(const char *name)
{
	struct asx_modinfo *mi;

	lockdep_assert_held(&asx_registry_lock);
	list_for_each_entry(mi, &asx_modules, list) {
		if (!strcmp(mi->name, name))
			return mi;
	}
	return NULL;
}

/*
 * What a module or a driver (drvreg.c) registers with: a name of 1 to
 * ASX_NAME_MAX - 1 bytes and water marks in range. 0 or -EINVAL.
 */
int asx_registry_check(const char *name, size_t hiwat, size_t lowat)
{
	size_t len;

	if (!name)
		return -EINVAL;
	len = strnlen(name, ASX_NAME_MAX);
	if (!len || len >= ASX_NAME_MAX)
		return -EINVAL;
	if (hiwat > ASX_MAX_HIWAT || lowat > hiwat)
		return -EINVAL;
	return 0;
}

/**
 * asx_register_module() - make a module available to ASX_IOC_PUSH
 * @mi: the module; must stay valid until asx_unregister_module()
 *
 * Return: 0, -EINVAL for a bad name or missing put procedure, -EEXIST if the
 * name is taken.
 */
int asx_register_module(struct asx_modinfo *mi)
{
	int ret = 0;

	if (!mi || !mi->rinit.put || !mi->winit.put)
		return -EINVAL;
	ret = asx_registry_check(mi->name, mi->hiwat, mi->lowat);
	if (ret)
		return ret;

	mutex_lock(&asx_registry_lock);
	if (find_locked(mi->name))
		ret = -EEXIST;
	else
		list_add_tail(&mi->list, &asx_modules);
	mutex_unlock(&asx_registry_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(asx_register_module);

/*
 * Removes @mi. Pushed instances hold a reference on mi->owner, so a module
 * that unregisters from its exit function has none left.
 */
void asx_unregister_module(struct asx_modinfo *mi)
{
	mutex_lock(&asx_registry_lock);
	list_del_init(&mi->list);
	mutex_unlock(&asx_registry_lock);
}
EXPORT_SYMBOL_GPL(asx_unregister_module);

/*
 * Looks @name up and pins its owner; release with asx_put_module(). asx.ko
 * does not pin itself: its open files do, and asx_exit() waits for the
 * Streams still being freed, so rmmod works as soon as the last one closes.
 */
struct asx_modinfo *asx_find_module(const char *name)
{
	struct asx_modinfo *mi;

	mutex_lock(&asx_registry_lock);
	mi = find_locked(name);
	if (mi && mi->owner != THIS_MODULE && !try_module_get(mi->owner))
		mi = NULL;
	mutex_unlock(&asx_registry_lock);
	return mi;
}

void asx_put_module(struct asx_modinfo *mi)
{
	if (mi->owner != THIS_MODULE)
		module_put(mi->owner);
}

/*
 * Autopush: per driver name, the modules a Stream gets pushed when it gets
 * that driver.  A few drivers, a few modules each: a small table under its
 * own lock; asx_ap_used lets an open skip it when nothing is set.
 */
struct asx_ap_entry {
	char drv[ASX_NAME_MAX];
	u32 count;		/* 0: a free slot */
	char mods[ASX_AUTOPUSH_MAX][ASX_NAME_MAX];
};

static struct asx_ap_entry asx_ap[ASX_AUTOPUSH_DRIVERS];
static DEFINE_MUTEX(asx_ap_lock);
static int asx_ap_used;

static struct asx_ap_entry *ap_find(const char *drv)
{
	unsigned int i;

	lockdep_assert_held(&asx_ap_lock);
	for (i = 0; i < ARRAY_SIZE(asx_ap); i++)
		if (asx_ap[i].count && !strcmp(asx_ap[i].drv, drv))
			return &asx_ap[i];
	return NULL;
}

int asx_autopush_set(const char *drv, u32 count, const char *mods)
{
	struct asx_ap_entry *e;
	struct asx_modinfo *mi;
	unsigned int i;
	int ret = 0;

	if (count > ASX_AUTOPUSH_MAX)
		return -EINVAL;
	for (i = 0; i < count; i++) {
		mi = asx_find_module(mods + i * ASX_NAME_MAX);
		if (!mi)
			return -ENOENT;
		asx_put_module(mi);
	}
	mutex_lock(&asx_ap_lock);
	e = ap_find(drv);
	for (i = 0; !e && count && i < ARRAY_SIZE(asx_ap); i++)
		if (!asx_ap[i].count)
			e = &asx_ap[i];
	if (!e) {
		ret = count ? -ENOSPC : -ENOENT;
		goto out;
	}
	if (!count && e->count)
		WRITE_ONCE(asx_ap_used, asx_ap_used - 1);
	else if (count && !e->count)
		WRITE_ONCE(asx_ap_used, asx_ap_used + 1);
	strscpy(e->drv, drv, sizeof(e->drv));
	for (i = 0; i < count; i++)
		strscpy(e->mods[i], mods + i * ASX_NAME_MAX, ASX_NAME_MAX);
	e->count = count;
out:
	mutex_unlock(&asx_ap_lock);
	return ret;
}

/* @drv's list into @mods (ASX_AUTOPUSH_MAX entries); its length, 0 for none. */
u32 asx_autopush_get(const char *drv, char *mods)
{
	struct asx_ap_entry *e;
	u32 count = 0;

	if (!READ_ONCE(asx_ap_used))
		return 0;
	mutex_lock(&asx_ap_lock);
	e = ap_find(drv);
	if (e) {
		memcpy(mods, e->mods, sizeof(e->mods));
		count = e->count;
	}
	mutex_unlock(&asx_ap_lock);
	return count;
}

void asx_registry_show(struct seq_file *m)
{
	struct asx_modinfo *mi;
	unsigned int i, k;

	mutex_lock(&asx_registry_lock);
	list_for_each_entry(mi, &asx_modules, list)
		seq_printf(m, "module %s %s\n", mi->name, module_name(mi->owner));
	mutex_unlock(&asx_registry_lock);
	mutex_lock(&asx_ap_lock);
	for (i = 0; i < ARRAY_SIZE(asx_ap); i++) {
		if (!asx_ap[i].count)
			continue;
		seq_printf(m, "autopush %s", asx_ap[i].drv);
		for (k = 0; k < asx_ap[i].count; k++)
			seq_printf(m, " %s", asx_ap[i].mods[k]);
		seq_putc(m, '\n');
	}
	mutex_unlock(&asx_ap_lock);
}
