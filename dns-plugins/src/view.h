/* A parsed snapshot of one zone's mod-mast data (status RRset + host IFID map), rebuilt when
 * the zone changes. Each knotd worker thread owns one, so the query path takes no lock. */
#pragma once

#include "status.h"

typedef struct {
	uint32_t hash;
	uint32_t name_off; /* offset into names + 1; 0 marks an empty slot */
	uint64_t ifid;
} mast_host_slot_t;

typedef struct {
	/* What the snapshot was built from: a zone update changes the SOA serial and
	 * reallocates the changed rdatasets, so this identifies the zone version. */
	bool built;
	uint32_t serial;
	const void *apl_rdata;
	uint32_t apl_size;
	const void *txt_rdata;
	uint32_t txt_size;

	bool status_present;  /* an APL RRset exists at the apex */
	mast_err_t status_err;
	mast_prefix_t prefixes[MAST_MAX_PREFIXES];
	size_t prefix_count;

	mast_host_slot_t *slots;
	size_t slot_count;    /* power of two, or 0 */
	uint8_t *names;
	size_t names_len;
	size_t names_cap;
	size_t host_count;
	size_t host_errors;
	mast_err_t first_host_err;
} mast_view_t;

/* (Re)build `view` from the apex APL and TXT rdatasets (either may be NULL/empty). */
int mast_view_build(mast_view_t *view, const knot_dname_t *zone, const knot_rdataset_t *apl,
                    const knot_rdataset_t *txt, bool lima);

/* The host's IFID, if `qname` (lowercased) is in the host map. */
bool mast_view_lookup(const mast_view_t *view, const knot_dname_t *qname, uint64_t *ifid);

/* True if the status RRset is present and well formed: answers are synthesised. */
static inline bool mast_view_active(const mast_view_t *view)
{
	return view->status_present && view->status_err == MAST_OK;
}

/* The prefixes to answer with, in preference order, into out (cap MAST_MAX_PREFIXES).
 * Discouraged prefixes are left out, unless every prefix is discouraged: then they are all
 * returned, because a discouraged address still works and is better than none. */
size_t mast_view_answer_prefixes(const mast_view_t *view, const mast_prefix_t **out);

void mast_view_free(mast_view_t *view);
