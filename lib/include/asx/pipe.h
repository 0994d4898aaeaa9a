/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * asx/pipe.h - IPC SAP pipes and FIFOs.
 *
 * A pipe has two typed ends: you can only read a struct asx_pipe_reader
 * and only write a struct asx_pipe_writer.  FIFOs (named pipes) open into
 * the same two types.  For a bidirectional stream pipe that also passes
 * descriptors (the papers' SPIPE), see asx_lsock_stream_pair() in
 * <asx/sock.h>.  Conventions as in sock.h: close-on-exec, EINTR retried,
 * no SIGPIPE (a write to a pipe without readers gives -EPIPE), absolute
 * CLOCK_MONOTONIC deadlines (NULL: for ever), -ETIMEDOUT.
 */
#ifndef ASX_PIPE_H
#define ASX_PIPE_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>
#include <asx/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct asx_pipe_reader { int fd; };	/* private: use asx_pipe_reader_handle() */
struct asx_pipe_writer { int fd; };

static inline int asx_pipe_reader_handle(const struct asx_pipe_reader *r) { return r->fd; }
static inline int asx_pipe_writer_handle(const struct asx_pipe_writer *w) { return w->fd; }

/* pipe2(O_CLOEXEC). */
ASX_API int asx_pipe_open(struct asx_pipe_reader *r, struct asx_pipe_writer *w);

/* One read (0 at end of file) / the _n form looping until @len or EOF. */
ASX_API ssize_t asx_pipe_read(struct asx_pipe_reader *r, void *buf, size_t len,
			      const struct timespec *deadline);
ASX_API ssize_t asx_pipe_read_n(struct asx_pipe_reader *r, void *buf, size_t len,
				const struct timespec *deadline, size_t *done);
ASX_API ssize_t asx_pipe_write(struct asx_pipe_writer *w, const void *buf, size_t len,
			       const struct timespec *deadline);
ASX_API ssize_t asx_pipe_write_n(struct asx_pipe_writer *w, const void *buf, size_t len,
				 const struct timespec *deadline, size_t *done);
ASX_API int asx_pipe_reader_close(struct asx_pipe_reader *r);
ASX_API int asx_pipe_writer_close(struct asx_pipe_writer *w);

/* mkfifo(@path, @mode); an existing FIFO at @path is fine, another file is -EEXIST. */
ASX_API int asx_fifo_make(const char *path, unsigned int mode);
/* Open the read end without waiting for a writer (reads see EOF until one comes). */
ASX_API int asx_fifo_open_reader(struct asx_pipe_reader *r, const char *path);
/* Open the write end, waiting until @deadline for a reader: -ETIMEDOUT. */
ASX_API int asx_fifo_open_writer(struct asx_pipe_writer *w, const char *path,
				 const struct timespec *deadline);

#ifdef __cplusplus
}
#endif
#endif /* ASX_PIPE_H */
