// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * replay.c - run a libFuzzer target over files without libFuzzer.
 *
 * Usage: replay_NAME FILE|DIR...   Each file is passed once to
 * LLVMFuzzerTestOneInput; a crash or sanitizer report fails the run.
 * `make check` replays the committed corpus this way under ASan + UBSan.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path, unsigned long *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long len;

	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "replay: %s: cannot size\n", path);
		fclose(f);
		return -1;
	}
	/* an exact-size heap copy, so ASan sees any read past the input */
	buf = malloc(len ? (size_t)len : 1);
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		fprintf(stderr, "replay: %s: read failed\n", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)len);
	free(buf);
	(*n)++;
	return 0;
}

static int replay_path(const char *path, unsigned long *n)
{
	struct dirent *de;
	struct stat st;
	char sub[4096];
	int ret = 0;
	DIR *d;

	if (stat(path, &st)) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return replay_file(path, n);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name) >= sizeof(sub)) {
			fprintf(stderr, "replay: path too long under %s\n", path);
			ret = -1;
			continue;
		}
		if (replay_path(sub, n))
			ret = -1;
	}
	closedir(d);
	return ret;
}

int main(int argc, char **argv)
{
	unsigned long n = 0;
	int i, ret = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (i = 1; i < argc; i++)
		if (replay_path(argv[i], &n))
			ret = 1;
	printf("replay: %lu inputs\n", n);
	if (!n)
		ret = 1;
	return ret;
}
