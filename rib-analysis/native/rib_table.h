/* Aggregation of RIB entries into the few tables classification needs.
 *
 * Memory is proportional to distinct prefixes, ASNs, (prefix, origin) and (origin, upstream)
 * pairs, never to RIB entries: a full table with many peers costs about as much as one peer. */
#ifndef RIB_TABLE_H
#define RIB_TABLE_H

#include <stddef.h>
#include <stdint.h>

#define AS_ORIGIN 1u        /* last ASN of a cleaned path */
#define AS_FIRST_HOP 2u     /* first ASN of a path of two or more: the collector's peer */
#define AS_MIDDLE 4u        /* any other non-origin position */

typedef struct {
    uint32_t asn;
    uint8_t flags;
    uint8_t provider;     /* set by rib_finish */
    /* Shortest prefix length it originates per family, 255 = none; set by rib_finish. Here they
     * fill the padding before n_pi, so rows stay 40 bytes for the per-entry as_mark path. */
    uint8_t block_v4, block_v6;
    uint32_t n_pi, n_pa;  /* prefixes originated, by PA test; set by rib_finish */
    uint32_t up_off, up_cnt;  /* into rib_t.ups; set by rib_finish */
    uint32_t single, multi;   /* providers: single- and multihomed stubs; set by rib_finish */
    uint64_t degree_sum;      /* providers: sum of the homing degrees of their multihomed stubs */
} as_row;

enum { ADDR_PI = 0, ADDR_PA = 1, ADDR_BOTH = 2 };

typedef struct {
    uint64_t ases, stubs, providers, first_hop_only;
    uint64_t single[3], multi[3]; /* by ADDR_* */
    uint64_t no_upstream;
    uint64_t max_degree;
} as_summary;

typedef struct {
    uint64_t v4, v6;            /* distinct prefixes: today's table */
    uint64_t mast_v4, mast_v6;  /* originated by at least one provider */
    uint64_t agg_v4, agg_v6;    /* ... for which no shorter prefix of that provider covers it */
    uint64_t no_origin;         /* only seen with an empty path (after cleaning) */
} grt_counts;

typedef struct rib rib_t;

rib_t *rib_new(void);
void rib_free(rib_t *rib);

/* Id of the prefix (host bits cleared), inserting it; -1 when out of memory. */
int64_t rib_prefix(rib_t *rib, int v6, const uint8_t *addr, unsigned len);

/* One RIB entry: path already cleaned (no sets, no prepending); `seen` when this exact path was
 * added before (only the (prefix, origin) pair may be new), `origin_known` when this prefix was
 * already given this origin. 0 ok, -1 out of memory. */
int rib_add_path(rib_t *rib, uint32_t prefix_id, const uint32_t *path, size_t n, int seen,
                 int origin_known);

/* Classify every ASN, test every stub prefix for PA, count stubs per provider.
 * 0 ok, -1 out of memory. */
int rib_finish(rib_t *rib, int first_hop_is_transit, grt_counts *grt, as_summary *sum);

/* Stubs by homing degree: hist[d] for d in 0..sum->max_degree, filled by the caller's array. */
void rib_homing(const rib_t *rib, uint64_t *hist, size_t n);

size_t rib_as_count(const rib_t *rib);
const as_row *rib_as_rows(const rib_t *rib);
const uint32_t *rib_upstreams(const rib_t *rib);

#endif
