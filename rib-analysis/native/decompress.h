/* Decompression thread: reads a compressed file descriptor and writes the plain bytes into a
 * pipe, so the decoder (another thread) works while the next block is being decompressed. */
#ifndef DECOMPRESS_H
#define DECOMPRESS_H

#include <pthread.h>
#include <stdint.h>

enum { COMPRESSION_NONE = 0, COMPRESSION_GZIP = 1, COMPRESSION_BZIP2 = 2 };

typedef struct {
    int in_fd, out_fd;
    int kind;
    pthread_t thread;
    /* results, valid after decompress_join */
    uint64_t compressed_read;
    int truncated;      /* input ended before the end-of-stream marker */
    int failed;         /* damaged data (or a read error) */
    uint64_t fail_offset;  /* compressed offset of the input chunk it failed in */
    char error[160];
} decompressor;

/* Start the thread; *read_fd receives the pipe end to decode from. 0 ok, -1 errno set. */
int decompress_start(decompressor *z, int in_fd, int kind, int *read_fd);
/* Wait for the thread (close the read end first if the decoder stopped early). */
void decompress_join(decompressor *z);

#endif
