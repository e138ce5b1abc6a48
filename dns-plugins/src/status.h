/* Zone data of mod-mast: the prefix-status RRset (APL, RFC 3123) and the host IFID map
 * (apex TXT "mast-host" records). Pure parsing, no knotd dependency, so the fuzz harness
 * links exactly the code the module runs. See ../README.md for the zone data design. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libknot/libknot.h>

/* A prefix of the status RRset; order in the array is preference order. */
typedef struct {
	uint8_t addr[16];
	uint8_t len;
	bool discouraged; /* APL negation bit */
} mast_prefix_t;

/* Status RRsets larger than this are rejected as malformed: a stub has a handful of providers. */
#define MAST_MAX_PREFIXES 32

typedef enum {
	MAST_OK = 0,
	MAST_E_TRUNCATED,     /* rdata ends inside an item */
	MAST_E_FAMILY,        /* address family other than 1 (IPv4) or 2 (IPv6) */
	MAST_E_PREFIX_LEN,    /* IPv6 prefix longer than /64: no room for an interface ID */
	MAST_E_AFD_LEN,       /* AFDPART longer than the family's address */
	MAST_E_HOST_BITS,     /* address bits set past the prefix length */
	MAST_E_TOO_MANY,      /* more than MAST_MAX_PREFIXES IPv6 items */
	MAST_E_NOT_HOST,      /* TXT record that is not a mast-host record (not an error) */
	MAST_E_HOST_FORMAT,   /* mast-host record without exactly name and IFID strings */
	MAST_E_HOST_NAME,     /* host name is not a valid relative domain name */
	MAST_E_IFID,          /* IFID is not '::a:b:c:d' within 64 bits */
	MAST_E_LIMA_LEN,      /* LIMA mode: a prefix that is not a /64 */
} mast_err_t;

const char *mast_strerror(mast_err_t err);

/* Append the IPv6 items of one APL rdata to out[*count..cap). IPv4 items are skipped
 * (they never carry IFIDs). */
mast_err_t mast_apl_parse(const uint8_t *rdata, size_t len, mast_prefix_t *out, size_t cap,
                          size_t *count);

/* Parse one TXT rdata. A mast-host record is three character-strings:
 * "mast-host" <name relative to the zone, or "@"> <IFID as "::a:b:c:d">.
 * On MAST_OK, `owner` holds the lowercased absolute name (zone appended). */
mast_err_t mast_host_parse(const uint8_t *rdata, size_t len, const knot_dname_t *zone,
                           knot_dname_storage_t owner, uint64_t *ifid);

/* The address with interface ID `ifid` inside `prefix`. */
void mast_address(const mast_prefix_t *prefix, uint64_t ifid, uint8_t out[16]);

/* Format "2001:db8::/64" or "!2001:db8::/64" (discouraged) into buf. */
void mast_prefix_str(const mast_prefix_t *prefix, char *buf, size_t size);
