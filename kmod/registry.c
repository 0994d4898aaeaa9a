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

/**
 * asx_register_module() - make a module available to ASX_IOC_PUSH
 * @mi: the module; must stay valid until asx_unregister_module()
 *
 * Return: 0, -EINVAL for a bad name or missing put procedure, -EEXIST if the
 * name is taken.
 */
int asx_register_module(struct asx_modinfo *mi)
{
	size_t len;
	int ret = 0;

	if (!mi || !mi->name || !mi->rinit.put || !mi->winit.put)
		return -EINVAL;
	len = strnlen(mi->name, ASX_NAME_MAX);
	if (!len || len >= ASX_NAME_MAX)
		return -EINVAL;
	if (mi->hiwat > ASX_MAX_HIWAT || mi->lowat > mi->hiwat)
		return -EINVAL;

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

void asx_registry_show(struct seq_file *m)
{
	struct asx_modinfo *mi;

	mutex_lock(&asx_registry_lock);
	list_for_each_entry(mi, &asx_modules, list)
		seq_printf(m, "module %s %s\n", mi->name, module_name(mi->owner));
	mutex_unlock(&asx_registry_lock);
}
