/* mod-mast: synthesise a host's AAAA answer from the zone's prefix-status RRset (apex APL)
 * and the host's interface ID (apex TXT "mast-host" map), so one RFC 2136 update of the APL
 * record flips a prefix for every name in the zone. Design notes: ../README.md. */

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <knot/module.h>

#include "view.h"

#define MOD_TTL  "\x03""ttl"
#define MOD_LIMA "\x04""lima"

const yp_item_t mast_conf[] = {
	{ MOD_TTL,  YP_TINT,  YP_VINT = { 0, INT32_MAX, 60, YP_STIME } },
	{ MOD_LIMA, YP_TBOOL, YP_VNONE },
	{ NULL }
};

/* Counters of `knotc zone-stats <zone> mod-mast`. */
enum { CTR_SYNTHESISED, CTR_NODATA, CTR_FALLBACK, CTR_COUNT };
static const char *const ctr_names[CTR_COUNT] = { "synthesised", "nodata", "fallback" };

static char *ctr_to_str(uint32_t idx, uint32_t count)
{
	(void)count;
	return idx < CTR_COUNT ? strdup(ctr_names[idx]) : NULL;
}

typedef struct {
	knotd_mod_t *mod;
	uint32_t ttl;
	bool lima;
	bool dnssec;                /* the zone is signed: sign synthesised AAAA for DO queries */
	/* Signing state, shared by all workers: Knot's signing context is not meant for
	 * concurrent use, and the keyset is reloaded when the zone's DNSKEY RRset changes. */
	pthread_mutex_t sign_lock;
	bool keys_tried;
	bool keys_loaded;
	const void *dnskey_rdata;
	uint32_t dnskey_size;
	const knot_dname_t *zone;
	char zone_str[KNOT_DNAME_TXT_MAXLEN + 1];
	unsigned threads;
	mast_view_t *views;         /* one per worker thread: no lock on the query path */
	pthread_mutex_t spare_lock; /* guards `spare`, for a thread id beyond `threads` */
	mast_view_t spare;
	/* Zone version last reported in the log, so a malformed RRset is one log line per
	 * zone version, not one per query and thread. */
	atomic_uint_fast64_t logged_version;
} mast_ctx_t;

static void log_version(knotd_mod_t *mod, mast_ctx_t *ctx, const mast_view_t *view)
{
	/* A reload can change the zone without changing the serial: the rdata addresses tell. */
	uint64_t where = (uint64_t)(uintptr_t)view->apl_rdata ^ ((uint64_t)(uintptr_t)view->txt_rdata >> 4);
	uint64_t version = ((where & 0x7fffffffull) << 32 | 1ull << 63) | view->serial;
	if (atomic_exchange(&ctx->logged_version, version) == version) {
		return;
	}
	if (!view->status_present) {
		knotd_mod_log(mod, LOG_WARNING, "zone %s serial %u: no APL status RRset at the apex, "
		              "answering from literal AAAA records", ctx->zone_str, view->serial);
	} else if (view->status_err != MAST_OK) {
		knotd_mod_log(mod, LOG_ERR, "zone %s serial %u: malformed APL status RRset (%s), "
		              "answering from literal AAAA records", ctx->zone_str, view->serial,
		              mast_strerror(view->status_err));
	} else {
		char list[MAST_MAX_PREFIXES * 46] = "";
		size_t used = 0;
		for (size_t i = 0; i < view->prefix_count && used < sizeof(list); i++) {
			char one[64];
			mast_prefix_str(&view->prefixes[i], one, sizeof(one));
			int n = snprintf(list + used, sizeof(list) - used, "%s%s", i ? " " : "", one);
			used += n > 0 ? (size_t)n : 0;
		}
		knotd_mod_log(mod, LOG_INFO, "zone %s serial %u: prefixes [%s], %zu hosts",
		              ctx->zone_str, view->serial, list, view->host_count);
	}
	if (view->host_errors > 0) {
		knotd_mod_log(mod, LOG_WARNING, "zone %s serial %u: %zu mast-host records skipped "
		              "(first: %s)", ctx->zone_str, view->serial, view->host_errors,
		              mast_strerror(view->first_host_err));
	}
}

/* Bring `view` up to the zone version the query sees; false if it cannot be built. */
static bool refresh(knotd_mod_t *mod, mast_ctx_t *ctx, mast_view_t *view, knotd_qdata_t *qdata)
{
	knot_rrset_t soa = knotd_qdata_zone_apex_rrset(qdata, KNOT_RRTYPE_SOA);
	knot_rrset_t apl = knotd_qdata_zone_apex_rrset(qdata, KNOT_RRTYPE_APL);
	knot_rrset_t txt = knotd_qdata_zone_apex_rrset(qdata, KNOT_RRTYPE_TXT);
	uint32_t serial = soa.rrs.count > 0 ? knot_soa_serial(soa.rrs.rdata) : 0;
	if (view->built && view->serial == serial &&
	    view->apl_rdata == apl.rrs.rdata && view->apl_size == apl.rrs.size &&
	    view->txt_rdata == txt.rrs.rdata && view->txt_size == txt.rrs.size) {
		return true;
	}
	if (mast_view_build(view, ctx->zone, &apl.rrs, &txt.rrs, ctx->lima) != KNOT_EOK) {
		return false;
	}
	view->serial = serial;
	view->apl_rdata = apl.rrs.rdata;
	view->apl_size = apl.rrs.size;
	view->txt_rdata = txt.rrs.rdata;
	view->txt_size = txt.rrs.size;
	log_version(mod, ctx, view);
	return true;
}

/* Sign `rr` into `rrsig` with the zone's current keys; false if no keys are available. */
static bool sign_rrset(mast_ctx_t *ctx, knotd_qdata_t *qdata, knot_rrset_t *rrsig,
                       const knot_rrset_t *rr, knot_mm_t *mm)
{
	knot_rrset_t dnskey = knotd_qdata_zone_apex_rrset(qdata, KNOT_RRTYPE_DNSKEY);
	pthread_mutex_lock(&ctx->sign_lock);
	if (!ctx->keys_tried || ctx->dnskey_rdata != dnskey.rrs.rdata ||
	    ctx->dnskey_size != dnskey.rrs.size) {
		if (ctx->keys_loaded) {
			knotd_mod_dnssec_unload_keyset(ctx->mod);
		}
		/* Knot's module signing context lists the zone's keys as they were at module load:
		 * the keys of a zone signed for the first time, or after a rollover, are seen only
		 * after `knotc reload` (README.md, DNSSEC). */
		ctx->keys_loaded = knotd_mod_dnssec_load_keyset(ctx->mod, false) == KNOT_EOK;
		ctx->keys_tried = true;
		ctx->dnskey_rdata = dnskey.rrs.rdata;
		ctx->dnskey_size = dnskey.rrs.size;
		if (!ctx->keys_loaded) {
			knotd_mod_log(ctx->mod, LOG_WARNING, "zone %s: no DNSSEC keys to sign synthesised "
			              "AAAA records with, answering unsigned; run 'knotc reload' once the "
			              "zone's keys exist", ctx->zone_str);
		}
	}
	bool ok = ctx->keys_loaded &&
	          knotd_mod_dnssec_sign_rrset(ctx->mod, rrsig, rr, mm) == KNOT_EOK;
	pthread_mutex_unlock(&ctx->sign_lock);
	return ok;
}

/* DNSSEC answer: one RRset (an RRSIG covers a whole RRset, so wire order is canonical, not
 * preference order) and its signature. */
static knotd_in_state_t put_signed_aaaa(knot_pkt_t *pkt, knotd_qdata_t *qdata, mast_ctx_t *ctx,
                                        const mast_prefix_t **prefixes, size_t n, uint64_t ifid,
                                        uint16_t hint)
{
	knot_rrset_t *rr = knot_rrset_new(qdata->name, KNOT_RRTYPE_AAAA, KNOT_CLASS_IN, ctx->ttl,
	                                  &pkt->mm);
	knot_rrset_t *rrsig = knot_rrset_new(qdata->name, KNOT_RRTYPE_RRSIG, KNOT_CLASS_IN,
	                                     ctx->ttl, &pkt->mm);
	if (rr == NULL || rrsig == NULL) {
		knot_rrset_free(rr, &pkt->mm);
		knot_rrset_free(rrsig, &pkt->mm);
		qdata->rcode = KNOT_RCODE_SERVFAIL;
		return KNOTD_IN_STATE_ERROR;
	}
	for (size_t i = 0; i < n; i++) {
		uint8_t addr[16];
		mast_address(prefixes[i], ifid, addr);
		if (knot_rrset_add_rdata(rr, addr, sizeof(addr), &pkt->mm) != KNOT_EOK) {
			knot_rrset_free(rr, &pkt->mm);
			knot_rrset_free(rrsig, &pkt->mm);
			qdata->rcode = KNOT_RCODE_SERVFAIL;
			return KNOTD_IN_STATE_ERROR;
		}
	}
	bool signed_ok = sign_rrset(ctx, qdata, rrsig, rr, &pkt->mm);
	int ret = knot_pkt_put(pkt, hint, rr, KNOT_PF_FREE);
	if (ret == KNOT_EOK && signed_ok && rrsig->rrs.count > 0) {
		ret = knot_pkt_put(pkt, hint, rrsig, KNOT_PF_FREE);
	} else {
		knot_rrset_free(rrsig, &pkt->mm);
	}
	if (ret == KNOT_ESPACE) {
		return KNOTD_IN_STATE_TRUNC;
	} else if (ret != KNOT_EOK) {
		qdata->rcode = KNOT_RCODE_SERVFAIL;
		return KNOTD_IN_STATE_ERROR;
	}
	knot_wire_set_aa(pkt->wire);
	return KNOTD_IN_STATE_HIT;
}

static knotd_in_state_t put_aaaa(knot_pkt_t *pkt, knotd_qdata_t *qdata, mast_ctx_t *ctx,
                                 const mast_view_t *view, uint64_t ifid)
{
	const mast_prefix_t *prefixes[MAST_MAX_PREFIXES];
	size_t n = mast_view_answer_prefixes(view, prefixes);
	if (n == 0) {
		return KNOTD_IN_STATE_NODATA;
	}
	/* After a CNAME inside the zone the owner is not the QNAME: no compression hint then. */
	uint16_t hint = qdata->name == knot_pkt_qname(qdata->query) ? KNOT_COMPR_HINT_QNAME
	                                                             : KNOT_COMPR_HINT_NONE;
	if (ctx->dnssec && knot_pkt_has_dnssec(qdata->query)) {
		return put_signed_aaaa(pkt, qdata, ctx, prefixes, n, ifid, hint);
	}
	/* Knot sorts the records of one RRset canonically; one single-record RRset per address
	 * keeps the status RRset's preference order on the wire. */
	for (size_t i = 0; i < n; i++) {
		knot_rrset_t *rr = knot_rrset_new(qdata->name, KNOT_RRTYPE_AAAA, KNOT_CLASS_IN,
		                                  ctx->ttl, &pkt->mm);
		if (rr == NULL) {
			qdata->rcode = KNOT_RCODE_SERVFAIL;
			return KNOTD_IN_STATE_ERROR;
		}
		uint8_t addr[16];
		mast_address(prefixes[i], ifid, addr);
		if (knot_rrset_add_rdata(rr, addr, sizeof(addr), &pkt->mm) != KNOT_EOK) {
			knot_rrset_free(rr, &pkt->mm);
			qdata->rcode = KNOT_RCODE_SERVFAIL;
			return KNOTD_IN_STATE_ERROR;
		}
		int ret = knot_pkt_put(pkt, hint, rr, KNOT_PF_FREE);
		if (ret == KNOT_ESPACE) {
			return KNOTD_IN_STATE_TRUNC;
		} else if (ret != KNOT_EOK) {
			qdata->rcode = KNOT_RCODE_SERVFAIL;
			return KNOTD_IN_STATE_ERROR;
		}
	}
	knot_wire_set_aa(pkt->wire);
	return KNOTD_IN_STATE_HIT;
}

/* Run `fn` with this thread's view, refreshed to the queried zone version. */
static knotd_in_state_t with_view(knotd_in_state_t state, knot_pkt_t *pkt, knotd_qdata_t *qdata,
                                  knotd_mod_t *mod,
                                  knotd_in_state_t (*fn)(knotd_in_state_t, knot_pkt_t *,
                                                         knotd_qdata_t *, mast_ctx_t *,
                                                         const mast_view_t *))
{
	mast_ctx_t *ctx = knotd_mod_ctx(mod);
	unsigned tid = qdata->params != NULL ? qdata->params->thread_id : ctx->threads;
	mast_view_t *view;
	bool locked = tid >= ctx->threads;
	if (locked) {
		pthread_mutex_lock(&ctx->spare_lock);
		view = &ctx->spare;
	} else {
		view = &ctx->views[tid];
	}
	knotd_in_state_t out = state;
	int counter = -1;
	if (refresh(mod, ctx, view, qdata) && mast_view_active(view)) {
		out = fn(state, pkt, qdata, ctx, view);
		if (out == KNOTD_IN_STATE_HIT) {
			counter = CTR_SYNTHESISED;
		} else if (out == KNOTD_IN_STATE_NODATA && out != state) {
			counter = CTR_NODATA;
		}
	} else {
		counter = CTR_FALLBACK;
	}
	if (locked) {
		pthread_mutex_unlock(&ctx->spare_lock);
	} else if (counter >= 0) {
		/* Knot sizes per-thread counters by knotd_mod_threads: only in-range ids count. */
		knotd_mod_stats_incr(mod, tid, 0, (uint32_t)counter, 1);
	}
	return out;
}

static knotd_in_state_t preanswer(knotd_in_state_t state, knot_pkt_t *pkt, knotd_qdata_t *qdata,
                                  mast_ctx_t *ctx, const mast_view_t *view)
{
	uint16_t qtype = knot_pkt_qtype(qdata->query);
	uint64_t ifid;
	if ((qtype != KNOT_RRTYPE_AAAA && qtype != KNOT_RRTYPE_ANY) ||
	    !mast_view_lookup(view, qdata->name, &ifid)) {
		return state;
	}
	return put_aaaa(pkt, qdata, ctx, view, ifid);
}

static knotd_in_state_t after_lookup(knotd_in_state_t state, knot_pkt_t *pkt,
                                    knotd_qdata_t *qdata, mast_ctx_t *ctx,
                                    const mast_view_t *view)
{
	uint64_t ifid;
	if (!mast_view_lookup(view, qdata->name, &ifid)) {
		return state;
	}
	uint16_t qtype = knot_pkt_qtype(qdata->query);
	bool aaaa = qtype == KNOT_RRTYPE_AAAA || qtype == KNOT_RRTYPE_ANY;
	if (state == KNOTD_IN_STATE_NODATA) {
		/* A CNAME led to a mapped host whose own node has no AAAA: synthesise them. */
		return aaaa ? put_aaaa(pkt, qdata, ctx, view, ifid) : state;
	}
	if (!aaaa && ctx->dnssec) {
		/* Knot's denial proof would be for a name with no node: keep its NXDOMAIN. Signed
		 * zones give mapped hosts a node of their own (README.md, DNSSEC). */
		return state;
	}
	/* A mapped host exists (it has AAAA records) even with no node of its own in the zone:
	 * other types get NODATA, not NXDOMAIN. */
	qdata->rcode = KNOT_RCODE_NOERROR;
	if (aaaa) {
		/* Reached through a CNAME inside the zone (PREANSWER saw only the alias). */
		return put_aaaa(pkt, qdata, ctx, view, ifid);
	}
	return KNOTD_IN_STATE_NODATA;
}

static knotd_in_state_t mast_preanswer(knotd_in_state_t state, knot_pkt_t *pkt,
                                       knotd_qdata_t *qdata, knotd_mod_t *mod)
{
	if (state == KNOTD_IN_STATE_HIT || state == KNOTD_IN_STATE_FOLLOW ||
	    state == KNOTD_IN_STATE_ERROR || state == KNOTD_IN_STATE_TRUNC) {
		return state;
	}
	return with_view(state, pkt, qdata, mod, preanswer);
}

static knotd_in_state_t mast_answer(knotd_in_state_t state, knot_pkt_t *pkt,
                                    knotd_qdata_t *qdata, knotd_mod_t *mod)
{
	/* PREANSWER already answered AAAA for the QNAME itself; what is left is a name reached
	 * through a CNAME, or a mapped host without a node of its own. */
	if (state != KNOTD_IN_STATE_MISS && state != KNOTD_IN_STATE_NODATA) {
		return state;
	}
	return with_view(state, pkt, qdata, mod, after_lookup);
}

static void free_ctx(mast_ctx_t *ctx)
{
	if (ctx->views != NULL) {
		for (unsigned i = 0; i < ctx->threads; i++) {
			mast_view_free(&ctx->views[i]);
		}
		free(ctx->views);
	}
	mast_view_free(&ctx->spare);
	pthread_mutex_destroy(&ctx->spare_lock);
	if (ctx->keys_loaded) {
		knotd_mod_dnssec_unload_keyset(ctx->mod);
	}
	pthread_mutex_destroy(&ctx->sign_lock);
	free(ctx);
}

int mast_load(knotd_mod_t *mod)
{
	mast_ctx_t *ctx = calloc(1, sizeof(*ctx));
	if (ctx == NULL) {
		return KNOT_ENOMEM;
	}
	ctx->mod = mod;
	pthread_mutex_init(&ctx->spare_lock, NULL);
	pthread_mutex_init(&ctx->sign_lock, NULL);
	atomic_init(&ctx->logged_version, 0);
	ctx->zone = knotd_mod_zone(mod);
	if (ctx->zone == NULL || knot_dname_to_str(ctx->zone_str, ctx->zone,
	                                           sizeof(ctx->zone_str)) == NULL) {
		knotd_mod_log(mod, LOG_ERR, "mod-mast is a zone module: configure it in a zone section");
		free_ctx(ctx);
		return KNOT_EINVAL;
	}
	knotd_conf_t conf = knotd_conf_mod(mod, MOD_TTL);
	ctx->ttl = (uint32_t)conf.single.integer;
	conf = knotd_conf_mod(mod, MOD_LIMA);
	ctx->lima = conf.single.boolean;
	ctx->threads = knotd_mod_threads(mod);
	ctx->views = calloc(ctx->threads > 0 ? ctx->threads : 1, sizeof(*ctx->views));
	if (ctx->views == NULL) {
		free_ctx(ctx);
		return KNOT_ENOMEM;
	}

	conf = knotd_conf_zone(mod, (const yp_name_t *)"\x0e""dnssec-signing", ctx->zone);
	if (conf.count > 0 && conf.single.boolean) {
		ctx->dnssec = knotd_mod_dnssec_init(mod) == KNOT_EOK;
		if (!ctx->dnssec) {
			knotd_mod_log(mod, LOG_ERR, "zone %s: DNSSEC signing is on but the module's signing "
			              "context failed: synthesised AAAA answers go out unsigned",
			              ctx->zone_str);
		}
	}

	int ret = knotd_mod_stats_add(mod, "answers", CTR_COUNT, ctr_to_str);
	if (ret != KNOT_EOK) {
		free_ctx(ctx);
		return ret;
	}
	knotd_mod_ctx_set(mod, ctx);
	ret = knotd_mod_in_hook(mod, KNOTD_STAGE_PREANSWER, mast_preanswer);
	if (ret == KNOT_EOK) {
		ret = knotd_mod_in_hook(mod, KNOTD_STAGE_ANSWER, mast_answer);
	}
	return ret;
}

void mast_unload(knotd_mod_t *mod)
{
	mast_ctx_t *ctx = knotd_mod_ctx(mod);
	if (ctx != NULL) {
		free_ctx(ctx);
	}
}

KNOTD_MOD_API(mast, KNOTD_MOD_FLAG_SCOPE_ZONE | KNOTD_MOD_FLAG_OPT_CONF,
              mast_load, mast_unload, mast_conf, NULL);
