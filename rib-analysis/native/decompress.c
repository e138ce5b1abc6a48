/* libbz2 and zlib driven directly: Python's bz2 module is ~25% slower than libbz2 alone on
 * RouteViews dumps (output-buffer management), which alone would cost the 2x budget. */
#define _GNU_SOURCE /* pipe2, F_SETPIPE_SZ */
#include "decompress.h"

#include <bzlib.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define IN_CHUNK (1u << 20)
#define OUT_CHUNK (1u << 20)

static int write_all(int fd, const uint8_t *p, size_t n) {
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1; /* EPIPE: the decoder stopped reading */
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Read more input; returns bytes read, 0 at EOF, -1 on error (recorded). */
static ssize_t refill(decompressor *z, uint8_t *in) {
    for (;;) {
        ssize_t r = read(z->in_fd, in, IN_CHUNK);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            z->failed = 1;
            z->fail_offset = z->compressed_read;
            snprintf(z->error, sizeof z->error, "read error: %s", strerror(errno));
            return -1;
        }
        z->compressed_read += (uint64_t)r;
        return r;
    }
}

static void fail(decompressor *z, uint64_t chunk_start, const char *what, int code) {
    z->failed = 1;
    z->fail_offset = chunk_start;
    snprintf(z->error, sizeof z->error, "%s (code %d)", what, code);
}

static void run_bzip2(decompressor *z, uint8_t *in, uint8_t *out) {
    bz_stream s;
    memset(&s, 0, sizeof s);
    int open = 0;
    uint64_t chunk_start = 0;
    for (;;) {
        if (s.avail_in == 0) {
            chunk_start = z->compressed_read;
            ssize_t r = refill(z, in);
            if (r < 0) break;
            if (r == 0) {
                z->truncated = open;
                break;
            }
            s.next_in = (char *)in;
            s.avail_in = (unsigned)r;
        }
        if (!open) {
            /* A new stream: first, or the next of a multi-stream file (pbzip2). */
            if (BZ2_bzDecompressInit(&s, 0, 0) != BZ_OK) {
                fail(z, chunk_start, "bzip2 initialisation failed", 0);
                break;
            }
            open = 1;
        }
        s.next_out = (char *)out;
        s.avail_out = OUT_CHUNK;
        int rc = BZ2_bzDecompress(&s);
        size_t got = OUT_CHUNK - s.avail_out;
        if (got && write_all(z->out_fd, out, got)) break;
        if (rc == BZ_STREAM_END) {
            BZ2_bzDecompressEnd(&s);
            open = 0;
        } else if (rc != BZ_OK) {
            fail(z, chunk_start, "damaged bzip2 data", rc);
            break;
        }
    }
    if (open) BZ2_bzDecompressEnd(&s);
}

static void run_gzip(decompressor *z, uint8_t *in, uint8_t *out) {
    z_stream s;
    memset(&s, 0, sizeof s);
    int open = 0;
    uint64_t chunk_start = 0;
    for (;;) {
        if (s.avail_in == 0) {
            chunk_start = z->compressed_read;
            ssize_t r = refill(z, in);
            if (r < 0) break;
            if (r == 0) {
                z->truncated = open;
                break;
            }
            s.next_in = in;
            s.avail_in = (unsigned)r;
        }
        if (!open) {
            /* 15 + 16: gzip framing only; a new member after the end of the previous one. */
            if (inflateInit2(&s, 15 + 16) != Z_OK) {
                fail(z, chunk_start, "zlib initialisation failed", 0);
                break;
            }
            open = 1;
        }
        s.next_out = out;
        s.avail_out = OUT_CHUNK;
        int rc = inflate(&s, Z_NO_FLUSH);
        size_t got = OUT_CHUNK - s.avail_out;
        if (got && write_all(z->out_fd, out, got)) break;
        if (rc == Z_STREAM_END) {
            inflateEnd(&s);
            open = 0;
        } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
            fail(z, chunk_start, s.msg ? s.msg : "damaged gzip data", rc);
            break;
        }
    }
    if (open) inflateEnd(&s);
}

static void *run(void *arg) {
    decompressor *z = arg;
    /* A write to a pipe the decoder has closed raises SIGPIPE in this thread; libraries in the
     * host process (mrtparse does) may have restored its default action, which would kill the
     * whole interpreter. Blocked here, write() just fails with EPIPE. */
    sigset_t pipe_only;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, NULL);
    uint8_t *in = malloc(IN_CHUNK), *out = malloc(OUT_CHUNK);
    if (!in || !out) {
        z->failed = 1;
        snprintf(z->error, sizeof z->error, "out of memory");
    } else if (z->kind == COMPRESSION_BZIP2) {
        run_bzip2(z, in, out);
    } else {
        run_gzip(z, in, out);
    }
    free(in);
    free(out);
    close(z->out_fd);
    return NULL;
}

int decompress_start(decompressor *z, int in_fd, int kind, int *read_fd) {
    int fds[2];
    memset(z, 0, sizeof *z);
    if (pipe2(fds, O_CLOEXEC)) return -1;
    fcntl(fds[1], F_SETPIPE_SZ, 1 << 20); /* fewer wake-ups; best effort */
    z->in_fd = in_fd;
    z->out_fd = fds[1];
    z->kind = kind;
    int rc = pthread_create(&z->thread, NULL, run, z);
    if (rc) {
        close(fds[0]);
        close(fds[1]);
        errno = rc;
        return -1;
    }
    *read_fd = fds[0];
    return 0;
}

void decompress_join(decompressor *z) { pthread_join(z->thread, NULL); }
