/* Open-addressing hash tables (linear probing, power-of-two sizes, load <= 1/2): the per-entry
 * path does a handful of probes and no allocation except when a table doubles. */
#include "rib_table.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    uint8_t addr[16];
    uint8_t len;
    uint8_t v6;
    uint8_t has_provider;
} prefix_row;

/* Set of non-zero 64-bit keys. */
typedef struct {
    uint64_t *slots;
    size_t cap, n;
} key_set;

struct rib {
    /* ASN -> row index + 1 (0 = empty slot); ASN 0 never reaches here (cleaned out). */
    uint32_t *as_keys;
    uint32_t *as_vals;
    size_t as_cap;
    as_row *rows;
    size_t n_rows, rows_cap;

    /* prefix -> row index + 1 */
    uint32_t *pfx_slots;
    size_t pfx_cap;
    prefix_row *pfx;
    size_t n_pfx, pfx_rows_cap;

    key_set origins;    /* (prefix id + 1) << 32 | origin ASN */
    key_set upstreams;  /* origin ASN << 32 | upstream ASN */

    uint32_t *ups;      /* upstream ASNs of each row, by as_row.up_off */
};

static inline uint64_t mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

static int key_set_init(key_set *s, size_t cap) {
    s->slots = calloc(cap, sizeof *s->slots);
    s->cap = cap;
    s->n = 0;
    return s->slots ? 0 : -1;
}

static void key_set_put_slot(uint64_t *slots, size_t cap, uint64_t key) {
    size_t i = mix64(key) & (cap - 1);
    while (slots[i] && slots[i] != key) i = (i + 1) & (cap - 1);
    slots[i] = key;
}

static int key_set_add(key_set *s, uint64_t key) {
    size_t i = mix64(key) & (s->cap - 1);
    while (s->slots[i]) {
        if (s->slots[i] == key) return 0;
        i = (i + 1) & (s->cap - 1);
    }
    if (2 * (s->n + 1) > s->cap) {
        size_t ncap = s->cap * 2;
        uint64_t *ns = calloc(ncap, sizeof *ns);
        if (!ns) return -1;
        for (size_t j = 0; j < s->cap; j++)
            if (s->slots[j]) key_set_put_slot(ns, ncap, s->slots[j]);
        free(s->slots);
        s->slots = ns;
        s->cap = ncap;
        key_set_put_slot(s->slots, s->cap, key);
    } else {
        s->slots[i] = key;
    }
    s->n++;
    return 0;
}

rib_t *rib_new(void) {
    rib_t *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->as_cap = 1u << 16;
    r->as_keys = calloc(r->as_cap, sizeof *r->as_keys);
    r->as_vals = calloc(r->as_cap, sizeof *r->as_vals);
    r->rows_cap = 1u << 14;
    r->rows = malloc(r->rows_cap * sizeof *r->rows);
    r->pfx_cap = 1u << 17;
    r->pfx_slots = calloc(r->pfx_cap, sizeof *r->pfx_slots);
    r->pfx_rows_cap = 1u << 16;
    r->pfx = malloc(r->pfx_rows_cap * sizeof *r->pfx);
    if (!r->as_keys || !r->as_vals || !r->rows || !r->pfx_slots || !r->pfx ||
        key_set_init(&r->origins, 1u << 17) || key_set_init(&r->upstreams, 1u << 16)) {
        rib_free(r);
        return NULL;
    }
    return r;
}

void rib_free(rib_t *r) {
    if (!r) return;
    free(r->as_keys);
    free(r->as_vals);
    free(r->rows);
    free(r->pfx_slots);
    free(r->pfx);
    free(r->origins.slots);
    free(r->upstreams.slots);
    free(r->ups);
    free(r);
}

static size_t as_slot(const uint32_t *keys, size_t cap, uint32_t asn) {
    size_t i = mix64(asn) & (cap - 1);
    while (keys[i] && keys[i] != asn) i = (i + 1) & (cap - 1);
    return i;
}

static as_row *as_find(const rib_t *r, uint32_t asn) {
    size_t i = as_slot(r->as_keys, r->as_cap, asn);
    return r->as_keys[i] ? &r->rows[r->as_vals[i] - 1] : NULL;
}

static int as_mark(rib_t *r, uint32_t asn, uint8_t flag) {
    size_t i = as_slot(r->as_keys, r->as_cap, asn);
    if (r->as_keys[i]) {
        r->rows[r->as_vals[i] - 1].flags |= flag;
        return 0;
    }
    if (r->n_rows == r->rows_cap) {
        as_row *nr = realloc(r->rows, 2 * r->rows_cap * sizeof *nr);
        if (!nr) return -1;
        r->rows = nr;
        r->rows_cap *= 2;
    }
    if (2 * (r->n_rows + 1) > r->as_cap) {
        size_t ncap = r->as_cap * 2;
        uint32_t *nk = calloc(ncap, sizeof *nk), *nv = calloc(ncap, sizeof *nv);
        if (!nk || !nv) {
            free(nk);
            free(nv);
            return -1;
        }
        for (size_t j = 0; j < r->as_cap; j++) {
            if (!r->as_keys[j]) continue;
            size_t k = as_slot(nk, ncap, r->as_keys[j]);
            nk[k] = r->as_keys[j];
            nv[k] = r->as_vals[j];
        }
        free(r->as_keys);
        free(r->as_vals);
        r->as_keys = nk;
        r->as_vals = nv;
        r->as_cap = ncap;
        i = as_slot(r->as_keys, r->as_cap, asn);
    }
    as_row *row = &r->rows[r->n_rows];
    memset(row, 0, sizeof *row);
    row->asn = asn;
    row->flags = flag;
    r->as_keys[i] = asn;
    r->as_vals[i] = (uint32_t)++r->n_rows;
    return 0;
}

static uint64_t prefix_hash(int v6, const uint8_t *addr, unsigned len) {
    uint64_t a, b;
    memcpy(&a, addr, 8);
    memcpy(&b, addr + 8, 8);
    return mix64(a ^ mix64(b ^ ((uint64_t)len << 1 | (uint64_t)v6)));
}

static size_t prefix_slot(const rib_t *r, const uint32_t *slots, size_t cap, int v6,
                          const uint8_t *addr, unsigned len) {
    size_t i = prefix_hash(v6, addr, len) & (cap - 1);
    for (;;) {
        uint32_t v = slots[i];
        if (!v) return i;
        const prefix_row *p = &r->pfx[v - 1];
        if (p->len == len && p->v6 == v6 && memcmp(p->addr, addr, 16) == 0) return i;
        i = (i + 1) & (cap - 1);
    }
}

static void prefix_mask(const uint8_t *src, unsigned len, uint8_t *dst) {
    memset(dst, 0, 16);
    unsigned full = len / 8, rest = len % 8;
    memcpy(dst, src, full);
    if (rest) dst[full] = (uint8_t)(src[full] & (0xffu << (8 - rest)));
}

int64_t rib_prefix(rib_t *r, int v6, const uint8_t *addr, unsigned len) {
    uint8_t key[16];
    prefix_mask(addr, len, key);
    size_t i = prefix_slot(r, r->pfx_slots, r->pfx_cap, v6, key, len);
    if (r->pfx_slots[i]) return (int64_t)r->pfx_slots[i] - 1;
    if (r->n_pfx == r->pfx_rows_cap) {
        prefix_row *np = realloc(r->pfx, 2 * r->pfx_rows_cap * sizeof *np);
        if (!np) return -1;
        r->pfx = np;
        r->pfx_rows_cap *= 2;
    }
    if (2 * (r->n_pfx + 1) > r->pfx_cap) {
        size_t ncap = r->pfx_cap * 2;
        uint32_t *ns = calloc(ncap, sizeof *ns);
        if (!ns) return -1;
        for (size_t j = 0; j < r->pfx_cap; j++) {
            uint32_t v = r->pfx_slots[j];
            if (!v) continue;
            const prefix_row *p = &r->pfx[v - 1];
            ns[prefix_slot(r, ns, ncap, p->v6, p->addr, p->len)] = v;
        }
        free(r->pfx_slots);
        r->pfx_slots = ns;
        r->pfx_cap = ncap;
        i = prefix_slot(r, r->pfx_slots, r->pfx_cap, v6, key, len);
    }
    prefix_row *p = &r->pfx[r->n_pfx];
    memcpy(p->addr, key, 16);
    p->len = (uint8_t)len;
    p->v6 = (uint8_t)v6;
    p->has_provider = 0;
    r->pfx_slots[i] = (uint32_t)++r->n_pfx;
    return (int64_t)r->n_pfx - 1;
}

int rib_add_path(rib_t *r, uint32_t prefix_id, const uint32_t *path, size_t n, int seen,
                 int origin_known) {
    if (n == 0) return 0;
    uint32_t origin = path[n - 1];
    if (seen) {
        if (origin_known) return 0;
        return key_set_add(&r->origins, ((uint64_t)prefix_id + 1) << 32 | origin);
    }
    if (as_mark(r, origin, AS_ORIGIN)) return -1;
    for (size_t i = 0; i + 1 < n; i++)
        if (as_mark(r, path[i], i == 0 ? AS_FIRST_HOP : AS_MIDDLE)) return -1;
    if (!origin_known && key_set_add(&r->origins, ((uint64_t)prefix_id + 1) << 32 | origin))
        return -1;
    if (n >= 2 && key_set_add(&r->upstreams, (uint64_t)origin << 32 | path[n - 2])) return -1;
    return 0;
}

static int has_upstream(const rib_t *r, const as_row *row, uint32_t asn) {
    const uint32_t *u = r->ups + row->up_off;
    for (uint32_t k = 0; k < row->up_cnt; k++)
        if (u[k] == asn) return 1;
    return 0;
}

/* qsort has no context argument; rib_finish is not reentrant per process, which the module's
 * busy flag and the GIL-free single caller guarantee. */
static const rib_t *sort_rib;

static int prefix_order(const void *a, const void *b) {
    const prefix_row *x = &sort_rib->pfx[*(const uint32_t *)a];
    const prefix_row *y = &sort_rib->pfx[*(const uint32_t *)b];
    if (x->v6 != y->v6) return x->v6 < y->v6 ? -1 : 1;
    int c = memcmp(x->addr, y->addr, 16);
    if (c) return c;
    return (x->len > y->len) - (x->len < y->len);
}

static int covers(const prefix_row *outer, const prefix_row *inner) {
    if (outer->v6 != inner->v6 || outer->len > inner->len) return 0;
    uint8_t masked[16];
    prefix_mask(inner->addr, outer->len, masked);
    return memcmp(masked, outer->addr, 16) == 0;
}

int rib_finish(rib_t *r, int first_hop_is_transit, grt_counts *grt, as_summary *sum) {
    memset(grt, 0, sizeof *grt);
    memset(sum, 0, sizeof *sum);
    for (size_t i = 0; i < r->n_rows; i++) {
        as_row *row = &r->rows[i];
        row->provider = (row->flags & AS_MIDDLE) ||
                        ((row->flags & AS_FIRST_HOP) &&
                         (first_hop_is_transit || !(row->flags & AS_ORIGIN)));
        row->n_pi = row->n_pa = row->up_cnt = row->up_off = 0;
        row->single = row->multi = 0;
        row->degree_sum = 0;
        row->block_v4 = row->block_v6 = 255;
    }

    /* Upstreams of each origin, providers only, as a compact list per row. */
    for (size_t j = 0; j < r->upstreams.cap; j++) {
        uint64_t k = r->upstreams.slots[j];
        if (!k) continue;
        as_row *up = as_find(r, (uint32_t)k);
        if (up && up->provider) as_find(r, (uint32_t)(k >> 32))->up_cnt++;
    }
    size_t total = 0;
    for (size_t i = 0; i < r->n_rows; i++) {
        r->rows[i].up_off = (uint32_t)total;
        total += r->rows[i].up_cnt;
        r->rows[i].up_cnt = 0;
    }
    free(r->ups);
    r->ups = malloc((total ? total : 1) * sizeof *r->ups);
    if (!r->ups) return -1;
    for (size_t j = 0; j < r->upstreams.cap; j++) {
        uint64_t k = r->upstreams.slots[j];
        if (!k) continue;
        as_row *up = as_find(r, (uint32_t)k);
        if (!up || !up->provider) continue;
        as_row *o = as_find(r, (uint32_t)(k >> 32));
        r->ups[o->up_off + o->up_cnt++] = (uint32_t)k;
    }

    /* Origins of each prefix, as a compact list, for the covering-prefix test. */
    uint32_t *off = calloc(r->n_pfx + 1, sizeof *off);
    uint32_t *orig = malloc((r->origins.n ? r->origins.n : 1) * sizeof *orig);
    if (!off || !orig) {
        free(off);
        free(orig);
        return -1;
    }
    for (size_t j = 0; j < r->origins.cap; j++) {
        uint64_t k = r->origins.slots[j];
        if (k) off[(k >> 32)]++; /* prefix id + 1: counts land one slot later */
    }
    for (size_t i = 0; i < r->n_pfx; i++) off[i + 1] += off[i];
    uint32_t *fill = calloc(r->n_pfx + 1, sizeof *fill);
    if (!fill) {
        free(off);
        free(orig);
        return -1;
    }
    for (size_t j = 0; j < r->origins.cap; j++) {
        uint64_t k = r->origins.slots[j];
        if (!k) continue;
        size_t p = (size_t)(k >> 32) - 1;
        orig[off[p] + fill[p]++] = (uint32_t)k;
    }
    free(fill);

    /* In (family, address, length) order every prefix follows the prefixes covering it, so a
     * stack holds exactly the covering chain of the current prefix. */
    uint32_t *order = malloc((r->n_pfx ? r->n_pfx : 1) * sizeof *order);
    uint32_t *stack = malloc(130 * sizeof *stack);
    if (!order || !stack) {
        free(order);
        free(stack);
        free(off);
        free(orig);
        return -1;
    }
    for (size_t p = 0; p < r->n_pfx; p++) order[p] = (uint32_t)p;
    sort_rib = r;
    qsort(order, r->n_pfx, sizeof *order, prefix_order);
    size_t depth = 0;
    for (size_t i = 0; i < r->n_pfx; i++) {
        uint32_t p = order[i];
        prefix_row *pr = &r->pfx[p];
        while (depth && !covers(&r->pfx[stack[depth - 1]], pr)) depth--;
        stack[depth++] = p;
        pr->has_provider = 0;
        if (off[p] == off[p + 1]) grt->no_origin++;
        int aggregate = 0;
        for (uint32_t k = off[p]; k < off[p + 1]; k++) {
            as_row *o = as_find(r, orig[k]);
            uint8_t *block = pr->v6 ? &o->block_v6 : &o->block_v4;
            if (pr->len < *block) *block = pr->len;
            if (o->provider) {
                pr->has_provider = 1;
                /* Under MAST a provider announces only its aggregates: a prefix stays when
                 * none of the provider's own shorter prefixes covers it. */
                int own = 0;
                for (size_t s = 0; s + 1 < depth && !own; s++) {
                    uint32_t q = stack[s];
                    for (uint32_t m = off[q]; m < off[q + 1] && !own; m++)
                        own = orig[m] == orig[k];
                }
                aggregate |= !own;
                continue;
            }
            int pa = 0;
            for (size_t s = 0; s < depth && !pa; s++) {
                uint32_t q = stack[s];
                for (uint32_t m = off[q]; m < off[q + 1] && !pa; m++)
                    pa = has_upstream(r, o, orig[m]);
            }
            if (pa)
                o->n_pa++;
            else
                o->n_pi++;
        }
        if (pr->v6) {
            grt->v6++;
            grt->mast_v6 += pr->has_provider;
            grt->agg_v6 += (uint64_t)aggregate;
        } else {
            grt->v4++;
            grt->mast_v4 += pr->has_provider;
            grt->agg_v4 += (uint64_t)aggregate;
        }
    }
    free(order);
    free(stack);

    /* Per-provider stub counts and the Table 6.1 matrix. */
    sum->ases = r->n_rows;
    for (size_t i = 0; i < r->n_rows; i++) {
        as_row *row = &r->rows[i];
        if (row->provider) {
            sum->providers++;
            sum->first_hop_only += !(row->flags & AS_MIDDLE);
            continue;
        }
        sum->stubs++;
        uint32_t n = row->up_cnt;
        if (n > sum->max_degree) sum->max_degree = n;
        if (n == 0 || row->n_pi + row->n_pa == 0) {
            sum->no_upstream++;
            continue;
        }
        int kind = row->n_pi && row->n_pa ? ADDR_BOTH : row->n_pa ? ADDR_PA : ADDR_PI;
        (n == 1 ? sum->single : sum->multi)[kind]++;
        for (uint32_t k = 0; k < n; k++) {
            as_row *p = as_find(r, r->ups[row->up_off + k]);
            if (n == 1) {
                p->single++;
            } else {
                p->multi++;
                p->degree_sum += n;
            }
        }
    }
    free(off);
    free(orig);
    return 0;
}

void rib_homing(const rib_t *r, uint64_t *hist, size_t n) {
    memset(hist, 0, n * sizeof *hist);
    for (size_t i = 0; i < r->n_rows; i++) {
        const as_row *row = &r->rows[i];
        if (!row->provider && row->up_cnt < n) hist[row->up_cnt]++;
    }
}

size_t rib_as_count(const rib_t *r) { return r->n_rows; }
const as_row *rib_as_rows(const rib_t *r) { return r->rows; }
const uint32_t *rib_upstreams(const rib_t *r) { return r->ups; }
