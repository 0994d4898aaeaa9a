// SPDX-License-Identifier: GPL-2.0
/*
 * ASX: the /dev/asx misc device.
 *
 * Copyright (C) 2026 ASX developers
 */

#include <linux/build_bug.h>
#include <linux/fs.h>
#include <linux/init.h>
#include <linux/miscdevice.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/stringify.h>
#include <linux/uaccess.h>

#include <linux/asx.h>

#define ASX_MODULE_VERSION	__stringify(ASX_VERSION_MAJOR) "." \
				__stringify(ASX_VERSION_MINOR) "." \
				__stringify(ASX_VERSION_PATCH)

static_assert(sizeof(struct asx_version) == ASX_VERSION_SIZE_VER0);

/* Features this build of the module supports (enum asx_feature bits). */
#define ASX_FEATURES	0ULL

/*
 * The size encoded in an ioctl command is the size of the struct when the
 * command was published; the real size travels in the struct's size field, so
 * commands are matched with their size bits masked out.
 */
#define ASX_IOC_BASE(cmd)	((cmd) & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT))

static long asx_ioc_version(struct asx_version __user *uarg)
{
	struct asx_version ver;
	u32 usize;
	int ret;

	if (get_user(usize, &uarg->size))
		return -EFAULT;
	if (usize < ASX_VERSION_SIZE_VER0)
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;

	ret = copy_struct_from_user(&ver, sizeof(ver), uarg, usize);
	if (ret)
		return ret;
	if (ver.reserved[0] || ver.reserved[1])
		return -EINVAL;

	ver.size = min_t(u32, usize, sizeof(ver));
	ver.major = ASX_VERSION_MAJOR;
	ver.minor = ASX_VERSION_MINOR;
	ver.patch = ASX_VERSION_PATCH;
	ver.features = ASX_FEATURES;

	if (copy_to_user(uarg, &ver, ver.size))
		return -EFAULT;
	return 0;
}

static long asx_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (ASX_IOC_BASE(cmd)) {
	case ASX_IOC_BASE(ASX_IOC_VERSION):
		return asx_ioc_version(uarg);
	default:
		return -ENOTTY;
	}
}

static int asx_open(struct inode *inode, struct file *file)
{
	return nonseekable_open(inode, file);
}

static int asx_release(struct inode *inode, struct file *file)
{
	return 0;
}

static const struct file_operations asx_fops = {
	.owner		= THIS_MODULE,
	.open		= asx_open,
	.release	= asx_release,
	.unlocked_ioctl	= asx_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= no_llseek,
};

static struct miscdevice asx_miscdev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "asx",
	.fops	= &asx_fops,
	.mode	= 0666,
};

static int __init asx_init(void)
{
	int ret;

	ret = misc_register(&asx_miscdev);
	if (ret) {
		pr_err("cannot register /dev/asx: %d\n", ret);
		return ret;
	}

	pr_info("ASX %s loaded\n", ASX_MODULE_VERSION);
	return 0;
}

static void __exit asx_exit(void)
{
	misc_deregister(&asx_miscdev);
}

module_init(asx_init);
module_exit(asx_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("ASX developers");
MODULE_DESCRIPTION("ASX kernel Streams and scheduler activations (/dev/asx)");
MODULE_VERSION(ASX_MODULE_VERSION);
