/* MRT records are validated completely before any of their entries reaches rib_table, so a
 * record skipped as bad leaves no trace in the counts. */
#include "mrt_decode.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MRT_MAX_RECORD (16u << 20) /* larger lengths are corruption, not data */
#define READ_CHUNK (4u << 20)
#define INTERRUPT_POLL (16u << 20) /* bytes between two interrupt polls (Ctrl-C) */
#define AS_TRANS 23456u

enum { T_TABLE_DUMP = 12, T_TABLE_DUMP_V2 = 13, T_BGP4MP = 16, T_BGP4MP_ET = 17 };

typedef struct {
    uint32_t off, n; /* cleaned path in dec.staged */
    uint32_t peer;   /* peer index (V2) or peer AS (legacy): keys the path cache */
} staged_entry;

/* Consecutive RIB records mostly differ in prefix, not in path: remembering each peer's last
 * path lets an entry with the same path skip every per-ASN update but the origin's. */
#define PATH_CACHE_SLOTS 256
#define PATH_CACHE_LEN 15
typedef struct {
    uint32_t n;
    uint32_t asn[PATH_CACHE_LEN];
} cached_path;

typedef struct {
    rib_t *rib;
    mrt_stats *st;
    int skip_bad, stop, resync, have_ts;
    uint32_t last_ts;
    uint64_t base; /* stream offset of the buffer handed to consume() */
    size_t need;   /* bytes wanted from the current position before progress is possible */
    char reason[MRT_REASON_MAX];
    uint32_t *staged;
    size_t staged_n, staged_cap;
    staged_entry *ents;
    size_t ents_n, ents_cap;
    cached_path cache[PATH_CACHE_SLOTS];
    /* the record's prefix, inserted only once the whole record is valid */
    int pfx_v6;
    unsigned pfx_len;
    uint8_t pfx_addr[16];
} dec_t;

static inline uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Returns 1 (bad) so callers can `return bad(...)`. */
__attribute__((format(printf, 2, 3))) static int bad(dec_t *d, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->reason, sizeof d->reason, fmt, ap);
    va_end(ap);
    return 1;
}

static int staged_reserve(dec_t *d, size_t more) {
    if (d->staged_n + more <= d->staged_cap) return 0;
    size_t cap = d->staged_cap ? d->staged_cap : 4096;
    while (cap < d->staged_n + more) cap *= 2;
    uint32_t *n = realloc(d->staged, cap * sizeof *n);
    if (!n) return -1;
    d->staged = n;
    d->staged_cap = cap;
    return 0;
}

/* Private, documentation and reserved ASNs, and AS_TRANS left without AS4_PATH: they name no
 * public network, so they are taken out of paths (METHOD.md). */
static inline int special_asn(uint32_t a) {
    return a == 0 || a == AS_TRANS || (a >= 64496 && a <= 131071) || a >= 4200000000u;
}

static inline uint32_t get_asn(const uint8_t *p, unsigned size) {
    return size == 4 ? be32(p) : be16(p);
}

/* Validate the segments; count the path length as RFC 6793 does (a set counts one, confederation
 * segments none) and note whether AS_TRANS occurs. */
static int scan_path(dec_t *d, const uint8_t *p, size_t len, unsigned size, const char *what,
                     size_t *counted, size_t *asns, int *has_trans) {
    size_t c = 0, a = 0;
    const uint8_t *end = p + len;
    while (p < end) {
        if (end - p < 2) return bad(d, "%s: truncated segment header", what);
        unsigned type = p[0], cnt = p[1];
        if (type < 1 || type > 4) return bad(d, "%s: unknown segment type %u", what, type);
        if ((size_t)(end - p - 2) < (size_t)cnt * size)
            return bad(d, "%s: segment of %u ASNs overruns the attribute", what, cnt);
        if (type == 2) c += cnt;
        if (type == 1) c += 1;
        for (unsigned i = 0; i < cnt && has_trans; i++)
            if (get_asn(p + 2 + (size_t)i * size, size) == AS_TRANS) *has_trans = 1;
        a += cnt;
        p += 2 + (size_t)cnt * size;
    }
    *counted = c;
    *asns = a;
    return 0;
}

/* Append the AS_SEQUENCE ASNs of a path, up to `limit` counted positions. */
static void emit_path(dec_t *d, const uint8_t *p, size_t len, unsigned size, size_t limit) {
    const uint8_t *end = p + len;
    while (p < end && limit) {
        unsigned type = p[0], cnt = p[1];
        if (type == 2) {
            unsigned take = cnt < limit ? cnt : (unsigned)limit;
            for (unsigned i = 0; i < take; i++)
                d->staged[d->staged_n++] = get_asn(p + 2 + (size_t)i * size, size);
            limit -= take;
        } else if (type == 1) {
            limit--;
        }
        p += 2 + (size_t)cnt * size;
    }
}

/* Decode one entry's attributes and stage its cleaned path. 0 ok, 1 bad, -1 out of memory. */
static int stage_entry(dec_t *d, uint32_t peer, const uint8_t *attrs, size_t alen,
                       unsigned as_size) {
    const uint8_t *asp = NULL, *as4p = NULL;
    size_t asplen = 0, as4len = 0;
    const uint8_t *p = attrs, *end = attrs + alen;
    while (p < end) {
        if (end - p < 3) return bad(d, "truncated path attribute header");
        unsigned flags = p[0], type = p[1];
        size_t hdr = (flags & 0x10) ? 4 : 3, len;
        if ((size_t)(end - p) < hdr) return bad(d, "truncated path attribute header");
        len = (flags & 0x10) ? be16(p + 2) : p[2];
        if ((size_t)(end - p) - hdr < len)
            return bad(d, "path attribute %u of %zu bytes overruns the entry", type, len);
        if (type == 2) {
            asp = p + hdr;
            asplen = len;
        } else if (type == 17) {
            as4p = p + hdr;
            as4len = len;
        }
        p += hdr + len;
    }
    size_t n_as = 0, n_asns = 0, n_as4 = 0, n_as4ns = 0;
    int trans = 0;
    if (asp && scan_path(d, asp, asplen, as_size, "AS_PATH", &n_as, &n_asns, &trans)) return 1;
    int merge = 0;
    if (as4p && trans) {
        if (scan_path(d, as4p, as4len, 4, "AS4_PATH", &n_as4, &n_as4ns, NULL)) return 1;
        merge = n_as4 <= n_as; /* RFC 6793 4.2.3: a longer AS4_PATH is ignored */
    }
    if (staged_reserve(d, n_asns + n_as4ns + 1)) return -1;
    size_t start = d->staged_n;
    if (asp) emit_path(d, asp, asplen, as_size, merge ? n_as - n_as4 : (size_t)-1);
    if (merge) emit_path(d, as4p, as4len, 4, (size_t)-1);
    /* Clean: drop special ASNs, collapse prepending. */
    size_t w = start;
    for (size_t r = start; r < d->staged_n; r++) {
        uint32_t a = d->staged[r];
        if (special_asn(a)) continue;
        if (w > start && d->staged[w - 1] == a) continue;
        d->staged[w++] = a;
    }
    d->staged_n = w;
    if (d->ents_n == d->ents_cap) {
        size_t cap = d->ents_cap ? 2 * d->ents_cap : 256;
        staged_entry *n = realloc(d->ents, cap * sizeof *n);
        if (!n) return -1;
        d->ents = n;
        d->ents_cap = cap;
    }
    d->ents[d->ents_n++] = (staged_entry){(uint32_t)start, (uint32_t)(w - start), peer};
    return 0;
}

static int commit(dec_t *d) {
    int64_t pid = rib_prefix(d->rib, d->pfx_v6, d->pfx_addr, d->pfx_len);
    if (pid < 0) return -1;
    /* The entries of one record share a prefix and mostly an origin: insert each pair once. */
    uint32_t last_origin = 0;
    for (size_t i = 0; i < d->ents_n; i++) {
        const staged_entry *e = &d->ents[i];
        const uint32_t *path = d->staged + e->off;
        if (e->n == 0) d->st->entries_no_path++;
        cached_path *c = &d->cache[e->peer % PATH_CACHE_SLOTS];
        int same = c->n == e->n && e->n && memcmp(c->asn, path, e->n * sizeof *path) == 0;
        uint32_t origin = e->n ? path[e->n - 1] : 0;
        int known = e->n && origin == last_origin;
        if (rib_add_path(d->rib, (uint32_t)pid, path, e->n, same, known)) return -1;
        if (e->n) last_origin = origin;
        if (!same && e->n <= PATH_CACHE_LEN) {
            c->n = e->n;
            memcpy(c->asn, path, e->n * sizeof *path);
        }
    }
    d->st->entries += d->ents_n;
    d->st->rib_records++;
    return 0;
}

static void stage_prefix(dec_t *d, int v6, const uint8_t *addr, unsigned len) {
    d->pfx_v6 = v6;
    d->pfx_len = len;
    memset(d->pfx_addr, 0, sizeof d->pfx_addr);
    memcpy(d->pfx_addr, addr, (len + 7) / 8);
}

static int rib_v2(dec_t *d, const uint8_t *b, size_t len, int v6, int addpath) {
    if (len < 5) return bad(d, "RIB record of %zu bytes is too short", len);
    unsigned plen = b[4], max = v6 ? 128 : 32;
    if (plen > max) return bad(d, "prefix length %u exceeds %u", plen, max);
    size_t pbytes = (plen + 7) / 8, pos = 5 + pbytes;
    if (len < pos + 2) return bad(d, "RIB record truncated in its prefix");
    stage_prefix(d, v6, b + 5, plen);
    unsigned count = be16(b + pos);
    pos += 2;
    size_t fixed = addpath ? 12 : 8;
    for (unsigned i = 0; i < count; i++) {
        if (len - pos < fixed) return bad(d, "RIB entry %u of %u truncated", i + 1, count);
        size_t alen = be16(b + pos + fixed - 2);
        uint32_t peer = be16(b + pos);
        pos += fixed;
        if (len - pos < alen) return bad(d, "RIB entry %u: attributes overrun the record", i + 1);
        int r = stage_entry(d, peer, b + pos, alen, 4);
        if (r) return r;
        pos += alen;
    }
    if (pos != len) return bad(d, "%zu bytes left after %u RIB entries", len - pos, count);
    return 0;
}

static int table_dump_v1(dec_t *d, const uint8_t *b, size_t len, unsigned subtype) {
    if (subtype != 1 && subtype != 2) return bad(d, "TABLE_DUMP with unknown AFI %u", subtype);
    int v6 = subtype == 2;
    size_t a = v6 ? 16 : 4, fixed = 14 + 2 * a;
    if (len < fixed) return bad(d, "TABLE_DUMP record of %zu bytes is too short", len);
    unsigned plen = b[4 + a], max = v6 ? 128 : 32;
    if (plen > max) return bad(d, "prefix length %u exceeds %u", plen, max);
    size_t alen = be16(b + fixed - 2);
    if (alen != len - fixed)
        return bad(d, "attribute length %zu does not match the record's %zu", alen, len - fixed);
    stage_prefix(d, v6, b + 4, plen);
    return stage_entry(d, be16(b + fixed - 4), b + fixed, alen, 2);
}

static int peer_index(dec_t *d, const uint8_t *b, size_t len) {
    if (len < 6) return bad(d, "PEER_INDEX_TABLE too short");
    size_t pos = 6 + be16(b + 4);
    if (len < pos + 2) return bad(d, "PEER_INDEX_TABLE truncated in its view name");
    unsigned count = be16(b + pos);
    pos += 2;
    for (unsigned i = 0; i < count; i++) {
        if (len - pos < 1) return bad(d, "PEER_INDEX_TABLE truncated at peer %u", i);
        unsigned t = b[pos];
        size_t need = 1 + 4 + ((t & 1) ? 16 : 4) + ((t & 2) ? 4 : 2);
        if (len - pos < need) return bad(d, "PEER_INDEX_TABLE truncated at peer %u", i);
        pos += need;
    }
    d->st->peer_tables++;
    d->st->peers = count;
    return 0;
}

/* 0 ok (also: skipped on purpose), 1 bad, -1 out of memory. */
static int record(dec_t *d, unsigned type, unsigned subtype, const uint8_t *b, size_t len) {
    d->staged_n = 0;
    d->ents_n = 0;
    int r;
    if (type == T_TABLE_DUMP_V2) {
        switch (subtype) {
        case 1: return peer_index(d, b, len);
        case 2: r = rib_v2(d, b, len, 0, 0); break;
        case 4: r = rib_v2(d, b, len, 1, 0); break;
        case 8: r = rib_v2(d, b, len, 0, 1); break;
        case 10: r = rib_v2(d, b, len, 1, 1); break;
        case 3: case 5: case 6: case 9: case 11: case 12:
            d->st->skipped_afi++;
            return 0;
        default:
            d->st->skipped_other++;
            return 0;
        }
    } else if (type == T_TABLE_DUMP) {
        r = table_dump_v1(d, b, len, subtype);
    } else {
        d->st->skipped_other++;
        return 0;
    }
    return r ? r : commit(d);
}

static int known_type(unsigned type, unsigned subtype) {
    switch (type) {
    case T_TABLE_DUMP: return subtype == 1 || subtype == 2;
    case T_TABLE_DUMP_V2: return subtype >= 1 && subtype <= 12;
    case T_BGP4MP: case T_BGP4MP_ET: return subtype <= 11;
    case 11: case 32: case 33: case 48: case 49: return 1;
    default: return type <= 10; /* deprecated types of RFC 6396 appendix B */
    }
}

/* Stricter than known_type: what a resynchronisation may land on. */
static int plausible(const dec_t *d, const uint8_t *h) {
    uint32_t ts = be32(h), len = be32(h + 8);
    unsigned type = be16(h + 4), subtype = be16(h + 6);
    if (type != T_TABLE_DUMP && type != T_TABLE_DUMP_V2 && type != T_BGP4MP && type != T_BGP4MP_ET)
        return 0;
    if (!known_type(type, subtype) || len > MRT_MAX_RECORD) return 0;
    if (d->have_ts && (ts + 86400u < d->last_ts || ts > d->last_ts + 86400u)) return 0;
    return 1;
}

static void mark_bad(dec_t *d, uint64_t at) {
    mrt_stats *st = d->st;
    if (!st->bad_reason[0]) {
        st->bad_offset = at;
        memcpy(st->bad_reason, d->reason, sizeof d->reason);
    }
    if (d->skip_bad)
        st->bad_records++;
    else
        d->stop = st->stopped = 1;
}

/* Decode the complete records in b[0..n); returns the bytes consumed. */
static size_t consume(dec_t *d, const uint8_t *b, size_t n, int eof) {
    size_t pos = 0;
    d->need = 0;
    while (!d->stop) {
        if (d->resync) {
            if (n - pos < 12) {
                if (eof) {
                    d->st->resync_bytes += n - pos;
                    pos = n;
                }
                break;
            }
            if (plausible(d, b + pos)) {
                size_t total = 12 + (size_t)be32(b + pos + 8);
                int ok;
                if (n - pos >= total + 12)
                    ok = plausible(d, b + pos + total);
                else if (eof)
                    ok = 1; /* the stream ends inside or right after it */
                else {
                    d->need = total + 12;
                    break;
                }
                if (ok) {
                    d->resync = 0;
                    continue;
                }
            }
            pos++;
            d->st->resync_bytes++;
            continue;
        }
        if (n - pos < 12) break;
        const uint8_t *h = b + pos;
        uint32_t ts = be32(h), len = be32(h + 8);
        unsigned type = be16(h + 4), subtype = be16(h + 6);
        if (!known_type(type, subtype) || len > MRT_MAX_RECORD) {
            bad(d, "implausible MRT header (type %u, subtype %u, length %u)", type, subtype, len);
            mark_bad(d, d->base + pos);
            if (d->stop) break;
            d->resync = 1;
            d->st->resyncs++;
            d->st->bad_records--; /* the resync is counted, not a record */
            continue;
        }
        if (n - pos - 12 < len) {
            d->need = 12 + (size_t)len;
            break;
        }
        d->st->records++;
        int r = record(d, type, subtype, h + 12, len);
        if (r < 0) {
            d->stop = d->st->out_of_memory = 1;
            break;
        }
        if (r > 0) {
            mark_bad(d, d->base + pos);
            if (d->stop) break;
        }
        d->last_ts = ts;
        d->have_ts = 1;
        pos += 12 + (size_t)len;
    }
    return pos;
}

static void dec_init(dec_t *d, rib_t *rib, int skip_bad, mrt_stats *st) {
    memset(d, 0, sizeof *d);
    memset(st, 0, sizeof *st);
    d->rib = rib;
    d->st = st;
    d->skip_bad = skip_bad;
}

static void dec_free(dec_t *d) {
    free(d->staged);
    free(d->ents);
}

static void finish_tail(dec_t *d, uint64_t left) {
    if (!d->stop && left && !d->resync) {
        d->st->partial_tail = 1;
        d->st->tail_offset = d->base;
        d->st->tail_bytes = left;
    }
}

int mrt_decode_buf(rib_t *rib, const uint8_t *data, uint64_t len, int skip_bad, mrt_stats *st) {
    dec_t d;
    dec_init(&d, rib, skip_bad, st);
    size_t used = consume(&d, data, (size_t)len, 1);
    d.base += used;
    st->bytes = len;
    finish_tail(&d, len - used);
    dec_free(&d);
    return 0;
}

int mrt_decode_fd(rib_t *rib, int fd, int skip_bad, mrt_stats *st, int (*interrupt)(void)) {
    uint64_t next_poll = INTERRUPT_POLL;
    dec_t d;
    dec_init(&d, rib, skip_bad, st);
    size_t cap = READ_CHUNK, start = 0, end = 0;
    uint8_t *buf = malloc(cap);
    int eof = 0, rc = 0;
    if (!buf) {
        st->out_of_memory = 1;
        return -1;
    }
    for (;;) {
        size_t used = consume(&d, buf + start, end - start, eof);
        start += used;
        d.base += used;
        if (d.stop || eof) break;
        if (start) {
            memmove(buf, buf + start, end - start);
            end -= start;
            start = 0;
        }
        if (d.need > cap || end == cap) {
            size_t ncap = cap * 2 > d.need ? cap * 2 : d.need;
            uint8_t *nb = realloc(buf, ncap);
            if (!nb) {
                st->out_of_memory = 1;
                rc = -1;
                break;
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t got = read(fd, buf + end, cap - end);
        if (got < 0) {
            if (errno == EINTR) continue;
            st->io_errno = errno;
            rc = -1;
            break;
        }
        if (got == 0) eof = 1;
        end += (size_t)got;
        st->bytes += (uint64_t)got;
        if (interrupt && st->bytes >= next_poll) {
            next_poll = st->bytes + INTERRUPT_POLL;
            if (interrupt()) {
                st->interrupted = 1;
                break;
            }
        }
    }
    if (eof) finish_tail(&d, end - start);
    free(buf);
    dec_free(&d);
    return rc;
}
