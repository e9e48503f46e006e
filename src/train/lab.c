/* The lab (lab.h): training a tiny model on a task's texts (the tasks are
 * in lab_tasks.c) and scoring it, with heads switched off or not. */
#include "attnview/lab.h"
#include "attnview/i18n.h"

#include "attnview/optimizer.h"
#include "attnview/parallel.h"
#include "attnview/timeline.h"
#include "attnview/train_step.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- batches --------------------------------------------------------------- */

#define LAB_NALPHA ((int32_t)sizeof LAB_ALPHABET - 1)

static int32_t lab_id(uint32_t cp)
{
	if (cp >= LAB_GREEK_FIRST && cp < LAB_GREEK_FIRST + LAB_GREEK_COUNT)
		return TOK_NSPECIAL + LAB_NALPHA + (int32_t)(cp - LAB_GREEK_FIRST);
	const char *p = strchr(LAB_ALPHABET, (int)cp);
	return cp && cp < 128 && p ? TOK_NSPECIAL + (int32_t)(p - LAB_ALPHABET) : TOK_UNK;
}

/* The placeholder of cp's script: ω for a Greek letter, z for the rest. */
static uint32_t placeholder(uint32_t cp)
{
	return cp >= LAB_GREEK_FIRST ? LAB_GREEK_FIRST + LAB_GREEK_COUNT - 1 : 'z';
}

/* What the model reads at a place: the mask, a placeholder or the text. */
static uint32_t shown_cp(uint32_t cp, uint8_t flag)
{
	return flag & LAB_MASKED ? AV_SPECIAL_CP + TOK_MASK
	       : flag & LAB_PLACEHOLDER ? placeholder(cp)
					: cp;
}

/* A text and its flags as the model's input ids and targets (-1 where not
 * scored). */
static void row_ids(const lab_task *t, const uint32_t *text, const uint8_t *flag, int T,
		    int32_t *tok, int32_t *tgt)
{
	for (int i = 0; i < T; i++) {
		tok[i] = flag[i] & LAB_MASKED ? TOK_MASK : lab_id(shown_cp(text[i], flag[i]));
		uint32_t y = t->obj == OBJ_CAUSAL ? text[i + 1] : text[i];
		tgt[i] = flag[i] & LAB_SCORED ? lab_id(y) : -1;
	}
}

/* The next text of r as ids and targets. */
static void lab_row(const lab_task *t, rng *r, int T, int32_t *tok, int32_t *tgt)
{
	uint32_t text[LAB_MAX_CONTEXT + 1];
	uint8_t flag[LAB_MAX_CONTEXT];
	t->gen(t, r, T, text, flag);
	row_ids(t, text, flag, T, tok, tgt);
}

/* Text `index` of the samples (T + 1 characters) and its flags. */
static void sample_raw(const lab_task *t, uint64_t seed, int index, int T, uint32_t *text,
		       uint8_t *flag)
{
	rng r;
	rng_seed(&r, seed ^ LAB_SAMPLE_SALT);
	for (int k = 0; k <= index; k++)
		t->gen(t, &r, T, text, flag);
}

/* Text `index` of the samples and its flags; `masked`: with the mask at
 * hidden positions. */
static void sample_text(const lab_task *t, uint64_t seed, int index, int T, uint32_t *cps,
			uint8_t *flag, bool masked)
{
	uint32_t text[LAB_MAX_CONTEXT + 1];
	sample_raw(t, seed, index, T, text, flag);
	for (int i = 0; i < T; i++)
		cps[i] = masked ? shown_cp(text[i], flag[i]) : text[i];
}

void lab_sample(const lab_task *t, uint64_t seed, int index, int T, uint32_t *cps)
{
	uint8_t flag[LAB_MAX_CONTEXT];
	sample_text(t, seed, index, T, cps, flag, true);
}

/* ---- the model and its training -------------------------------------------- */

static void apply_options(model_config *cfg, const lab_task *t, const lab_options *o)
{
	uint32_t nalpha = (uint32_t)LAB_NALPHA + (t->greek ? LAB_GREEK_COUNT : 0);
	*cfg = (model_config){.objective = t->obj,
			      .vocab_size = TOK_NSPECIAL + nalpha,
			      .dim = o->dim ? o->dim : t->dim,
			      .heads = o->heads ? o->heads : t->heads,
			      .layers = o->layers ? o->layers : t->layers,
			      .context = t->context};
}

model *lab_model_create(const lab_task *t, const lab_options *o, av_error *err)
{
	model_config cfg;
	apply_options(&cfg, t, o);
	if (!model_config_check(&cfg, err))
		return NULL;
	uint32_t cps[TOK_NSPECIAL + LAB_NALPHA + LAB_GREEK_COUNT];
	for (uint32_t i = 0; i < cfg.vocab_size; i++) {
		uint32_t k = i - TOK_NSPECIAL;
		cps[i] = i < TOK_NSPECIAL		 ? AV_SPECIAL_CP + i
			 : k < (uint32_t)LAB_NALPHA ? (uint32_t)LAB_ALPHABET[k]
						    : LAB_GREEK_FIRST + k - (uint32_t)LAB_NALPHA;
	}
	model *m = model_create(&cfg, cps, err);
	if (!m)
		return NULL;
	model_init_random(m, o->seed);
	char corpus[160];
	snprintf(corpus, sizeof corpus, "lab task %s (generated, seed %llu)", t->name,
		 (unsigned long long)o->seed);
	if (!model_set_meta_strings(m, t->name, corpus, err)) {
		model_destroy(m);
		return NULL;
	}
	m->meta.seed = o->seed;
	return m;
}

/* The buffers of a training run. */
typedef struct lab_run {
	activations acts;
	grad_acts gacts;
	adamw adam;
	float *grads;
	int32_t *tok, *tgt;
} lab_run;

static void lab_run_finish(lab_run *u)
{
	if (u->acts.mem)
		activations_finish(&u->acts);
	if (u->gacts.mem)
		grad_acts_finish(&u->gacts);
	if (u->adam.m)
		adamw_finish(&u->adam);
	free(u->grads);
	free(u->tok);
	free(u->tgt);
}

/* The model of step s, just recorded, kept when --keep-steps asks for it. */
static bool keep_step(const model *m, const lab_task *t, const lab_options *o, uint64_t s,
		      uint64_t total, av_error *err)
{
	if (!timeline_keep_due(o->keep_every, m->timeline->count - 1, s, total))
		return true;
	model_meta meta = m->meta;
	meta.steps = s;
	meta.tokens = s * (uint64_t)t->batch * (uint64_t)t->context;
	return timeline_keep(m, &meta, o->out, s, s == 0, err);
}

/* The timeline (timeline.h): its probe the first TL_WINDOWS samples of the
 * task without masks (texts training never sees), its loss measured where
 * the task's is (timeline_set_scored), and the record of step 0. */
static bool timeline_start(model *m, const lab_task *t, const lab_options *o, uint64_t total,
			   av_error *err)
{
	if (o->timeline_every == LAB_NO_TIMELINE)
		return true;
	uint64_t every = o->timeline_every ? o->timeline_every : timeline_auto_every(total);
	int T = (int)m->cfg.context;
	uint32_t probe[TL_WINDOWS * LAB_MAX_CONTEXT];
	uint8_t flag[TL_WINDOWS * LAB_MAX_CONTEXT];
	for (int k = 0; k < TL_WINDOWS; k++)
		sample_text(t, o->seed, k, T, probe + (size_t)k * T, flag + (size_t)k * T, false);
	for (int i = 0; i < TL_WINDOWS * T; i++)
		flag[i] &= LAB_SCORED;
	timeline_destroy(m->timeline);
	m->timeline = timeline_create(m, probe, TL_WINDOWS, (uint32_t)T, every, o->seed, err);
	return m->timeline && timeline_set_scored(m->timeline, flag, err) &&
	       timeline_record(m->timeline, m, 0, NAN, true, err) &&
	       keep_step(m, t, o, 0, total, err);
}

/* After step s: a record when one is due, with the mean of the losses since
 * the record before (*sum over *count steps, then reset). */
static bool timeline_step(model *m, const lab_task *t, const lab_options *o, uint64_t s,
			  uint64_t total, double *sum, int *count, av_error *err)
{
	if (!timeline_due(m->timeline, s, total))
		return true;
	float loss = (float)(*sum / *count);
	*sum = 0;
	*count = 0;
	return timeline_record(m->timeline, m, s, loss, true, err) &&
	       keep_step(m, t, o, s, total, err);
}

bool lab_train(model *m, const lab_task *t, const lab_options *o, lab_progress_fn progress,
	       void *ctx, av_error *err)
{
	int B = (int)t->batch, T = (int)t->context;
	uint64_t total = o->steps ? o->steps : t->steps;
	/* Before the buffers: the step keeps a gradient copy per slice. */
	int threads_was = parallel_set_threads(o->threads ? (int)o->threads : LAB_THREADS);
	lab_run u;
	memset(&u, 0, sizeof u);
	bool ok = activations_init(&u.acts, &m->cfg, B, T, B * T, err) &&
		  grad_acts_init(&u.gacts, &m->cfg, B, T, err) &&
		  adamw_init(&u.adam, m, o->lr > 0 ? o->lr : t->lr, total / 10, total, err);
	u.grads = malloc(m->nparams * sizeof *u.grads);
	u.tok = malloc((size_t)B * (size_t)T * sizeof *u.tok);
	u.tgt = malloc((size_t)B * (size_t)T * sizeof *u.tgt);
	if (ok && (!u.grads || !u.tok || !u.tgt))
		ok = av_fail(err, _("out of memory for the training buffers"));
	ok = ok && timeline_start(m, t, o, total, err);
	rng r;
	rng_seed(&r, o->seed ^ LAB_DATA_SALT);
	double since = 0;
	int nsince = 0;
	for (uint64_t s = 0; ok && s < total; s++) {
		for (int b = 0; b < B; b++)
			lab_row(t, &r, T, u.tok + (size_t)b * T, u.tgt + (size_t)b * T);
		memset(u.grads, 0, m->nparams * sizeof *u.grads);
		step_stats st;
		ok = model_train_step_grads(m, &u.acts, &u.gacts, u.tok, u.tgt, B, T, u.grads, &st,
					    err);
		if (!ok)
			break;
		adamw_step(&u.adam, m->params, u.grads);
		if (!isfinite(st.loss))
			ok = av_fail(err, _("the training loss became %g at step %llu: lower the "
					    "learning rate"),
				     (double)st.loss, (unsigned long long)s + 1);
		since += st.loss;
		nsince++;
		ok = ok && timeline_step(m, t, o, s + 1, total, &since, &nsince, err);
		lab_progress p = {s + 1, total, st.loss};
		if (ok && progress)
			progress(&p, ctx);
	}
	m->meta.steps = total;
	m->meta.tokens = total * (uint64_t)B * (uint64_t)T;
	lab_run_finish(&u);
	parallel_set_threads(threads_was);
	return ok;
}

/* ---- scoring ------------------------------------------------------------------ */

static bool evaluate(const model *m, const lab_task *t, uint64_t seed, const uint8_t *ablate,
		     const head_override *pattern, lab_score *out, av_error *err)
{
	enum { CHUNK = 64 };
	int T = (int)t->context;
	activations a;
	if (!activations_init(&a, &m->cfg, CHUNK, T, CHUNK * T, err))
		return false;
	int32_t *tok = malloc((size_t)CHUNK * (size_t)T * sizeof *tok);
	int32_t *tgt = malloc((size_t)CHUNK * (size_t)T * sizeof *tgt);
	if (!tok || !tgt) {
		free(tok);
		free(tgt);
		activations_finish(&a);
		return av_fail(err, _("out of memory"));
	}
	a.ablate = ablate;
	a.pattern = pattern;
	rng r;
	rng_seed(&r, seed ^ LAB_EVAL_SALT);
	double loss = 0;
	int count = 0, correct = 0;
	for (int k = 0; k < LAB_EVAL_TEXTS; k += CHUNK) {
		for (int b = 0; b < CHUNK; b++)
			lab_row(t, &r, T, tok + (size_t)b * T, tgt + (size_t)b * T);
		int n = 0, ok = 0;
		float l = model_eval_loss(m, &a, tok, tgt, CHUNK, T, &n, &ok);
		if (n > 0)
			loss += (double)l * n;
		count += n;
		correct += ok;
	}
	out->count = count;
	out->acc = count ? (double)correct / count : NAN;
	out->loss = count ? loss / count : NAN;
	free(tok);
	free(tgt);
	activations_finish(&a);
	return true;
}

bool lab_evaluate(const model *m, const lab_task *t, uint64_t seed, const uint8_t *ablate,
		  lab_score *out, av_error *err)
{
	return evaluate(m, t, seed, ablate, NULL, out, err);
}

bool lab_sample_accuracy(const model *m, const lab_task *t, uint64_t seed, int index,
			 const uint8_t *ablate, lab_score *out, av_error *err)
{
	int T = (int)t->context;
	uint32_t text[LAB_MAX_CONTEXT + 1];
	uint8_t flag[LAB_MAX_CONTEXT];
	int32_t tok[LAB_MAX_CONTEXT], tgt[LAB_MAX_CONTEXT];
	sample_raw(t, seed, index, T, text, flag);
	row_ids(t, text, flag, T, tok, tgt);
	activations a;
	if (!activations_init(&a, &m->cfg, 1, T, T, err))
		return false;
	a.ablate = ablate;
	int n = 0, ok = 0;
	float l = model_eval_loss(m, &a, tok, tgt, 1, T, &n, &ok);
	activations_finish(&a);
	*out = (lab_score){.acc = n ? (double)ok / n : NAN, .loss = n ? l : NAN, .count = n};
	return true;
}

/* ---- the task's own patterns ------------------------------------------------ */

static void put_one(float *w, int T, int i, int j)
{
	memset(w + (size_t)i * T, 0, (size_t)T * sizeof *w);
	w[(size_t)i * T + j] = 1.0f;
}

/* Row i on key i - k (key 0 where there is none). */
static void fill_back(float *w, int T, int k)
{
	for (int i = 0; i < T; i++)
		put_one(w, T, i, i >= k ? i - k : 0);
}

static void fill_previous(float *w, const int32_t *tok, int T, const void *ctx)
{
	(void)tok;
	(void)ctx;
	fill_back(w, T, 1);
}

static void fill_offset(float *w, const int32_t *tok, int T, const void *ctx)
{
	(void)tok;
	fill_back(w, T, (int)((const lab_task *)ctx)->param);
}

static void fill_next(float *w, const int32_t *tok, int T, const void *ctx)
{
	(void)tok;
	(void)ctx;
	for (int i = 0; i < T; i++)
		put_one(w, T, i, i + 1 < T ? i + 1 : i);
}

static void fill_first(float *w, const int32_t *tok, int T, const void *ctx)
{
	(void)tok;
	(void)ctx;
	for (int i = 0; i < T; i++)
		put_one(w, T, i, 0);
}

/* Row i shares its weight among the keys `after` places past the earlier
 * copies of its token (itself where there is none). */
static void fill_copies(float *w, const int32_t *tok, int T, int after)
{
	for (int i = 0; i < T; i++) {
		float *row = w + (size_t)i * T;
		int n = 0;
		for (int c = 0; c < i; c++)
			n += tok[c] == tok[i];
		memset(row, 0, (size_t)T * sizeof *row);
		for (int c = 0; c < i; c++)
			if (tok[c] == tok[i])
				row[c + after] = 1.0f / (float)n;
		if (n == 0)
			row[i] = 1.0f;
	}
}

/* The induction task's layer 1: the keys just after the earlier copies. */
static void fill_induction(float *w, const int32_t *tok, int T, const void *ctx)
{
	(void)ctx;
	fill_copies(w, tok, T, 1);
}

/* The duplicate task's head: the earlier copies themselves. */
static void fill_duplicate(float *w, const int32_t *tok, int T, const void *ctx)
{
	(void)ctx;
	fill_copies(w, tok, T, 0);
}

static bool is_mark(int32_t id)
{
	for (const char *c = ".,;!?"; *c; c++)
		if (id == lab_id((uint32_t)*c))
			return true;
	return false;
}

/* The nearest mark at or before i; -1 if there is none. */
static int mark_before(const int32_t *tok, int i)
{
	while (i >= 0 && !is_mark(tok[i]))
		i--;
	return i;
}

/* A letter on the mark that opens its segment (the delimiter task's: the
 * mark tells the letter); a mark on itself. */
static void fill_delimiter(float *w, const int32_t *tok, int T, const void *ctx)
{
	(void)ctx;
	for (int i = 0; i < T; i++) {
		int m = mark_before(tok, i);
		put_one(w, T, i, m >= 0 ? m : i);
	}
}

/* A letter on its word's first letter (after the mark before it, or the
 * text's first); a mark on itself. */
static void fill_word_start(float *w, const int32_t *tok, int T, const void *ctx)
{
	(void)ctx;
	for (int i = 0; i < T; i++)
		put_one(w, T, i, is_mark(tok[i]) ? i : mark_before(tok, i) + 1);
}

/* Every row on the first digit of the text (the class task's one digit
 * shown); itself where there is none. */
static void fill_keyword(float *w, const int32_t *tok, int T, const void *ctx)
{
	(void)ctx;
	int d = 0;
	while (d < T && (tok[d] < lab_id('0') || tok[d] > lab_id('9')))
		d++;
	for (int i = 0; i < T; i++)
		put_one(w, T, i, d < T ? d : i);
}

/* Row i on its mirror image about the first '|' (the reverse task's
 * R|R'); itself past the mirror's reach. */
static void fill_mirror(float *w, const int32_t *tok, int T, const void *ctx)
{
	(void)ctx;
	int m = 0;
	while (m < T && tok[m] != lab_id('|'))
		m++;
	for (int i = 0; i < T; i++)
		put_one(w, T, i, m < T && 2 * m - i >= 0 && 2 * m - i < T ? 2 * m - i : i);
}

/* Lines closed by '.': a letter on the same place in the line before, or
 * in the line after in the first line; itself where that place is past
 * the text or not a letter (and a full stop on itself). */
static void fill_line_parallel(float *w, const int32_t *tok, int T, const void *ctx)
{
	(void)ctx;
	const int32_t stop = lab_id('.');
	for (int i = 0; i < T; i++) {
		int key = i;
		if (tok[i] != stop) {
			int start = i;
			while (start > 0 && tok[start - 1] != stop)
				start--;
			int c = i - start, other = -1;
			if (start > 0) { /* the line before starts after the stop before it */
				other = start - 1;
				while (other > 0 && tok[other - 1] != stop)
					other--;
			} else { /* the first line: the line after */
				other = i;
				while (other < T && tok[other] != stop)
					other++;
				other++;
			}
			if (other + c < T && tok[other + c] != stop && other + c != i)
				key = other + c;
		}
		put_one(w, T, i, key);
	}
}

/* Row i, a script's placeholder (z, ω), on the nearest letter of its
 * script before it that is not the placeholder (the script task's: the
 * hidden letter is that one); any other row on itself. */
static void fill_script(float *w, const int32_t *tok, int T, const void *ctx)
{
	(void)ctx;
	const int32_t z = lab_id('z'), omega = lab_id(LAB_GREEK_FIRST + LAB_GREEK_COUNT - 1);
	const int32_t greek = lab_id(LAB_GREEK_FIRST);
	for (int i = 0; i < T; i++) {
		int key = i;
		if (tok[i] == z || tok[i] == omega)
			for (int j = i - 1; j >= 0; j--) {
				bool latin = tok[j] >= lab_id('a') && tok[j] < z;
				bool same = tok[i] == z ? latin : tok[j] >= greek && tok[j] < omega;
				if (same) {
					key = j;
					break;
				}
			}
		put_one(w, T, i, key);
	}
}

bool lab_pattern(const lab_task *t, int l, int head, head_override *out)
{
	role_kind r = l < 2 ? t->roles[l] : ROLE_NKINDS;
	void (*fill)(float *, const int32_t *, int, const void *) =
	    r == ROLE_PREVIOUS		   ? fill_previous
	    : r == ROLE_OFFSET && t->param ? fill_offset
	    : r == ROLE_NEXT		   ? fill_next
	    : r == ROLE_FIRST		   ? fill_first
	    : r == ROLE_INDUCTION	   ? fill_induction
	    : r == ROLE_DUPLICATE	   ? fill_duplicate
	    : r == ROLE_DELIMITER	   ? fill_delimiter
	    : r == ROLE_WORDSTART	   ? fill_word_start
	    : r == ROLE_KEYWORD		   ? fill_keyword
	    : r == ROLE_MIRROR		   ? fill_mirror
	    : r == ROLE_PARALLEL	   ? fill_line_parallel
	    : r == ROLE_SCRIPT		   ? fill_script
					   : NULL;
	if (!fill)
		return false;
	*out = (head_override){.head = head, .fill = fill, .ctx = t};
	return true;
}

bool lab_pattern_accuracy(const model *m, const lab_task *t, uint64_t seed, int head, double *acc,
			  av_error *err)
{
	head_override p;
	lab_score s;
	*acc = NAN;
	if (!lab_pattern(t, head / (int)m->cfg.heads, head, &p))
		return true;
	if (!evaluate(m, t, seed, NULL, &p, &s, err))
		return false;
	*acc = s.acc;
	return true;
}

/* Every key the row may see alike: a causal row its first i + 1, a masked
 * one all T. */
static void fill_uniform(float *w, const int32_t *tok, int T, const void *ctx)
{
	(void)tok;
	const lab_task *t = ctx;
	for (int i = 0; i < T; i++) {
		int n = t->obj == OBJ_CAUSAL ? i + 1 : T;
		for (int j = 0; j < T; j++)
			w[(size_t)i * T + j] = j < n ? 1.0f / (float)n : 0.0f;
	}
}

bool lab_uniform_accuracy(const model *m, const lab_task *t, uint64_t seed, int head, double *acc,
			  av_error *err)
{
	head_override p = {.head = head, .fill = fill_uniform, .ctx = t};
	lab_score s;
	*acc = NAN;
	if (!evaluate(m, t, seed, NULL, &p, &s, err))
		return false;
	*acc = s.acc;
	return true;
}

bool lab_copy_accuracy(const model *m, const lab_task *t, uint64_t seed, int head, int from,
		       double *acc, av_error *err)
{
	const int H = (int)m->cfg.heads, nh = (int)m->cfg.layers * H;
	lab_score s;
	*acc = NAN;
	if (head < 0 || head >= nh || from < 0 || from >= nh)
		return av_fail(err, _("the model has heads 0 to %d (l * heads + h): not %d and %d"),
			       nh - 1, from, head);
	if (head / H != from / H)
		return av_fail(err, _("head %d.%d's weights in place of head %d.%d: not one layer"),
			       from / H, from % H, head / H, head % H);
	head_override p = {.head = head, .from = from};
	if (!evaluate(m, t, seed, NULL, &p, &s, err))
		return false;
	*acc = s.acc;
	return true;
}

bool lab_ablate_each(const model *m, const lab_task *t, uint64_t seed, double *acc,
		     av_error *err)
{
	int nh = (int)(m->cfg.layers * m->cfg.heads);
	uint8_t off[AV_MAX_HEADS * 4];
	if (nh > (int)sizeof off)
		return av_fail(err, _("the lab ablates at most %d heads"), (int)sizeof off);
	for (int k = 0; k < nh; k++) {
		memset(off, 0, sizeof off);
		off[k] = 1;
		lab_score s;
		if (!lab_evaluate(m, t, seed, off, &s, err))
			return false;
		acc[k] = s.acc;
	}
	return true;
}

/* Accuracy with the heads of layer l switched off where keep is not one of
 * them (keep -1: all of them), or with just heads a and b off (pair). */
static bool ablate_layer(const model *m, const lab_task *t, uint64_t seed, int l, int keep,
			 double *acc, av_error *err)
{
	int H = (int)m->cfg.heads;
	uint8_t off[AV_MAX_HEADS * 4] = {0};
	for (int h = 0; h < H; h++)
		off[l * H + h] = h != keep;
	lab_score s;
	if (!lab_evaluate(m, t, seed, off, &s, err))
		return false;
	*acc = s.acc;
	return true;
}

static bool ablate_pair(const model *m, const lab_task *t, uint64_t seed, int a, int b,
			double *acc, av_error *err)
{
	uint8_t off[AV_MAX_HEADS * 4] = {0};
	off[a] = off[b] = 1;
	lab_score s;
	if (!lab_evaluate(m, t, seed, off, &s, err))
		return false;
	*acc = s.acc;
	return true;
}

/* The heads of layer l that a second copy, or a pair, shows to carry the
 * mechanism when no head of the layer is needed alone. */
static bool layer_parts(const model *m, const lab_task *t, uint64_t seed, int l, double acc_all,
			lab_part *part, av_error *err)
{
	int H = (int)m->cfg.heads;
	double chance = 1.0 / t->answers, gain = acc_all - chance, acc;
	if (!ablate_layer(m, t, seed, l, -1, &acc, err))
		return false;
	if (acc_all - acc < 0.5 * gain)
		return true; /* the layer does not carry it */
	bool any = false;
	for (int h = 0; h < H; h++) {
		if (!ablate_layer(m, t, seed, l, h, &acc, err))
			return false;
		if (acc - chance >= 0.5 * gain)
			part[l * H + h] = LAB_CARRIES;
		any |= part[l * H + h] == LAB_CARRIES;
	}
	for (int a = 0; !any && a < H; a++)
		for (int b = a + 1; b < H; b++) {
			if (!ablate_pair(m, t, seed, l * H + a, l * H + b, &acc, err))
				return false;
			if (lab_carries(acc_all, acc, chance))
				part[l * H + a] = part[l * H + b] = LAB_CARRIES;
		}
	return true;
}

bool lab_head_parts(const model *m, const lab_task *t, uint64_t seed, double acc_all,
		    const double *acc_without, lab_part *part, av_error *err)
{
	int H = (int)m->cfg.heads, L = (int)m->cfg.layers;
	double chance = 1.0 / t->answers, gain = acc_all - chance;
	for (int k = 0; k < L * H; k++)
		part[k] = lab_carries(acc_all, acc_without[k], chance) ? LAB_CARRIES
			  : acc_all - acc_without[k] < 0.1 * gain     ? LAB_IDLE
								      : LAB_PARTLY;
	for (int l = 0; H >= 2 && l < L; l++)
		if (!layer_parts(m, t, seed, l, acc_all, part, err))
			return false;
	return true;
}
