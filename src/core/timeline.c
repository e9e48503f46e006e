/* The training timeline (timeline.h): its records, and its section of the
 * model file, written and checked. Measuring a model is timeline_measure.c. */
#include "attnview/timeline.h"
#include "attnview/i18n.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the records ---------------------------------------------------------- */

static size_t head_values(const timeline *tl)
{
	return (size_t)tl->layers * tl->heads * tl->nvalues;
}

static timeline *tl_alloc(uint32_t layers, uint32_t heads, uint32_t windows, uint32_t n)
{
	timeline *tl = calloc(1, sizeof *tl);
	if (!tl)
		return NULL;
	tl->version = TL_VERSION;
	tl->nvalues = TL_NVALUES;
	tl->layers = layers;
	tl->heads = heads;
	tl->windows = windows;
	tl->n = n;
	tl->probe = malloc((size_t)windows * n * sizeof *tl->probe);
	tl->repeated = malloc((size_t)n * sizeof *tl->repeated);
	if (!tl->probe || !tl->repeated) {
		timeline_destroy(tl);
		return NULL;
	}
	return tl;
}

/* Room for `want` records. */
static bool tl_reserve(timeline *tl, size_t want)
{
	if (want <= tl->cap)
		return true;
	size_t cap = tl->cap ? tl->cap : 16;
	while (cap < want)
		cap *= 2;
	uint64_t *step = realloc(tl->step, cap * sizeof *step);
	if (step)
		tl->step = step;
	float *loss = realloc(tl->loss, cap * sizeof *loss);
	if (loss)
		tl->loss = loss;
	float *pl = realloc(tl->probe_loss, cap * sizeof *pl);
	if (pl)
		tl->probe_loss = pl;
	float *icl = realloc(tl->icl, cap * sizeof *icl);
	if (icl)
		tl->icl = icl;
	float *v = realloc(tl->v, cap * head_values(tl) * sizeof *v);
	if (v)
		tl->v = v;
	if (!step || !loss || !pl || !icl || !v)
		return false;
	tl->cap = cap;
	return true;
}

timeline *timeline_create(const model *m, const uint32_t *probe, uint32_t windows, uint32_t n,
			  uint64_t every, uint64_t seed, av_error *err)
{
	const model_config *c = &m->cfg;
	if (windows < 1 || windows > TL_MAX_WINDOWS || n < 2 || n > c->context || every < 1) {
		av_fail(err, _("the timeline's probe does not fit the model"));
		return NULL;
	}
	timeline *tl = tl_alloc(c->layers, c->heads, windows, n);
	if (!tl) {
		av_fail(err, _("out of memory for the timeline"));
		return NULL;
	}
	tl->every = every;
	tl->seed = seed;
	memcpy(tl->probe, probe, (size_t)windows * n * sizeof *probe);
	/* The repeated probe: n/2 characters drawn from the text probe's
	 * distinct ones (characters the model reads, in a lab task too), twice
	 * (an odd n ends with one more). */
	uint32_t *set = malloc((size_t)windows * n * sizeof *set);
	if (!set) {
		timeline_destroy(tl);
		av_fail(err, _("out of memory for the timeline"));
		return NULL;
	}
	size_t nset = 0;
	for (size_t i = 0; i < (size_t)windows * n; i++) {
		size_t j = 0;
		while (j < nset && set[j] != probe[i])
			j++;
		if (j == nset)
			set[nset++] = probe[i];
	}
	rng r;
	rng_seed(&r, seed ^ TL_PROBE_SALT);
	uint32_t half = n / 2;
	for (uint32_t i = 0; i < n; i++)
		tl->repeated[i] = i < half ? set[rng_below(&r, nset)] : tl->repeated[i - half];
	free(set);
	(void)c;
	return tl;
}

void timeline_destroy(timeline *tl)
{
	if (!tl)
		return;
	free(tl->probe);
	free(tl->repeated);
	free(tl->step);
	free(tl->loss);
	free(tl->probe_loss);
	free(tl->icl);
	free(tl->v);
	free(tl->scored);
	free(tl);
}

bool timeline_set_scored(timeline *tl, const uint8_t *flags, av_error *err)
{
	size_t n = (size_t)tl->windows * tl->n;
	uint8_t *f = malloc(n);
	if (!f)
		return av_fail(err, _("out of memory for the timeline"));
	memcpy(f, flags, n);
	free(tl->scored);
	tl->scored = f;
	return true;
}

timeline *timeline_copy(const timeline *src, av_error *err)
{
	timeline *tl = tl_alloc(src->layers, src->heads, src->windows, src->n);
	if (tl) {
		tl->version = src->version;
		tl->nvalues = src->nvalues;
	}
	if (!tl || !tl_reserve(tl, src->count ? src->count : 1)) {
		timeline_destroy(tl);
		av_fail(err, _("out of memory for the timeline"));
		return NULL;
	}
	tl->every = src->every;
	tl->seed = src->seed;
	tl->count = src->count;
	memcpy(tl->probe, src->probe, (size_t)src->windows * src->n * sizeof *tl->probe);
	memcpy(tl->repeated, src->repeated, (size_t)src->n * sizeof *tl->repeated);
	memcpy(tl->step, src->step, src->count * sizeof *tl->step);
	memcpy(tl->loss, src->loss, src->count * sizeof *tl->loss);
	memcpy(tl->probe_loss, src->probe_loss, src->count * sizeof *tl->probe_loss);
	memcpy(tl->icl, src->icl, src->count * sizeof *tl->icl);
	memcpy(tl->v, src->v, src->count * head_values(src) * sizeof *tl->v);
	return tl;
}

uint64_t timeline_auto_every(uint64_t total)
{
	uint64_t k = (total + TL_RECORDS - 1) / TL_RECORDS;
	return k ? k : 1;
}

/* Records in a run of total steps at K: step 0, every K-th, the last. */
static uint64_t records_of(uint64_t total, uint64_t every)
{
	return total / every + 1 + (total % every != 0);
}

uint64_t timeline_auto_every_cost(uint64_t total, uint32_t batch, uint32_t context)
{
	double chars = (double)(batch ? batch : 1) * (context ? context : 1);
	/* How many records the share affords, beside step 0 and the last. */
	double afford = TL_MAX_SHARE * (double)total * chars / TL_RECORD_CHARS - 2;
	uint64_t k = timeline_auto_every(total);
	if (afford < 1)
		return total > 0 ? total : 1;
	uint64_t least = (uint64_t)ceil((double)total / afford);
	k = k > least ? k : least;
	while (k < total && (double)records_of(total, k) > afford + 2)
		k++;
	return k;
}

double timeline_auto_share(uint64_t total, uint32_t batch, uint32_t context, uint64_t every)
{
	double chars = (double)(batch ? batch : 1) * (context ? context : 1);
	return total && every
		   ? (double)records_of(total, every) * TL_RECORD_CHARS / ((double)total * chars)
		   : 0;
}

bool timeline_due(const timeline *tl, uint64_t step, uint64_t total)
{
	return tl && (step % tl->every == 0 || step == total);
}

/* A place for the record of `step`: the end, or the record it replaces. */
float *timeline_slot(timeline *tl, uint64_t step, size_t *index)
{
	timeline_truncate(tl, step);
	size_t r = tl->count;
	if (r && tl->step[r - 1] == step)
		r--;
	else if (tl->count >= TL_MAX_RECORDS || !tl_reserve(tl, r + 1))
		return NULL;
	*index = r;
	tl->step[r] = step;
	tl->count = r + 1;
	return tl->v + r * head_values(tl);
}

void timeline_truncate(timeline *tl, uint64_t step)
{
	while (tl->count && tl->step[tl->count - 1] > step)
		tl->count--;
}

/* Version 1's scores were shares of weight, which run lower than shares of
 * rows: the bars measured for them (its offset was a share of
 * rows already). Its broad held the rows' normalised entropy (1: even) and
 * had no bar, so every head no other role held was broad, sharp ones too
 * ("broad 0.05" beside local 0.55). Broad now needs half the entropy an
 * even spread has, as today's broad needs half the rows that look
 * nowhere; a sharp head no role holds is unclear, with its closest role. */
static const double v1_bars[ROLE_NKINDS] = {
    [ROLE_PREVIOUS] = 0.4,  [ROLE_NEXT] = 0.4,	    [ROLE_SELF] = 0.4,	    [ROLE_FIRST] = 0.4,
    [ROLE_DELIMITER] = 0.4, [ROLE_DUPLICATE] = 0.3, [ROLE_INDUCTION] = 0.4, [ROLE_LOCAL] = 0.6,
    [ROLE_OFFSET] = 0.5,    [ROLE_KEYWORD] = 0.4,   [ROLE_SCRIPT] = 0.6,    [ROLE_PARALLEL] = 0.3,
    [ROLE_MIRROR] = 0.4,    [ROLE_BROAD] = 0.5,	    [ROLE_WORDSTART] = 1,
};

void timeline_head_roles(const timeline *tl, size_t r, int l, int h, role_scores *out)
{
	memset(out, 0, sizeof *out);
	const float *v = timeline_head(tl, r, l, h);
	for (uint32_t k = 0; k < tl->nvalues && k < ROLE_NKINDS; k++)
		out->s[k] = v[k];
	out->n = (int)tl->n;
	out->column = -1;
	/* the rows behind the rules that need them were not kept: not counted */
	out->word_far = out->script_near = -1;
	out->bars = tl->version == 1 ? v1_bars : NULL;
	role_decide(out);
}

long timeline_phase_change(const timeline *tl, int *head)
{
	int nh = (int)(tl->layers * tl->heads), best = -1;
	double rise = TL_PHASE_RISE;
	for (int k = 0; k < nh && tl->count; k++) {
		float first =
		    timeline_head(tl, 0, k / (int)tl->heads, k % (int)tl->heads)[ROLE_INDUCTION];
		for (size_t r = 1; r < tl->count; r++) {
			float x = timeline_head(tl, r, k / (int)tl->heads,
						k % (int)tl->heads)[ROLE_INDUCTION];
			if (x - first >= rise + 1e-9) {
				rise = x - first;
				best = k;
			}
		}
	}
	if (head)
		*head = best;
	if (best < 0)
		return -1;
	int l = best / (int)tl->heads, h = best % (int)tl->heads;
	for (size_t r = 1; r < tl->count; r++) {
		role_scores rs;
		timeline_head_roles(tl, r, l, h, &rs);
		/* named: an unclear label's role is only the closest */
		if (rs.role == ROLE_INDUCTION && rs.verdict != ROLE_UNSURE)
			return (long)r;
	}
	return -1;
}

/* ---- the section ---------------------------------------------------------- */

static size_t record_bytes(const timeline *tl)
{
	return 20 + 4 * head_values(tl);
}

void timeline_serialize(const timeline *tl, byte_buf *out)
{
	size_t size =
	    TL_HEADER_BYTES + 4 * ((size_t)tl->windows + 1) * tl->n + tl->count * record_bytes(tl);
	bb_bytes(out, TL_MAGIC, 4);
	bb_u32(out, tl->version);
	bb_u64(out, size);
	bb_u32(out, tl->nvalues);
	bb_u32(out, tl->windows);
	bb_u32(out, tl->n);
	bb_u64(out, tl->every);
	bb_u64(out, tl->seed);
	bb_u32(out, (uint32_t)tl->count);
	for (size_t i = 0; i < (size_t)tl->windows * tl->n; i++)
		bb_u32(out, tl->probe[i]);
	for (uint32_t i = 0; i < tl->n; i++)
		bb_u32(out, tl->repeated[i]);
	for (size_t r = 0; r < tl->count; r++) {
		bb_u64(out, tl->step[r]);
		bb_f32(out, tl->loss[r]);
		bb_f32(out, tl->probe_loss[r]);
		bb_f32(out, tl->icl[r]);
		bb_f32s(out, tl->v + r * head_values(tl), head_values(tl));
	}
}

bool timeline_present(const uint8_t *buf, size_t off, size_t len)
{
	return len >= 4 && memcmp(buf + off, TL_MAGIC, 4) == 0;
}

#define TL_DAMAGED                                                                                 \
	_("%s: the timeline at byte %zu: %s at byte %zu: the file is damaged; "                    \
	  "restore it or retrain")

/* The fixed fields (after the magic): checked against the model and the
 * bytes there are. */
typedef struct tl_head {
	uint32_t version, nvalues, windows, n, count;
	uint64_t size, every, seed;
} tl_head;

static bool parse_head(byte_reader *r, const model_config *cfg, size_t len, const char *what,
		       tl_head *h, av_error *err)
{
	size_t base = r->off - 4;
	if (!br_u32(r, &h->version) || !br_u64(r, &h->size) || !br_u32(r, &h->nvalues) ||
	    !br_u32(r, &h->windows) || !br_u32(r, &h->n) || !br_u64(r, &h->every) ||
	    !br_u64(r, &h->seed) || !br_u32(r, &h->count))
		return av_fail(err, TL_DAMAGED, AV_Q(what), base, _("the header is cut short"),
			       r->n);
	if (h->version != TL_VERSION && h->version != 1)
		return av_fail(err,
			       _("%s: the timeline at byte %zu has version %u, but this attnview "
				 "reads version %u%s"),
			       AV_Q(what), base, h->version, TL_VERSION,
			       h->version > TL_VERSION ? _(": upgrade attnview to read it")
						       : _(": the file is damaged"));
	if (h->nvalues != (h->version == 1 ? TL_V1_NVALUES : TL_NVALUES))
		return av_fail(err, TL_DAMAGED, AV_Q(what), base,
			       _("not the number of values per head this version has"), base + 16);
	if (h->windows < 1 || h->windows > TL_MAX_WINDOWS)
		return av_fail(err, TL_DAMAGED, AV_Q(what), base, _("impossible probe windows"),
			       base + 20);
	if (h->n < 2 || h->n > cfg->context)
		return av_fail(err, TL_DAMAGED, AV_Q(what), base,
			       _("a probe longer than the context or shorter than 2"), base + 24);
	if (h->every < 1)
		return av_fail(err, TL_DAMAGED, AV_Q(what), base, _("records every 0 steps"),
			       base + 28);
	size_t rec = 20 + 4 * (size_t)cfg->layers * cfg->heads * h->nvalues;
	size_t fixed = TL_HEADER_BYTES + 4 * ((size_t)h->windows + 1) * h->n;
	if (h->count > TL_MAX_RECORDS || h->size != fixed + (uint64_t)h->count * rec)
		return av_fail(err, TL_DAMAGED, AV_Q(what), base,
			       _("a size that does not match its records"), base + 8);
	if (h->size > len)
		return av_fail(err, TL_DAMAGED, AV_Q(what), base,
			       _("more bytes than the file holds"), base + 8);
	return true;
}

static bool parse_probe(byte_reader *r, uint32_t *cps, size_t count, size_t base, const char *what,
			av_error *err)
{
	for (size_t i = 0; i < count; i++) {
		size_t at = r->off;
		br_u32(r, &cps[i]);
		if (cps[i] >= AV_SPECIAL_CP + TOK_NSPECIAL ||
		    (cps[i] >= 0xD800 && cps[i] <= 0xDFFF))
			return av_fail(err, TL_DAMAGED, AV_Q(what), base,
				       _("a probe character that is not a character"), at);
	}
	return true;
}

/* Every record: steps increasing, losses finite or NaN, values in [0, 1]. */
static bool parse_records(byte_reader *r, timeline *tl, size_t base, const char *what,
			  av_error *err)
{
	size_t nv = head_values(tl);
	for (size_t k = 0; k < tl->count; k++) {
		size_t at = r->off;
		br_u64(r, &tl->step[k]);
		if (k && tl->step[k] <= tl->step[k - 1])
			return av_fail(err, TL_DAMAGED, AV_Q(what), base,
				       _("a record whose step does not follow the one before"), at);
		br_f32(r, &tl->loss[k]);
		br_f32(r, &tl->probe_loss[k]);
		br_f32(r, &tl->icl[k]);
		for (int i = 0; i < 3; i++) {
			float x = i == 0 ? tl->loss[k] : i == 1 ? tl->probe_loss[k] : tl->icl[k];
			if (isinf(x) || (i < 2 && x < 0))
				return av_fail(err, TL_DAMAGED, AV_Q(what), base,
					       _("an impossible loss"), at + 8 + 4 * (size_t)i);
		}
		float *v = tl->v + k * nv;
		size_t vat = r->off;
		br_f32s(r, v, nv);
		for (size_t i = 0; i < nv; i++)
			if (!(v[i] >= 0 && v[i] <= 1))
				return av_fail(err, TL_DAMAGED, AV_Q(what), base,
					       _("a head's score outside [0, 1]"), vat + 4 * i);
	}
	return true;
}

timeline *timeline_parse(const uint8_t *buf, size_t off, size_t len, const model_config *cfg,
			 const char *what, size_t *used, av_error *err)
{
	byte_reader r = {buf, off + len, off + 4};
	tl_head h;
	if (!parse_head(&r, cfg, len, what, &h, err))
		return NULL;
	timeline *tl = tl_alloc(cfg->layers, cfg->heads, h.windows, h.n);
	if (tl) {
		tl->version = h.version;
		tl->nvalues = h.nvalues;
	}
	if (!tl || !tl_reserve(tl, h.count ? h.count : 1)) {
		timeline_destroy(tl);
		av_fail(err, _("out of memory for the timeline"));
		return NULL;
	}
	tl->every = h.every;
	tl->seed = h.seed;
	tl->count = h.count;
	if (!parse_probe(&r, tl->probe, (size_t)h.windows * h.n, off, what, err) ||
	    !parse_probe(&r, tl->repeated, h.n, off, what, err) ||
	    !parse_records(&r, tl, off, what, err)) {
		timeline_destroy(tl);
		return NULL;
	}
	*used = (size_t)h.size;
	return tl;
}
