#include "view.h"

#include <stdlib.h>
#include <string.h>

static uint32_t name_hash(const knot_dname_t *name, size_t size)
{
	uint32_t h = 2166136261u; /* FNV-1a: short keys, no adversary controls the table */
	for (size_t i = 0; i < size; i++) {
		h = (h ^ name[i]) * 16777619u;
	}
	return h;
}

void mast_view_free(mast_view_t *view)
{
	free(view->slots);
	free(view->names);
	memset(view, 0, sizeof(*view));
}

static void parse_status(mast_view_t *view, const knot_rdataset_t *apl, bool lima)
{
	view->prefix_count = 0;
	view->status_err = MAST_OK;
	view->status_present = apl != NULL && apl->count > 0;
	if (!view->status_present) {
		return;
	}
	/* Knot keeps an RRset's records in canonical order, so preference order is defined by the
	 * items of one APL record; several records are read in canonical order. */
	const knot_rdata_t *rd = apl->rdata;
	for (uint16_t i = 0; i < apl->count; i++) {
		mast_err_t err = mast_apl_parse(rd->data, rd->len, view->prefixes,
		                                MAST_MAX_PREFIXES, &view->prefix_count);
		if (err != MAST_OK) {
			view->status_err = err;
			view->prefix_count = 0;
			return;
		}
		rd = knot_rdataset_next((knot_rdata_t *)rd);
	}
	if (lima) {
		for (size_t i = 0; i < view->prefix_count; i++) {
			if (view->prefixes[i].len != 64) {
				view->status_err = MAST_E_LIMA_LEN;
				view->prefix_count = 0;
				return;
			}
		}
	}
}

static int insert_host(mast_view_t *view, const knot_dname_t *owner, uint64_t ifid)
{
	size_t size = knot_dname_size(owner);
	uint32_t h = name_hash(owner, size);
	size_t mask = view->slot_count - 1;
	for (size_t i = h & mask;; i = (i + 1) & mask) {
		mast_host_slot_t *slot = &view->slots[i];
		if (slot->name_off == 0) {
			if (view->names_len + size > view->names_cap) {
				size_t cap = view->names_cap ? view->names_cap * 2 : 4096;
				while (cap < view->names_len + size) {
					cap *= 2;
				}
				uint8_t *names = realloc(view->names, cap);
				if (names == NULL) {
					return KNOT_ENOMEM;
				}
				view->names = names;
				view->names_cap = cap;
			}
			memcpy(view->names + view->names_len, owner, size);
			slot->name_off = (uint32_t)view->names_len + 1;
			slot->hash = h;
			slot->ifid = ifid;
			view->names_len += size;
			view->host_count++;
			return KNOT_EOK;
		}
		if (slot->hash == h &&
		    knot_dname_is_equal(view->names + slot->name_off - 1, owner)) {
			/* Two records for one host: the first in canonical order wins, the rest count as
			 * errors so the operator hears about it. */
			view->host_errors++;
			return KNOT_EOK;
		}
	}
}

static int parse_hosts(mast_view_t *view, const knot_dname_t *zone, const knot_rdataset_t *txt)
{
	view->host_count = 0;
	view->host_errors = 0;
	view->first_host_err = MAST_OK;
	view->names_len = 0;
	size_t want = 16;
	size_t records = txt != NULL ? txt->count : 0;
	while (want < records * 2) {
		want *= 2;
	}
	if (want != view->slot_count) {
		mast_host_slot_t *slots = calloc(want, sizeof(*slots));
		if (slots == NULL) {
			return KNOT_ENOMEM;
		}
		free(view->slots);
		view->slots = slots;
		view->slot_count = want;
	} else {
		memset(view->slots, 0, want * sizeof(*view->slots));
	}
	if (records == 0) {
		return KNOT_EOK;
	}
	const knot_rdata_t *rd = txt->rdata;
	for (uint16_t i = 0; i < txt->count; i++) {
		knot_dname_storage_t owner;
		uint64_t ifid;
		mast_err_t err = mast_host_parse(rd->data, rd->len, zone, owner, &ifid);
		if (err == MAST_OK) {
			int ret = insert_host(view, owner, ifid);
			if (ret != KNOT_EOK) {
				return ret;
			}
		} else if (err != MAST_E_NOT_HOST) {
			if (view->host_errors++ == 0) {
				view->first_host_err = err;
			}
		}
		rd = knot_rdataset_next((knot_rdata_t *)rd);
	}
	return KNOT_EOK;
}

int mast_view_build(mast_view_t *view, const knot_dname_t *zone, const knot_rdataset_t *apl,
                    const knot_rdataset_t *txt, bool lima)
{
	view->built = false;
	parse_status(view, apl, lima);
	int ret = parse_hosts(view, zone, txt);
	if (ret != KNOT_EOK) {
		return ret;
	}
	view->built = true;
	return KNOT_EOK;
}

bool mast_view_lookup(const mast_view_t *view, const knot_dname_t *qname, uint64_t *ifid)
{
	if (view->slot_count == 0 || view->host_count == 0) {
		return false;
	}
	size_t size = knot_dname_size(qname);
	uint32_t h = name_hash(qname, size);
	size_t mask = view->slot_count - 1;
	for (size_t i = h & mask;; i = (i + 1) & mask) {
		const mast_host_slot_t *slot = &view->slots[i];
		if (slot->name_off == 0) {
			return false;
		}
		if (slot->hash == h && knot_dname_is_equal(view->names + slot->name_off - 1, qname)) {
			*ifid = slot->ifid;
			return true;
		}
	}
}

size_t mast_view_answer_prefixes(const mast_view_t *view, const mast_prefix_t **out)
{
	size_t n = 0;
	for (size_t i = 0; i < view->prefix_count; i++) {
		if (!view->prefixes[i].discouraged) {
			out[n++] = &view->prefixes[i];
		}
	}
	if (n == 0) {
		for (size_t i = 0; i < view->prefix_count; i++) {
			out[n++] = &view->prefixes[i];
		}
	}
	return n;
}
