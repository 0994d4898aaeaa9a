/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ASX internals, layer 2: the registry of ASX modules by name (registry.c),
 * beside the exported asx_register_module() and asx_unregister_module().
 *
 * Copyright (C) 2026 ASX developers
 */
#ifndef _ASX_REGISTRY_H
#define _ASX_REGISTRY_H

#include "asx_api.h"

struct seq_file;

int asx_registry_check(const char *name, size_t hiwat, size_t lowat);
struct asx_modinfo *asx_find_module(const char *name);
void asx_put_module(struct asx_modinfo *mi);
void asx_registry_show(struct seq_file *m);

/*
 * Autopush lists by driver name (count 0: none); see struct asx_autopush.
 * @mods: @count (up to ASX_AUTOPUSH_MAX) names of ASX_NAME_MAX bytes each.
 */
int asx_autopush_set(const char *drv, u32 count, const char *mods);
u32 asx_autopush_get(const char *drv, char *mods);

#endif /* _ASX_REGISTRY_H */
