/* Streaming MRT decoder (RFC 6396 TABLE_DUMP and TABLE_DUMP_V2, RFC 8050 ADD-PATH) feeding
 * rib_table. Reads a file descriptor to EOF; holds at most one record plus one read buffer. */
#ifndef MRT_DECODE_H
#define MRT_DECODE_H

#include <stdint.h>

#include "rib_table.h"

#define MRT_REASON_MAX 200

typedef struct {
    uint64_t bytes;          /* consumed from the descriptor */
    uint64_t records;        /* MRT records with a sane header */
    uint64_t rib_records;    /* RIB records decoded (V2 RIB_* and legacy TABLE_DUMP) */
    uint64_t entries;        /* RIB entries (prefix, peer) decoded */
    uint64_t entries_no_path;  /* entries whose cleaned path is empty */
    uint64_t peer_tables;    /* PEER_INDEX_TABLE records */
    uint64_t peers;          /* peers in the last PEER_INDEX_TABLE */
    uint64_t skipped_other;  /* records of other types (BGP4MP, OSPF...) */
    uint64_t skipped_afi;    /* multicast, RIB_GENERIC: not part of the unicast table */
    uint64_t bad_records;    /* skipped as malformed (skip_bad only) */
    uint64_t resyncs;        /* times the decoder searched for the next sane header */
    uint64_t resync_bytes;   /* bytes passed over while searching */
    int stopped;             /* 1: stopped at the first bad record (no skip_bad) */
    int interrupted;         /* the interrupt callback asked to stop */
    int out_of_memory;
    int io_errno;
    uint64_t bad_offset;     /* first bad record, byte offset in the MRT stream */
    char bad_reason[MRT_REASON_MAX];
    int partial_tail;        /* the stream ended inside a record */
    uint64_t tail_offset, tail_bytes;
} mrt_stats;

/* Decode everything readable from fd into rib. `interrupt` (may be NULL) is polled every few MB;
 * a non-zero answer stops decoding. Returns 0 when the stream was read to EOF. */
int mrt_decode_fd(rib_t *rib, int fd, int skip_bad, mrt_stats *st, int (*interrupt)(void));

/* Decode an in-memory stream (for the fuzz target and tests). */
int mrt_decode_buf(rib_t *rib, const uint8_t *data, uint64_t len, int skip_bad, mrt_stats *st);

#endif
