/* Fuzz harness for mod-mast's zone-data parsing (built with ASan/UBSan).
 *
 * stdin holds cases back to back; each case is
 *   u16 apl_count, apl_count x (u16 len, rdata), u16 txt_count, txt_count x (u16 len, rdata)
 * (big endian). For each case the harness builds the zone view exactly as the module does,
 * looks every mapped host up, synthesises its answer, and prints one line:
 *   status=<err> prefixes=<p1,!p2,...> hosts=<n> host_errors=<n> answer=<a1,a2,...>
 * so tests can check results as well as survival. A truncated case ends the input. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view.h"

static uint8_t *input;
static size_t input_len, input_pos;

static bool read_u16(uint16_t *v)
{
	if (input_len - input_pos < 2) {
		return false;
	}
	*v = (uint16_t)(input[input_pos] << 8 | input[input_pos + 1]);
	input_pos += 2;
	return true;
}

static bool read_rdataset(knot_rdataset_t *rrs)
{
	uint16_t count;
	knot_rdataset_init(rrs);
	if (!read_u16(&count)) {
		return false;
	}
	for (uint16_t i = 0; i < count; i++) {
		uint16_t len;
		if (!read_u16(&len) || input_len - input_pos < len) {
			return false;
		}
		uint8_t buf[knot_rdata_size(UINT16_MAX)];
		knot_rdata_t *rd = (knot_rdata_t *)buf;
		knot_rdata_init(rd, len, input + input_pos);
		input_pos += len;
		if (knot_rdataset_add(rrs, rd, NULL) != KNOT_EOK) {
			return false;
		}
	}
	return true;
}

int main(int argc, char **argv)
{
	bool lima = argc > 1 && strcmp(argv[1], "--lima") == 0;
	size_t cap = 1 << 16;
	input = malloc(cap);
	size_t n;
	while ((n = fread(input + input_len, 1, cap - input_len, stdin)) > 0) {
		input_len += n;
		if (input_len == cap) {
			cap *= 2;
			input = realloc(input, cap);
		}
	}
	const knot_dname_t *zone = (const knot_dname_t *)"\x03""lab""\x04""mast";
	mast_view_t view = { 0 };
	for (;;) {
		knot_rdataset_t apl, txt;
		bool ok = read_rdataset(&apl) && read_rdataset(&txt);
		if (!ok) {
			knot_rdataset_clear(&apl, NULL);
			knot_rdataset_clear(&txt, NULL);
			break;
		}
		if (mast_view_build(&view, zone, &apl, &txt, lima) != KNOT_EOK) {
			printf("build-failed\n");
			return 2;
		}
		printf("status=%d prefixes=", view.status_present ? (int)view.status_err : -1);
		for (size_t i = 0; i < view.prefix_count; i++) {
			char s[64];
			mast_prefix_str(&view.prefixes[i], s, sizeof(s));
			printf("%s%s", i ? "," : "", s);
		}
		printf(" hosts=%zu host_errors=%zu answer=", view.host_count, view.host_errors);
		/* Look up each mapped host by re-parsing its record, as a query for it would. */
		const knot_rdata_t *rd = txt.rdata;
		bool first = true;
		for (uint16_t i = 0; i < txt.count; i++) {
			knot_dname_storage_t owner;
			uint64_t ifid, found;
			if (mast_host_parse(rd->data, rd->len, zone, owner, &ifid) == MAST_OK) {
				if (!mast_view_lookup(&view, owner, &found)) {
					printf("lookup-failed\n");
					return 3;
				}
				const mast_prefix_t *ps[MAST_MAX_PREFIXES];
				size_t np = mast_view_active(&view) ? mast_view_answer_prefixes(&view, ps) : 0;
				for (size_t j = 0; j < np; j++) {
					uint8_t addr[16];
					char s[INET6_ADDRSTRLEN];
					mast_address(ps[j], found, addr);
					inet_ntop(AF_INET6, addr, s, sizeof(s));
					printf("%s%s", first ? "" : ",", s);
					first = false;
				}
			}
			rd = knot_rdataset_next((knot_rdata_t *)rd);
		}
		printf("\n");
		knot_rdataset_clear(&apl, NULL);
		knot_rdataset_clear(&txt, NULL);
	}
	mast_view_free(&view);
	free(input);
	return 0;
}
