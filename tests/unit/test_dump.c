/* The dump: valid JSON carrying the tokens and every weight; rows that sum to
 * one; causal rows exactly zero above the diagonal; TSV with one row per
 * weight and the same numbers. */
#include "harness.h"
#include "json.h"

#include "attnview/dump.h"
#include "attnview/modelfile.h"
#include "attnview/timeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct capture {
	char *buf;
	size_t len;
} capture;

static void run(const model *m, const char *text, const dump_options *o, capture *out)
{
	cp_buf cps = {0};
	av_error err;
	CHECKF(tokenize_text(text, strlen(text), "--text", &cps, NULL, &err), "%s", err.msg);
	int n = (int)cps.n;
	token *t = malloc((size_t)n * sizeof *t);
	vocab_tokenize(&m->vocab, cps.v, cps.n, t);
	activations ws;
	CHECK(activations_init(&ws, &m->cfg, 1, n, n, &err));
	attn_result r;
	CHECKF(model_attend(m, &ws, t, n, 5, &r, &err), "%s", err.msg);
	FILE *f = open_memstream(&out->buf, &out->len);
	CHECKF(dump_write(f, m, &r, o, &err), "%s", err.msg);
	fclose(f);
	attn_result_finish(&r);
	activations_finish(&ws);
	free(t);
	cp_buf_finish(&cps);
}

static json *run_json_with(const model *m, const char *text, int layer, int head,
			   const dump_extras *x)
{
	dump_options o = {DUMP_JSON, layer, head, 0, x};
	capture c;
	run(m, text, &o, &c);
	size_t off = 0;
	json *j = json_parse(c.buf, c.len, &off);
	CHECKF(j != NULL, "the dump is not valid JSON: error at byte %zu near \"%.40s\"", off,
	       c.buf + (off < c.len ? off : 0));
	free(c.buf);
	return j;
}

static json *run_json(const model *m, const char *text, int layer, int head)
{
	return run_json_with(m, text, layer, head, NULL);
}

static void check_json(const model *m, const char *text)
{
	json *j = run_json(m, text, -1, -1);
	if (!j)
		return;
	const bool causal = m->cfg.objective == OBJ_CAUSAL;
	const json *toks = json_get(j, "tokens");
	CHECK(toks && toks->type == J_ARR);
	size_t n = toks ? toks->n : 0;
	CHECK(json_get(j, "n_tokens") && json_get(j, "n_tokens")->num == (double)n);
	for (size_t i = 0; i < n; i++) {
		const json *t = json_at(toks, i);
		CHECK(json_get(t, "index")->num == (double)i);
		CHECK(json_get(t, "codepoint") && json_get(t, "char") && json_get(t, "width") &&
		      json_get(t, "id") && json_get(t, "unknown"));
		const json *w = json_get(t, "width");
		CHECK(w && (w->num == 1 || w->num == 2));
		const json *unk = json_get(t, "unknown");
		CHECK(unk && unk->b == (json_get(t, "id")->num == TOK_UNK));
	}
	const json *att = json_get(j, "attention");
	CHECK(att && att->n == (size_t)m->cfg.layers * m->cfg.heads);
	int bad_sum = 0, bad_mask = 0;
	for (size_t a = 0; att && a < att->n; a++) {
		const json *w = json_get(json_at(att, a), "weights");
		const json *s = json_get(json_at(att, a), "scores");
		CHECK(w && w->n == n && s && s->n == n);
		for (size_t q = 0; w && q < n; q++) {
			const json *row = json_at(w, q);
			double sum = 0;
			for (size_t k = 0; k < n; k++) {
				const json *x = json_at(row, k);
				const json *sc = json_at(json_at(s, q), k);
				sum += x->num;
				if (causal && k > q && (x->num != 0.0 || sc->type != J_NULL))
					bad_mask++;
				if (!(causal && k > q) && sc->type != J_NUM)
					bad_mask++;
			}
			if (fabs(sum - 1.0) > 1e-5)
				bad_sum++;
		}
	}
	CHECKF(bad_sum == 0, "%d attention rows do not sum to 1 within 1e-5", bad_sum);
	CHECKF(bad_mask == 0, "%d cells break the causal mask rule", bad_mask);
	const json *pred = json_get(j, "predictions");
	CHECK(pred && pred->n == n && json_at(pred, 0)->n == 5);
	json_free(j);

	/* --layer/--head narrow the dump to one matrix. */
	j = run_json(m, text, (int)m->cfg.layers - 1, 1);
	att = json_get(j, "attention");
	CHECK(att && att->n == 1);
	CHECK(json_get(json_at(att, 0), "layer")->num == m->cfg.layers - 1);
	CHECK(json_get(json_at(att, 0), "head")->num == 1);
	json_free(j);
}

/* TSV: a header, then one row per weight, equal to the JSON numbers. */
static void check_tsv(const model *m, const char *text)
{
	dump_options o = {DUMP_TSV, -1, -1, 0, NULL};
	capture c;
	run(m, text, &o, &c);
	json *j = run_json(m, text, -1, -1);
	const json *att = json_get(j, "attention");
	size_t n = json_get(j, "tokens")->n;
	char *line = strtok(c.buf, "\n");
	CHECK(line &&
	      strcmp(line, "layer\thead\tquery\tkey\tquery_char\tkey_char\tweight\tscore") == 0);
	size_t rows = 0;
	int mismatch = 0;
	while ((line = strtok(NULL, "\n"))) {
		int l, h, q, k;
		char qc[32], kc[32];
		double w;
		int fields = sscanf(line, "%d\t%d\t%d\t%d\t%31[^\t]\t%31[^\t]\t%lf", &l, &h, &q, &k,
				    qc, kc, &w);
		if (fields != 7) {
			mismatch++;
			continue;
		}
		const json *mat = json_get(json_at(att, (size_t)l * m->cfg.heads + h), "weights");
		if (json_at(json_at(mat, q), k)->num != w)
			mismatch++;
		rows++;
	}
	CHECKF(rows == (size_t)m->cfg.layers * m->cfg.heads * n * n,
	       "%zu TSV rows for %u layers, %u heads, %zu tokens", rows, m->cfg.layers,
	       m->cfg.heads, n);
	CHECKF(mismatch == 0, "%d TSV rows differ from the JSON", mismatch);
	json_free(j);
	free(c.buf);
}

/* Characters JSON must escape survive the round trip. */
static void check_escaping(const model *m)
{
	json *j = run_json(m, "a\"b\\c", -1, -1);
	const json *toks = json_get(j, "tokens");
	CHECK(toks && toks->n == 5);
	CHECK(toks && strcmp(json_get(json_at(toks, 1), "char")->str, "\"") == 0);
	CHECK(toks && strcmp(json_get(json_at(toks, 3), "char")->str, "\\") == 0);
	json_free(j);
}

/* --dump --timeline: a record per step with the losses and, for every
 * head shown, its scores under the names of the "heads" section, entropy
 * and first beside them; TSV a row per record and head, the same numbers. */
static void check_timeline(model *m)
{
	uint32_t probe[16];
	for (int i = 0; i < 16; i++)
		probe[i] = m->vocab.cps[TOK_NSPECIAL + (uint32_t)i % (m->cfg.vocab_size - 3)];
	av_error err;
	dump_options o = {DUMP_JSON, -1, -1, 0, NULL};
	capture c = {0};
	FILE *f = open_memstream(&c.buf, &c.len);
	CHECK(!dump_timeline(f, m, "m.attn", &o, &err) && strstr(err.msg, "m.attn: ") == NULL &&
	      strstr(err.msg, "no training timeline"));
	fclose(f);
	free(c.buf);
	m->timeline = timeline_create(m, probe, 1, 16, 10, 1, &err);
	CHECKF(m->timeline, "%s", err.msg);
	for (uint64_t s = 0; m->timeline && s <= 20; s += 10)
		CHECK(timeline_record(m->timeline, m, s, 3.0f - (float)s / 10, true, &err));
	const timeline *tl = m->timeline;
	o.layer = 1;
	f = open_memstream(&c.buf, &c.len);
	CHECK(tl && dump_timeline(f, m, "m.attn", &o, &err));
	fclose(f);
	size_t off = 0;
	json *j = json_parse(c.buf, c.len, &off);
	CHECKF(j != NULL, "not JSON at byte %zu", off);
	free(c.buf);
	const json *recs = j ? json_get(j, "timeline") : NULL;
	CHECK(recs && recs->n == 3 && json_get(j, "every")->num == 10);
	const json *r1 = recs ? json_at(recs, 1) : NULL;
	const json *heads = r1 ? json_get(r1, "heads") : NULL;
	CHECK(r1 && json_get(r1, "step")->num == 10 && json_get(r1, "loss")->num == 2.0 &&
	      json_get(json_at(recs, 0), "val_loss")->type == J_NUM);
	CHECK(heads && heads->n == m->cfg.heads && json_get(json_at(heads, 0), "layer")->num == 1);
	const json *h0 = heads ? json_at(heads, 0) : NULL;
	const json *sc = h0 ? json_get(h0, "scores") : NULL;
	CHECK(sc && sc->n == TL_NVALUES);
	for (int k = 0; sc && tl && k < TL_NVALUES; k++) {
		const json *v = json_get(sc, role_score_key((role_kind)k));
		CHECKF(v && (float)v->num == timeline_head(tl, 1, 1, 0)[k], "score %s",
		       role_score_key((role_kind)k));
	}
	/* the labeller's word on the recorded scores, as the timeline screen's */
	role_scores rs;
	if (tl)
		timeline_head_roles(tl, 1, 1, 0, &rs);
	const json *role = h0 ? json_get(h0, "role") : NULL;
	CHECK(tl && role && role->type == J_STR && strcmp(role->str, role_name(rs.role)) == 0 &&
	      json_get(h0, "label") && json_get(j, "version")->num == TL_VERSION);
	json_free(j);
	o.format = DUMP_TSV;
	o.layer = -1;
	f = open_memstream(&c.buf, &c.len);
	CHECK(dump_timeline(f, m, "m.attn", &o, &err));
	fclose(f);
	int lines = 0;
	for (size_t i = 0; i < c.len; i++)
		lines += c.buf[i] == '\n';
	CHECK(lines == 1 + 3 * (int)(m->cfg.layers * m->cfg.heads));
	CHECK(strncmp(c.buf, "step\tloss\tval_loss\ticl\tlayer\thead\tprevious\t", 41) == 0);
	CHECK(strstr(c.buf, "\n10\t2\t") != NULL);
	free(c.buf);
	timeline_destroy(m->timeline);
	m->timeline = NULL;
}

/* "logits": a row per position, a number per id, each the float given;
 * -INFINITY (a model without the special tokens) as null. */
static void check_logits(const model *m)
{
	const size_t V = m->cfg.vocab_size;
	const char *text = "月光";
	float *lg = malloc(2 * V * sizeof *lg);
	for (size_t i = 0; i < 2 * V; i++)
		lg[i] = i % V < TOK_NSPECIAL ? -INFINITY : (float)i * 0.25f - 3.0f;
	dump_extras x = {.logits = lg};
	json *j = run_json_with(m, text, -1, -1, &x);
	const json *rows = j ? json_get(j, "logits") : NULL;
	CHECK(rows && rows->n == 2);
	for (size_t r = 0; rows && r < 2; r++) {
		const json *row = json_at(rows, r);
		CHECK(row && row->n == V);
		for (size_t i = 0; row && i < V; i++) {
			const json *v = json_at(row, i);
			CHECK(i < TOK_NSPECIAL ? v->type == J_NULL
					       : v->type == J_NUM && v->num == lg[r * V + i]);
		}
	}
	json_free(j);
	free(lg);
}

/* "contributions": each head's entry labels its own map (the weights
 * times the value norms, as shares of each row), not the weights: with
 * key 0's value a million million times the others', every row's share is
 * there whatever the weights, and every head's contributions are "first". */
static void check_contributions(const model *m)
{
	const char *text = "床前明月光，疑是地上霜。";
	const size_t L = m->cfg.layers, H = m->cfg.heads, n = 12;
	float *vn = malloc(L * H * n * sizeof *vn);
	for (size_t i = 0; i < L * H * n; i++)
		vn[i] = i % n == 0 ? 1e12f : 1.0f;
	dump_extras x = {.value_norms = vn};
	json *j = run_json_with(m, text, -1, -1, &x);
	const json *ct = j ? json_get(j, "contributions") : NULL;
	const json *heads = j ? json_get(j, "heads") : NULL;
	CHECK(ct && ct->n == L * H && heads && heads->n == L * H);
	int differ = 0;
	for (size_t i = 0; ct && heads && i < ct->n && i < heads->n; i++) {
		const json *e = json_at(ct, i), *role = json_get(e, "role");
		const json *label = json_get(e, "label"), *says = json_get(e, "sentence");
		CHECKF(role && strcmp(role->str, "first") == 0 && label &&
			   strncmp(label->str, "first", 5) == 0 && says &&
			   strstr(says->str, " rows "),
		       "head %zu's contributions: %s, %s", i, role ? role->str : "(none)",
		       label ? label->str : "(none)");
		differ += strcmp(json_get(json_at(heads, i), "role")->str, "first") != 0;
	}
	/* (the weights' labels are others: the entry is not theirs) */
	CHECKF(differ > 0, "every head's weights are first too: the check proves nothing");
	json_free(j);
	free(vn);
}

int main(void)
{
	const char *texts[] = {"床前明月光，疑是地上霜。", "Yes, the cat's mat!",
			       "Hi 你好😀 x\xCC\x81 cafe\xCC\x81!", "月"};
	const char *models[] = {"golden/fwd_masked.attn", "golden/fwd_causal.attn"};
	for (size_t mi = 0; mi < 2; mi++) {
		av_error err;
		model *m = model_load(test_path(models[mi]), &err);
		CHECKF(m != NULL, "%s", err.msg);
		if (!m)
			continue;
		for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
			check_json(m, texts[i]);
			check_tsv(m, texts[i]);
		}
		check_escaping(m);
		check_timeline(m);
		check_logits(m);
		check_contributions(m);
		model_destroy(m);
	}
	return test_summary("dump");
}
