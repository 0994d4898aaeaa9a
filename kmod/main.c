// SPDX-License-Identifier: GPL-2.0
/*
 * ASX: the /dev/asx misc device. Every open() makes a new Stream.
 *
 * Copyright (C) 2026 ASX developers
 */

#include "driver.h"
#include "main.h"
#include "sa.h"

#include <linux/init.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/stringify.h>

#define ASX_MODULE_VERSION	__stringify(ASX_VERSION_MAJOR) "." \
				__stringify(ASX_VERSION_MINOR) "." \
				__stringify(ASX_VERSION_PATCH)

static int asx_open(struct inode *inode, struct file *file)
{
	struct asx_stream *st;

	int ret;

	st = asx_stream_new(&asx_drv_loop);
	if (!st)
		return -ENOMEM;
	ret = asx_stream_autopush(st, asx_drv_loop.name);
	if (ret) {
		asx_stream_destroy(st);
		return ret;
	}
	file->private_data = st;
	return nonseekable_open(inode, file);
}

static int asx_release(struct inode *inode, struct file *file)
{
	struct asx_stream *st = file->private_data;

	/*
	 * SVR4's close waits for the write side to drain (I_SETCLTIME). Only a
	 * pipe end's messages reach another reader: a loop Stream's would come
	 * back up this one, a null Stream keeps none. Not with O_NONBLOCK, as
	 * in SVR4, nor in a kernel thread (a file a worker closes).
	 */
	if (st->drv == &asx_drv_pipe && !(file->f_flags & O_NONBLOCK) &&
	    !(current->flags & PF_KTHREAD))
		asx_stream_drain(st);
	asx_stream_destroy(st);
	return 0;
}

const struct file_operations asx_fops = {
	.owner		= THIS_MODULE,
	.open		= asx_open,
	.release	= asx_release,
	.read		= asx_stream_read,
	.write		= asx_stream_write,
	.poll		= asx_stream_poll,
	.unlocked_ioctl	= asx_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
};

static struct miscdevice asx_miscdev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "asx",
	.fops	= &asx_fops,
	.mode	= 0666,
};

static struct asx_modinfo *const asx_builtin[] = {
	&asx_mod_pass, &asx_mod_count, &asx_mod_frame, &asx_mod_csum, &asx_mod_hold,
	&asx_mod_tioctl,
};

static void unregister_builtin(unsigned int n)
{
	while (n--)
		asx_unregister_module(asx_builtin[n]);
}

static int __init asx_init(void)
{
	unsigned int i;
	int ret;

	ret = asx_msg_init();
	if (ret)
		return ret;
	ret = asx_selftest();
	if (ret)
		goto err_msg_exit;
	asx_wq = alloc_workqueue("asx_srv", 0, 0);
	if (!asx_wq) {
		ret = -ENOMEM;
		goto err_msg_exit;
	}
	for (i = 0; i < ARRAY_SIZE(asx_builtin); i++) {
		ret = asx_register_module(asx_builtin[i]);
		if (ret)
			goto err_unregister;
	}
	ret = asx_proc_init();
	if (ret)
		goto err_unregister;
	ret = misc_register(&asx_miscdev);
	if (ret) {
		pr_err("cannot register /dev/asx: %d\n", ret);
		goto err_proc_exit;
	}

	pr_info("ASX %s loaded\n", ASX_MODULE_VERSION);
	return 0;

err_proc_exit:
	asx_proc_exit();
err_unregister:
	unregister_builtin(i);
	destroy_workqueue(asx_wq);
err_msg_exit:
	asx_msg_exit();
	return ret;
}

static void __exit asx_exit(void)
{
	misc_deregister(&asx_miscdev);
	asx_sa_exit();
	asx_proc_exit();
	unregister_builtin(ARRAY_SIZE(asx_builtin));
	/* Closed Streams are freed by RCU work: let it be queued, then drain it. */
	rcu_barrier();
	destroy_workqueue(asx_wq);
	/* Every Stream is gone (each held a module reference), so are their messages. */
	WARN_ON(asx_nr_msgs() || asx_nr_dblks());
	asx_msg_exit();
}

module_init(asx_init);
module_exit(asx_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("ASX developers");
MODULE_DESCRIPTION("ASX kernel Streams and scheduler activations (/dev/asx)");
MODULE_VERSION(ASX_MODULE_VERSION);
