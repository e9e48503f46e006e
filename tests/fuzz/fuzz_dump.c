/* Fuzz target: the dump formatter (model_attend + dump_write), on a tiny random
 * model built here so the target needs no file.
 *   byte 0: bit 0 TSV, bits 1-2 layer (0, 1, else all), bits 3-4 head (the
 *           same), bit 5 causal, bits 6-7 top-k (0, 1, 3, 5)
 *   byte 1: weight scale 2^((b & 63) - 16): tiny, ordinary, or big enough that
 *           the scores overflow (a model the loader accepts: every weight is
 *           finite)
 *   rest:   the text, cleaned as a file given with --input. */
#include "fuzz.h"

#include <math.h>
#include <string.h>

#include "json.h"
#include "attnview/dump.h"
#include "attnview/model.h"

static const uint32_t chars[] = {
    'a',
    'b',
    'c',
    'd',
    'e',
    'h',
    'l',
    'o',
    't',
    ' ',
    '\n',
    '"',
    '\\',
    '.',
    0x4f60 /* 你 */,
    0x597d /* 好 */,
    0x4e16 /* 世 */,
    0x754c /* 界 */,
    0xe9 /* é */,
    0x1f600 /* emoji */,
    0xfffd,
    0x2028 /* line separator: JSON-legal, JS-illegal */,
};
#define NCHARS (sizeof chars / sizeof chars[0])

static model *tiny_model(bool causal, int scale, av_error *err)
{
	uint32_t cps[TOK_NSPECIAL + NCHARS];
	for (uint32_t i = 0; i < TOK_NSPECIAL; i++)
		cps[i] = AV_SPECIAL_CP + i;
	memcpy(cps + TOK_NSPECIAL, chars, sizeof chars);
	model_config cfg = {causal ? OBJ_CAUSAL : OBJ_MASKED, TOK_NSPECIAL + NCHARS, 8, 2, 2, 24, {0}};
	model *m = model_create(&cfg, cps, err);
	if (!m)
		return NULL;
	model_init_random(m, 7);
	float f = ldexpf(1.0f, scale);
	for (size_t i = 0; i < m->nparams; i++)
		m->params[i] *= f;
	if (!model_set_meta_strings(m, "fuzz \"tiny\"\n\x01", "corpus\\", err)) {
		model_destroy(m);
		return NULL;
	}
	return m;
}

static int pick(unsigned bits)
{
	return bits < 2 ? (int)bits : -1;
}

static void check_json(const char *s, size_t len, const model *m, const attn_result *r,
		       const dump_options *o)
{
	size_t bad = 0;
	json *j = json_parse(s, len, &bad);
	FUZZ_CHECK(j, "invalid JSON at byte %zu: ...%.40s...", bad, s + (bad > 20 ? bad - 20 : 0));
	const json *nt = json_get(j, "n_tokens");
	FUZZ_CHECK(nt && nt->type == J_NUM && nt->num == r->n, "n_tokens");
	const json *toks = json_get(j, "tokens");
	FUZZ_CHECK(toks && toks->type == J_ARR && toks->n == (size_t)r->n, "tokens");
	const json *att = json_get(j, "attention");
	size_t nl = o->layer < 0 ? m->cfg.layers : 1, nh = o->head < 0 ? m->cfg.heads : 1;
	FUZZ_CHECK(att && att->type == J_ARR && att->n == nl * nh, "attention: %zu heads",
		   att ? att->n : 0);
	for (size_t k = 0; k < att->n; k++) {
		const json *w = json_get(json_at(att, k), "weights");
		FUZZ_CHECK(w && w->type == J_ARR && w->n == (size_t)r->n, "weights");
		for (size_t i = 0; i < w->n; i++) {
			const json *row = json_at(w, i);
			FUZZ_CHECK(row->type == J_ARR && row->n == (size_t)r->n, "weights row");
			for (size_t c = 0; c < row->n; c++)
				FUZZ_CHECK(row->items[c].type == J_NUM ||
					       row->items[c].type == J_NULL,
					   "weight is neither a number nor null");
		}
	}
	const json *pred = json_get(j, "predictions");
	FUZZ_CHECK(!r->topk == !pred, "predictions present: %d, topk %d", pred != NULL, r->topk);
	json_free(j);
}

static void check_tsv(const char *s, size_t len, const model *m, const attn_result *r,
		      const dump_options *o)
{
	size_t nl = o->layer < 0 ? m->cfg.layers : 1, nh = o->head < 0 ? m->cfg.heads : 1;
	size_t want = 1 + nl * nh * (size_t)r->n * (size_t)r->n;
	size_t lines = 0, tabs = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\t')
			tabs++;
		if (s[i] == '\n') {
			FUZZ_CHECK(tabs == 7, "line %zu has %zu tabs", lines + 1, tabs);
			lines++;
			tabs = 0;
		}
	}
	FUZZ_CHECK(len > 0 && s[len - 1] == '\n', "TSV does not end in a line end");
	FUZZ_CHECK(lines == want, "%zu lines, want %zu", lines, want);
}

int fuzz_dump(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	unsigned flags = data[0];
	dump_options o = {(flags & 1) ? DUMP_TSV : DUMP_JSON, pick((flags >> 1) & 3),
			  pick((flags >> 3) & 3), 0, NULL};
	static const int topks[] = {0, 1, 3, 5};
	int topk = topks[flags >> 6];
	av_error err = {{0}};
	/* Built once per objective and scale: the model is not what is fuzzed. */
	static model *cache[2][64];
	bool causal = flags & 0x20;
	model **slot = &cache[causal][data[1] & 63];
	if (!*slot)
		*slot = tiny_model(causal, (data[1] & 63) - 16, &err);
	const model *m = *slot;
	FUZZ_CHECK(m, "%s", err.msg);

	cp_buf cps = {0};
	clean_stats st;
	FUZZ_CHECK(clean_text((const char *)data + 2, size - 2, &cps, &st, &err), "%s", err.msg);
	int n = (int)(cps.n < m->cfg.context ? cps.n : m->cfg.context);
	o.dropped = (int)(cps.n - (size_t)n);
	token *toks = n ? malloc((size_t)n * sizeof *toks) : NULL;
	activations ws = {0};
	attn_result r = {0};
	if (n == 0 || !toks)
		goto out;
	vocab_tokenize(&m->vocab, cps.v, (size_t)n, toks);
	FUZZ_CHECK(activations_init(&ws, &m->cfg, 1, n, n, &err), "%s", err.msg);
	FUZZ_CHECK(model_attend(m, &ws, toks, n, topk, &r, &err), "%s", err.msg);
	FUZZ_CHECK(r.n == n, "attend gave %d tokens for %d", r.n, n);

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	FUZZ_CHECK(f, "open_memstream");
	FUZZ_CHECK(dump_write(f, m, &r, &o, &err), "dump_write failed");
	fclose(f);
	if (o.format == DUMP_JSON)
		check_json(buf, len, m, &r, &o);
	else
		check_tsv(buf, len, m, &r, &o);
	free(buf);
out:
	attn_result_finish(&r);
	activations_finish(&ws);
	free(toks);
	cp_buf_finish(&cps);
	return 0;
}
