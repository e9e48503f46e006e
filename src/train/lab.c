/* The lab (lab.h): the task table, the generators of its texts, training a
 * tiny model on them and scoring it, with heads switched off or not. */
#include "attnview/lab.h"
#include "attnview/i18n.h"

#include "attnview/optimizer.h"
#include "attnview/timeline.h"
#include "attnview/train_step.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the generators ------------------------------------------------------ */

static uint32_t letter(rng *r)
{
	return 'a' + (uint32_t)rng_below(r, 26);
}

/* Blocks of k + 2 characters, the last a copy of the first: k + 1 random
 * letters x_0 .. x_k, then x_0 again, after 0 to k + 1 random letters (so
 * that where a block starts says nothing of its place in the text). Scored:
 * the position of x_k, whose next character is the one k back ("ab a",
 * k = 1: the previous one). */
static void copy_back(int k, rng *r, int T, uint32_t *text, uint8_t *flag)
{
	int len = k + 2, p = (int)rng_below(r, (uint64_t)len);
	for (int i = 0; i <= T; i++) {
		int b = (i - p) % len;
		text[i] = i >= p && b == len - 1 ? text[i - b] : letter(r);
	}
	for (int i = 0; i < T; i++)
		flag[i] = i + 1 >= p && (i + 1 - p) % len == len - 1 ? LAB_SCORED : 0;
}

static void gen_copy_back(const lab_task *t, rng *r, int T, uint32_t *text, uint8_t *flag)
{
	copy_back(t->param, r, T, text, flag);
}

/* m distinct random letters into out, the rest of the alphabet after them
 * in rest (26 - m). */
static void distinct_letters(rng *r, int m, uint32_t *out, uint32_t *rest)
{
	uint32_t a[26];
	for (int i = 0; i < 26; i++)
		a[i] = 'a' + (uint32_t)i;
	for (int i = 0; i < 26; i++) {
		int j = i + (int)rng_below(r, (uint64_t)(26 - i));
		uint32_t x = a[j];
		a[j] = a[i];
		a[i] = x;
	}
	memcpy(out, a, (size_t)m * sizeof *out);
	memcpy(rest, a + m, (size_t)(26 - m) * sizeof *rest);
}

/* A few letters, then a string R of 5 to 12 distinct letters written again
 * and again to the end of the text. Scored: every position from the second
 * copy on, whose next character is the one after the same character in the
 * copy before. The length of R changes from text to text, so no fixed
 * offset finds it. The letters before R are not in R. */
static void gen_induction(const lab_task *t, rng *r, int T, uint32_t *text, uint8_t *flag)
{
	(void)t;
	int p = (int)rng_below(r, 4);
	int m = 5 + (int)rng_below(r, 8);
	uint32_t rs[26], rest[26];
	distinct_letters(r, m, rs, rest);
	for (int i = 0; i <= T; i++)
		text[i] = i < p ? rest[rng_below(r, (uint64_t)(26 - m))] : rs[(i - p) % m];
	for (int i = 0; i < T; i++)
		flag[i] = i >= p + m ? LAB_SCORED : 0;
}

/* R, '|', R reversed, R being (T - 1) / 2 random letters. Of each letter
 * and its mirror image, one is hidden with probability 0.8 (never both), and
 * scored. */
static void gen_reverse(const lab_task *t, rng *r, int T, uint32_t *text, uint8_t *flag)
{
	(void)t;
	int m = (T - 1) / 2;
	for (int i = 0; i < m; i++)
		text[i] = letter(r);
	text[m] = '|';
	for (int i = 0; i < m; i++)
		text[2 * m - i] = text[i];
	for (int i = 2 * m + 1; i <= T; i++)
		text[i] = '|';
	memset(flag, 0, (size_t)T);
	for (int i = 0; i < m; i++) {
		int which = rng_uniform(r) < 0.5f ? i : 2 * m - i;
		if (rng_uniform(r) < 0.8f && which < T)
			flag[which] = LAB_MASKED | LAB_SCORED;
	}
}

static const char lab_marks[] = ".,;!?";

/* Segments of 2 to 6 hidden letters, each enclosed in one punctuation mark
 * on both sides ("!ooo!?uu?"): every letter of a segment is the one its mark
 * stands for (LAB_MARK_LETTERS, in the order of lab_marks). Scored: every
 * letter, which only the marks around it tell. */
static void gen_delimiter(const lab_task *t, rng *r, int T, uint32_t *text, uint8_t *flag)
{
	(void)t;
	memset(flag, 0, (size_t)T);
	int i = 0;
	while (i <= T) {
		int which = (int)rng_below(r, 5), len = 2 + (int)rng_below(r, 5);
		uint32_t mark = (uint32_t)lab_marks[which];
		text[i++] = mark;
		for (int k = 0; k < len && i <= T; k++, i++) {
			text[i] = (uint32_t)LAB_MARK_LETTERS[which];
			if (i < T)
				flag[i] = LAB_MASKED | LAB_SCORED;
		}
		if (i <= T)
			text[i++] = mark;
	}
}

/* Random letters, and one digit written at 16 to 24 random places, all
 * hidden but one. Scored: the hidden ones, which only the one digit shown
 * tells. */
static void gen_class(const lab_task *t, rng *r, int T, uint32_t *text, uint8_t *flag)
{
	(void)t;
	memset(flag, 0, (size_t)T);
	uint32_t digit = '0' + (uint32_t)rng_below(r, 10);
	for (int i = 0; i <= T; i++)
		text[i] = letter(r);
	int shown = -1, places = T / 2 + (int)rng_below(r, (uint64_t)(T / 4 + 1));
	for (int k = 0; k < places; k++) {
		int i = (int)rng_below(r, (uint64_t)T);
		text[i] = digit;
		if (shown < 0)
			shown = i;
		else if (i != shown)
			flag[i] = LAB_MASKED | LAB_SCORED;
	}
}

/* Pairs of one letter ("kkbbqq"), from a random place in the first pair;
 * the first of each pair hidden. Scored: the hidden ones whose pair ends in
 * the text, which only the next character tells. */
static void gen_next(const lab_task *t, rng *r, int T, uint32_t *text, uint8_t *flag)
{
	(void)t;
	int p = (int)rng_below(r, 2);
	uint32_t c = letter(r);
	for (int i = 0; i <= T; i++) {
		if ((i + p) % 2 == 0)
			c = letter(r);
		text[i] = c;
	}
	for (int i = 0; i < T; i++)
		flag[i] = (i + p) % 2 == 0 && i + 1 < T ? LAB_MASKED | LAB_SCORED : 0;
}

/* A digit, then random letters, three quarters of the places hidden;
 * every hidden one is the digit, which only the first place tells. */
static void gen_first(const lab_task *t, rng *r, int T, uint32_t *text, uint8_t *flag)
{
	(void)t;
	text[0] = '0' + (uint32_t)rng_below(r, 10);
	flag[0] = 0;
	for (int i = 1; i <= T; i++) {
		bool hide = rng_uniform(r) < 0.75f;
		text[i] = hide ? text[0] : letter(r);
		if (i < T)
			flag[i] = hide ? LAB_MASKED | LAB_SCORED : 0;
	}
}

/* Words of 3 to 7 copies of one letter between punctuation marks
 * ("kkkk.bbb;qqqqq!"), all but each word's first letter hidden. Scored:
 * the hidden ones, which only their word's first letter tells. */
static void gen_word_start(const lab_task *t, rng *r, int T, uint32_t *text, uint8_t *flag)
{
	(void)t;
	memset(flag, 0, (size_t)T);
	int i = 0;
	while (i <= T) {
		int len = 3 + (int)rng_below(r, 5);
		uint32_t c = letter(r);
		for (int k = 0; k < len && i <= T; k++, i++) {
			text[i] = c;
			if (k > 0 && i < T)
				flag[i] = LAB_MASKED | LAB_SCORED;
		}
		if (i <= T)
			text[i++] = (uint32_t)lab_marks[rng_below(r, 5)];
	}
}

/* Three lines of LAB_LINE letters closed by '.', all the same; the first
 * and the last hidden (the model reads only the middle one and the full
 * stops), and scored: the same place in the middle line tells. */
static void gen_line_parallel(const lab_task *t, rng *r, int T, uint32_t *text, uint8_t *flag)
{
	(void)t;
	const int L = LAB_LINE + 1;
	for (int i = 0; i <= T; i++) {
		text[i] = i % L == LAB_LINE ? '.' : i < L ? letter(r) : text[i % L];
		if (i < T)
			flag[i] = i % L != LAB_LINE && (i < L || i >= 2 * L) ? LAB_MASKED | LAB_SCORED
									       : 0;
	}
}

/* Six pairs of distinct letters, a value before its key ("bkeqfz"), then
 * the six keys again in another order, each followed by its value
 * ("qekbzf"). Scored: the keys of the second half, whose next character is
 * the one before the key's earlier copy: a head of layer 0 looks at the
 * previous character, a head of layer 1 at the earlier copy of the current
 * one. */
static void gen_duplicate(const lab_task *t, rng *r, int T, uint32_t *text, uint8_t *flag)
{
	(void)t;
	enum { PAIRS = 6 };
	uint32_t l[26], rest[26];
	distinct_letters(r, 2 * PAIRS, l, rest);
	int order[PAIRS];
	for (int k = 0; k < PAIRS; k++)
		order[k] = k;
	for (int k = PAIRS - 1; k > 0; k--) {
		int j = (int)rng_below(r, (uint64_t)(k + 1)), x = order[k];
		order[k] = order[j];
		order[j] = x;
	}
	memset(flag, 0, (size_t)T);
	for (int i = 0; i <= T; i++) {
		int half = i / (2 * PAIRS), k = (i % (2 * PAIRS)) / 2, second = i % 2;
		if (half == 0) /* value, key */
			text[i] = l[2 * k + 1 - second];
		else if (half == 1) /* key, value */
			text[i] = l[2 * order[k] + second];
		else
			text[i] = rest[rng_below(r, (uint64_t)(26 - 2 * PAIRS))];
		if (i < T && half == 1 && !second)
			flag[i] = LAB_SCORED;
	}
}

/* Latin and Greek letters, the script of each place at random; 85 of 100
 * places after the first letter of their script hidden behind their
 * script's placeholder (z, ω), each the nearest letter of its script before
 * it. Scored: the hidden ones, which only the letters of their own script
 * tell. */
static void gen_script(const lab_task *t, rng *r, int T, uint32_t *text, uint8_t *flag)
{
	(void)t;
	int last[2] = {-1, -1}; /* the last letter shown of each script */
	for (int i = 0; i <= T; i++) {
		int s = (int)rng_below(r, 2);
		bool hide = last[s] >= 0 && rng_uniform(r) < 0.85f;
		uint32_t shown = s == 0 ? 'a' + (uint32_t)rng_below(r, 25)
					: LAB_GREEK_FIRST + (uint32_t)rng_below(r, LAB_GREEK_COUNT - 1);
		text[i] = hide ? text[last[s]] : shown;
		if (i < T)
			flag[i] = hide ? LAB_PLACEHOLDER | LAB_SCORED : 0;
		if (!hide)
			last[s] = i;
	}
}

/* ---- the table ------------------------------------------------------------ */

static const lab_task tasks[] = {
    {"previous",
     N_("blocks of three letters whose last repeats the first (\"xyx\"): after the middle "
	"letter comes the one before it, which a head must fetch by looking at the "
	"previous character"),
     "kbkqeqzfzwawmjm", OBJ_CAUSAL, 32, 1, 1, 32, 32, 1500, 3e-3f, 26, 1,
     {ROLE_PREVIOUS, ROLE_NKINDS}, gen_copy_back, false},
    {"two-back",
     N_("blocks of four letters whose last repeats the first (\"xyzx\"): after the third "
	"letter comes the one two before it, which a head must fetch by looking two "
	"characters to the left"),
     "kbtkqexqzfozwaiw", OBJ_CAUSAL, 32, 1, 1, 32, 32, 1500, 3e-3f, 26, 2,
     {ROLE_OFFSET, ROLE_NKINDS}, gen_copy_back, false},
    {"induction",
     N_("a string of 5 to 12 distinct letters written again and again, of another length "
	"in every text: from the second copy on, the next letter is the one that followed "
	"the current letter in the copy before; a head of layer 0 looks at the previous "
	"character, and a head of layer 1 at the character after the earlier copy of the "
	"current one (an induction head)"),
     "xqbmkwtrjqbmkwtrjqbmkwt", OBJ_CAUSAL, 32, 1, 2, 24, 32, 12000, 6e-3f, 26, 0,
     {ROLE_PREVIOUS, ROLE_INDUCTION}, gen_induction, false},
    {"reverse",
     N_("twelve letters, a bar and the same letters reversed (\"abc|cba\"), one of most "
	"pairs hidden: a hidden letter is its mirror image's, which a head finds by looking "
	"at the mirror position"),
     "kbqexzfwamjo|ojmawfzxeqbk", OBJ_MASKED, 32, 1, 1, 25, 32, 2500, 3e-3f, 26, 0,
     {ROLE_MIRROR, ROLE_NKINDS}, gen_reverse, false},
    {"delimiter",
     N_("segments of hidden letters, each enclosed in one punctuation mark on both sides "
	"(\"!ooo!?uu?\"): every letter of a segment is the one its mark stands for (. a, "
	", e, ; i, ! o, ? u), which a head finds by looking at the nearest mark"),
     "!ooo!?uu?.aaaa.;ii;,eee,!oo!", OBJ_MASKED, 32, 1, 1, 32, 32, 5000, 3e-3f, 5, 0,
     {ROLE_DELIMITER, ROLE_NKINDS}, gen_delimiter, false},
    {"class",
     N_("random letters and one digit written at half the places or more, all hidden "
	"but one (\"kb7q7e77\"): a hidden place holds the digit shown, which a head finds "
	"by looking at the one character of its class"),
     "kb7q7e77xz7fw7a7mjo7q7sl7", OBJ_MASKED, 32, 1, 1, 32, 32, 1500, 3e-3f, 10, 0,
     {ROLE_KEYWORD, ROLE_NKINDS}, gen_class, false},
    {"next",
     N_("pairs of one letter (\"kkbbqq\"), the first of each pair hidden: a hidden "
	"letter is the next one, which a head fetches by looking at the next character"),
     "kkbbqqeexxzzffwwaa", OBJ_MASKED, 32, 1, 1, 32, 32, 1500, 3e-3f, 26, 0,
     {ROLE_NEXT, ROLE_NKINDS}, gen_next, false},
    {"first",
     N_("a digit, then letters, three of four places hidden (\"7kb7q\"): every hidden "
	"place holds the digit, which a head finds by looking at the first character"),
     "7k77b777q77e7x77z7", OBJ_MASKED, 32, 1, 1, 32, 32, 2000, 1e-3f, 10, 0,
     {ROLE_FIRST, ROLE_NKINDS}, gen_first, false},
    {"word-start",
     N_("words of three to seven copies of one letter between punctuation marks "
	"(\"kkkk.bbb;qqqqq!\"), all but each word's first letter hidden: a hidden letter "
	"is its word's first, which a head finds by looking at the start of its word"),
     "kkkk.bbb;qqqqq!eeeeee,xxx", OBJ_MASKED, 32, 1, 1, 32, 32, 2000, 3e-3f, 26, 0,
     {ROLE_WORDSTART, ROLE_NKINDS}, gen_word_start, false},
    {"line-parallel",
     N_("three lines of seven letters, each closed by a full stop, all the same "
	"(\"kbqexzf.kbqexzf.kbqexzf.\"), the first and the last hidden: a hidden letter is "
	"the one at the same place in the middle line, where a head looks"),
     "kbqexzf.kbqexzf.kbqexzf.", OBJ_MASKED, 32, 1, 1, 24, 32, 2500, 3e-3f, 26, 0,
     {ROLE_PARALLEL, ROLE_NKINDS}, gen_line_parallel, false},
    {"duplicate",
     N_("six pairs of letters, a value before its key (\"bkeqfz\"), then the keys again "
	"in another order, each followed by its value (\"qekbzf\"): a head of layer 0 "
	"looks at the previous character, and a head of layer 1 at the earlier copy of the "
	"current one, whose neighbour is the value"),
     "bkeqfzmxoupsqekbzfpsmxou", OBJ_CAUSAL, 32, 1, 2, 24, 32, 12000, 6e-3f, 26, 0,
     {ROLE_NKINDS, ROLE_DUPLICATE}, gen_duplicate, false},
    {"script",
     N_("Latin and Greek letters mixed, most of them hidden behind their script's "
	"placeholder, z or ω (\"kzβωzdω\"): a hidden letter is the "
	"nearest letter of its own script before it, which a head finds by looking at "
	"the letters of its script"),
     "kzβωzdωγzωqωzzλω", OBJ_MASKED, 64, 1, 1, 32,
     32, 8000, 3e-3f, 25, 0, {ROLE_SCRIPT, ROLE_NKINDS}, gen_script, true},
};

int lab_ntasks(void)
{
	return (int)(sizeof tasks / sizeof tasks[0]);
}

const lab_task *lab_task_at(int i)
{
	return i >= 0 && i < lab_ntasks() ? &tasks[i] : NULL;
}

const lab_task *lab_find(const char *name)
{
	for (int i = 0; i < lab_ntasks(); i++)
		if (strcmp(tasks[i].name, name) == 0)
			return &tasks[i];
	return NULL;
}

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

/* One text as the model's input ids and targets (-1 where not scored). */
static void lab_row(const lab_task *t, rng *r, int T, int32_t *tok, int32_t *tgt)
{
	uint32_t text[LAB_MAX_CONTEXT + 1];
	uint8_t flag[LAB_MAX_CONTEXT];
	t->gen(t, r, T, text, flag);
	for (int i = 0; i < T; i++) {
		tok[i] = flag[i] & LAB_MASKED ? TOK_MASK : lab_id(shown_cp(text[i], flag[i]));
		uint32_t y = t->obj == OBJ_CAUSAL ? text[i + 1] : text[i];
		tgt[i] = flag[i] & LAB_SCORED ? lab_id(y) : -1;
	}
}

/* Text `index` of the samples and its flags; `masked`: with the mask at
 * hidden positions. */
static void sample_text(const lab_task *t, uint64_t seed, int index, int T, uint32_t *cps,
			uint8_t *flag, bool masked)
{
	rng r;
	rng_seed(&r, seed ^ LAB_SAMPLE_SALT);
	uint32_t text[LAB_MAX_CONTEXT + 1];
	for (int k = 0; k <= index; k++)
		t->gen(t, &r, T, text, flag);
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
	return ok;
}

/* ---- scoring ------------------------------------------------------------------ */

bool lab_evaluate(const model *m, const lab_task *t, uint64_t seed, const uint8_t *ablate,
		  lab_score *out, av_error *err)
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

bool lab_carries(double acc_all, double acc_without, double chance)
{
	return acc_all - acc_without >= 0.5 * (acc_all - chance);
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
