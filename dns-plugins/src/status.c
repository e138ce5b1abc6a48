#include "status.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#define APL_FAMILY_IPV4 1
#define APL_FAMILY_IPV6 2
#define HOST_TAG "mast-host"

const char *mast_strerror(mast_err_t err)
{
	switch (err) {
	case MAST_OK:            return "ok";
	case MAST_E_TRUNCATED:   return "APL rdata truncated inside an item";
	case MAST_E_FAMILY:      return "APL address family is neither 1 (IPv4) nor 2 (IPv6)";
	case MAST_E_PREFIX_LEN:  return "APL IPv6 prefix longer than /64 (no room for an interface ID)";
	case MAST_E_AFD_LEN:     return "APL AFDLENGTH longer than the address";
	case MAST_E_HOST_BITS:   return "APL prefix has address bits set past its length";
	case MAST_E_TOO_MANY:    return "more than 32 IPv6 prefixes in the status RRset";
	case MAST_E_NOT_HOST:    return "not a mast-host TXT record";
	case MAST_E_HOST_FORMAT: return "mast-host TXT record needs exactly: \"mast-host\" <name> <ifid>";
	case MAST_E_HOST_NAME:   return "mast-host name is not a relative domain name";
	case MAST_E_IFID:        return "mast-host IFID is not '::a:b:c:d' or 0x... within 64 bits";
	case MAST_E_LIMA_LEN:    return "LIMA mode: status prefix is not a /64 {provider ASN, stub}";
	}
	return "unknown error";
}

/* Bits past `len` must be zero: a prefix with host bits set is a typo, not a prefix. */
static bool host_bits_clear(const uint8_t *addr, size_t addr_bytes, unsigned len)
{
	for (size_t i = 0; i < addr_bytes; i++) {
		unsigned first_bit = (unsigned)i * 8;
		uint8_t mask;
		if (first_bit + 8 <= len) {
			mask = 0x00;
		} else if (first_bit >= len) {
			mask = 0xff;
		} else {
			mask = (uint8_t)(0xff >> (len - first_bit));
		}
		if (addr[i] & mask) {
			return false;
		}
	}
	return true;
}

mast_err_t mast_apl_parse(const uint8_t *rdata, size_t len, mast_prefix_t *out, size_t cap,
                          size_t *count)
{
	size_t pos = 0;
	while (pos < len) {
		if (len - pos < 4) {
			return MAST_E_TRUNCATED;
		}
		uint16_t family = (uint16_t)(rdata[pos] << 8 | rdata[pos + 1]);
		uint8_t prefix_len = rdata[pos + 2];
		bool negated = (rdata[pos + 3] & 0x80) != 0;
		uint8_t afd_len = rdata[pos + 3] & 0x7f;
		pos += 4;
		if (len - pos < afd_len) {
			return MAST_E_TRUNCATED;
		}
		size_t addr_bytes;
		unsigned max_len;
		if (family == APL_FAMILY_IPV4) {
			addr_bytes = 4;
			max_len = 32;
		} else if (family == APL_FAMILY_IPV6) {
			addr_bytes = 16;
			max_len = 64;
		} else {
			return MAST_E_FAMILY;
		}
		if (afd_len > addr_bytes) {
			return MAST_E_AFD_LEN;
		}
		if (prefix_len > max_len) {
			return family == APL_FAMILY_IPV6 ? MAST_E_PREFIX_LEN : MAST_E_AFD_LEN;
		}
		uint8_t addr[16] = { 0 };
		memcpy(addr, rdata + pos, afd_len);
		pos += afd_len;
		if (!host_bits_clear(addr, addr_bytes, prefix_len)) {
			return MAST_E_HOST_BITS;
		}
		if (family == APL_FAMILY_IPV4) {
			continue;
		}
		if (*count >= cap) {
			return MAST_E_TOO_MANY;
		}
		mast_prefix_t *p = &out[(*count)++];
		memcpy(p->addr, addr, sizeof(p->addr));
		p->len = prefix_len;
		p->discouraged = negated;
	}
	return MAST_OK;
}

/* Split TXT rdata into its character-strings; false if the rdata is not well formed. */
static bool txt_strings(const uint8_t *rdata, size_t len, const uint8_t **str, uint8_t *str_len,
                        size_t cap, size_t *count)
{
	size_t pos = 0;
	*count = 0;
	while (pos < len) {
		uint8_t n = rdata[pos++];
		if (len - pos < n) {
			return false;
		}
		if (*count < cap) {
			str[*count] = rdata + pos;
			str_len[*count] = n;
		}
		(*count)++;
		pos += n;
	}
	return true;
}

/* Host names are plain: letters, digits, '-', '_', dots between non-empty labels. Anything
 * fancier (escapes, absolute names) is rejected rather than guessed at. */
static bool host_name_ok(const uint8_t *s, size_t n)
{
	if (n == 1 && s[0] == '@') {
		return true;
	}
	if (n == 0 || s[0] == '.' || s[n - 1] == '.') {
		return false;
	}
	size_t label = 0;
	for (size_t i = 0; i < n; i++) {
		uint8_t c = s[i];
		if (c == '.') {
			if (label == 0) {
				return false;
			}
			label = 0;
			continue;
		}
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		          (c >= '0' && c <= '9') || c == '-' || c == '_';
		if (!ok || ++label > 63) {
			return false;
		}
	}
	return true;
}

static bool parse_ifid(const uint8_t *s, size_t n, uint64_t *ifid)
{
	char text[INET6_ADDRSTRLEN + 1];
	if (n == 0 || n >= sizeof(text)) {
		return false;
	}
	memcpy(text, s, n);
	text[n] = '\0';
	if (n > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
		if (n > 18) {
			return false;
		}
		uint64_t v = 0;
		for (size_t i = 2; i < n; i++) {
			char c = text[i];
			unsigned d;
			if (c >= '0' && c <= '9') {
				d = (unsigned)(c - '0');
			} else if (c >= 'a' && c <= 'f') {
				d = (unsigned)(c - 'a' + 10);
			} else if (c >= 'A' && c <= 'F') {
				d = (unsigned)(c - 'A' + 10);
			} else {
				return false;
			}
			v = v << 4 | d;
		}
		*ifid = v;
		return true;
	}
	if (n < 2 || text[0] != ':' || text[1] != ':') {
		return false;
	}
	uint8_t addr[16];
	if (inet_pton(AF_INET6, text, addr) != 1) {
		return false;
	}
	uint64_t v = 0;
	for (int i = 0; i < 16; i++) {
		if (i < 8 && addr[i] != 0) {
			return false;
		}
		if (i >= 8) {
			v = v << 8 | addr[i];
		}
	}
	*ifid = v;
	return true;
}

mast_err_t mast_host_parse(const uint8_t *rdata, size_t len, const knot_dname_t *zone,
                           knot_dname_storage_t owner, uint64_t *ifid)
{
	const uint8_t *str[4];
	uint8_t str_len[4];
	size_t n;
	if (!txt_strings(rdata, len, str, str_len, 4, &n) || n == 0 ||
	    str_len[0] != strlen(HOST_TAG) || memcmp(str[0], HOST_TAG, strlen(HOST_TAG)) != 0) {
		return MAST_E_NOT_HOST;
	}
	if (n != 3) {
		return MAST_E_HOST_FORMAT;
	}
	if (!host_name_ok(str[1], str_len[1])) {
		return MAST_E_HOST_NAME;
	}
	if (!parse_ifid(str[2], str_len[2], ifid)) {
		return MAST_E_IFID;
	}
	size_t zone_size = knot_dname_size(zone);
	if (str_len[1] == 1 && str[1][0] == '@') {
		memcpy(owner, zone, zone_size);
	} else {
		char text[256];
		memcpy(text, str[1], str_len[1]);
		text[str_len[1]] = '\0';
		knot_dname_storage_t rel;
		/* knot_dname_from_str makes "h1" into h1. (root); drop the root label to append the zone. */
		if (knot_dname_from_str(rel, text, sizeof(rel)) == NULL) {
			return MAST_E_HOST_NAME;
		}
		size_t rel_size = knot_dname_size(rel) - 1;
		if (rel_size + zone_size > KNOT_DNAME_MAXLEN) {
			return MAST_E_HOST_NAME;
		}
		memcpy(owner, rel, rel_size);
		memcpy(owner + rel_size, zone, zone_size);
	}
	knot_dname_to_lower(owner);
	return MAST_OK;
}

void mast_address(const mast_prefix_t *prefix, uint64_t ifid, uint8_t out[16])
{
	memcpy(out, prefix->addr, 16);
	for (int i = 0; i < 8; i++) {
		out[15 - i] |= (uint8_t)(ifid >> (8 * i));
	}
}

void mast_prefix_str(const mast_prefix_t *prefix, char *buf, size_t size)
{
	char addr[INET6_ADDRSTRLEN];
	if (inet_ntop(AF_INET6, prefix->addr, addr, sizeof(addr)) == NULL) {
		snprintf(buf, size, "?");
		return;
	}
	snprintf(buf, size, "%s%s/%u", prefix->discouraged ? "!" : "", addr, prefix->len);
}
