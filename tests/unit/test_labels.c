/* Labels that never contradict the picture: every head of the built-in
 * models, of a model trained with README's own command
 * (data/models/notes.attn) and of one of broad heads (data/models/broad.attn)
 * on texts of each kind, each label held to the heatmap as the tests read
 * it (tests/lib/picture.h: each row's brightest key, counted): every role
 * the label names shows in the picture, and no label hides an induction
 * head; the same for the label of each head's value contributions (F11)
 * against their own map. First, the reading itself on planted matrices, so that it can fail:
 * the labels the labeller gave before it was measured (a column called
 * delimiter, an induction head called line-parallel on a text without
 * lines, a column called word start) are contradicted. Then 20,000 random
 * heads, each a mix of two mechanisms on a random text of a few letters,
 * spaces, marks and line breaks (400,000 were tried once, none failing):
 * whatever the labeller decides must show in the picture. It found the
 * labeller calling a short text's one space "delimiter" when it held half
 * the rows (33 of the 20,000). */
#include "attnview/analysis.h"
#include "attnview/explain.h"
#include "attnview/modelfile.h"
#include "harness.h"
#include "picture.h"

#include <stdlib.h>
#include <string.h>

#define N 64

static float w[N * N];
static token t[N];

static int toks(const char *s)
{
	int n = (int)strlen(s);
	for (int i = 0; i < n; i++)
		t[i] = (token){
		    .cp = (uint32_t)(unsigned char)s[i], .id = 3 + (unsigned char)s[i], .width = 1};
	return n;
}

/* Row i all on key_of[i] (causal: key_of[i] <= i). */
static attn_matrix planted(int n, const int *key_of, bool causal)
{
	memset(w, 0, sizeof w);
	for (int i = 0; i < n; i++)
		w[i * n + key_of[i]] = 1;
	return (attn_matrix){w, n, causal, 0};
}

/* A label as the labeller writes it, for the reading to judge. */
static role_scores claim(role_kind r, role_verdict v, role_kind second)
{
	role_scores rs;
	memset(&rs, 0, sizeof rs);
	rs.role = r, rs.verdict = v, rs.second = second;
	return rs;
}

static void reading_can_fail(void)
{
	char why[128];
	/* One column on the space after "fruit": a keyword, not a delimiter. */
	int n = toks("time flies; fruit flies, a cat.");
	int key[N];
	for (int i = 0; i < n; i++)
		key[i] = 17;
	attn_matrix a = planted(n, key, false);
	role_scores rs = claim(ROLE_DELIMITER, ROLE_SURE, ROLE_NKINDS);
	CHECKF(!picture_holds(&a, t, &rs, ROLE_DELIMITER, why, sizeof why), "%s", why);
	CHECK(strstr(why, "a column"));
	rs = claim(ROLE_KEYWORD, ROLE_SURE, ROLE_NKINDS);
	rs.keys[0] = ' ', rs.nkeys = 1;
	CHECKF(picture_agrees(&a, t, &rs, why, sizeof why), "%s", why);
	rs.keys[0] = 'f';
	CHECK(!picture_agrees(&a, t, &rs, why, sizeof why));
	rs = claim(ROLE_WORDSTART, ROLE_SURE, ROLE_NKINDS);
	CHECK(!picture_agrees(&a, t, &rs, why, sizeof why));

	/* Rows at the nearest mark after them, one per phrase: a delimiter. */
	for (int i = 0; i < n; i++) {
		int j = i;
		while (j < n - 1 && !cp_is_delimiter(t[j].cp))
			j++;
		key[i] = j == i && i < n - 1 ? j + 1 : j;
	}
	a = planted(n, key, false);
	rs = claim(ROLE_DELIMITER, ROLE_SURE, ROLE_NKINDS);
	CHECKF(picture_agrees(&a, t, &rs, why, sizeof why), "%s", why);

	/* A band one and two to the left, on the space where one is that
	 * near (causal): most rows on a mark, but those whose mark is three
	 * places or more back stay in the band. Not a delimiter. */
	n = toks("it is a cat; on a mat; quick fox");
	for (int i = 0; i < n; i++) {
		int m = i - 1;
		while (m >= 0 && !cp_is_delimiter(t[m].cp))
			m--;
		key[i] = m >= 0 && i - m <= 2 ? m : i - 1 - i % 2 < 0 ? 0 : i - 1 - i % 2;
	}
	a = planted(n, key, true);
	rs = claim(ROLE_DELIMITER, ROLE_SURE, ROLE_NKINDS);
	CHECKF(!picture_agrees(&a, t, &rs, why, sizeof why) && strstr(why, "a band"),
	       "a band on the near marks: %s", why);

	/* A sentence written twice, its second half after the earlier copy:
	 * induction, and on a text without lines never line-parallel. */
	n = toks("mr dursley and mrs. mr dursley and mrs.");
	int half = n / 2 + 1; /* the second "mr" */
	for (int i = 0; i < n; i++)
		key[i] = i >= half ? i - half + 1 : i > 0 ? i - 1 : 0;
	a = planted(n, key, true);
	rs = claim(ROLE_PARALLEL, ROLE_SURE, ROLE_NKINDS);
	CHECK(!picture_agrees(&a, t, &rs, why, sizeof why));
	CHECK(picture_hides_induction(&a, t, &rs, why, sizeof why));
	rs = claim(ROLE_INDUCTION, ROLE_SURE, ROLE_NKINDS);
	CHECKF(picture_agrees(&a, t, &rs, why, sizeof why), "%s", why);
	CHECK(!picture_hides_induction(&a, t, &rs, why, sizeof why));
	/* Two roles named: both must show. */
	rs = claim(ROLE_INDUCTION, ROLE_TWO, ROLE_NEXT);
	CHECK(!picture_agrees(&a, t, &rs, why, sizeof why));
	/* "unclear" claims nothing. */
	rs = claim(ROLE_NEXT, ROLE_UNSURE, ROLE_NKINDS);
	CHECK(picture_agrees(&a, t, &rs, why, sizeof why));
}

/* ---- random heads: the labeller's decisions held to the picture ---- */

static uint64_t rng = 88172645463325252ull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

/* Where row i of a planted head looks, by one of a few mechanisms. */
static int pattern_key(int kind, int i, int n, int vis, int col)
{
	int j = -1;
	switch (kind) {
	case 0:
		j = i - 1;
		break; /* previous */
	case 1:
		j = i + 1;
		break; /* next */
	case 2:
		j = col;
		break; /* one column */
	case 3:	       /* the nearest mark before */
		for (j = i - 1; j >= 0 && !cp_is_delimiter(t[j].cp); j--)
			;
		break;
	case 4: /* its word's start */
		for (j = i; j > 0 && !cp_is_delimiter(t[j - 1].cp); j--)
			;
		break;
	case 5: /* after an earlier copy */
		for (int p = i - 3; p >= 0 && j < 0; p--)
			if (t[p].id == t[i].id)
				j = p + 1;
		break;
	case 6:
		j = i - 2 - (int)rnd(2);
		break; /* a band */
	default:
		j = (int)rnd((uint32_t)vis);
		break;
	}
	return j >= 0 && j < vis && j < n ? j : (int)rnd((uint32_t)vis);
}

/* A text of a few letters, spaces, marks and line breaks, and a head whose
 * rows follow two mechanisms in random shares, some rows spread out: the
 * label, whatever it is, must show in the picture. */
static int random_head(bool *causal)
{
	static const char alphabet[] = "abcab  ., \n;";
	int n = 3 + (int)rnd(N - 3);
	for (int i = 0; i < n; i++) {
		unsigned char c = (unsigned char)alphabet[rnd(sizeof alphabet - 1)];
		t[i] = (token){.cp = c, .id = 3 + c, .width = 1};
	}
	*causal = rnd(2);
	int k1 = (int)rnd(8), k2 = (int)rnd(8), share = (int)rnd(11), col = (int)rnd((uint32_t)n);
	memset(w, 0, sizeof w);
	for (int i = 0; i < n; i++) {
		int vis = *causal ? i + 1 : n;
		for (int j = 0; j < vis; j++)
			w[i * n + j] = 0.02f * (float)(1 + rnd(10)) / (float)vis;
		if (rnd(10) == 0)
			continue; /* spread out */
		int kind = (int)rnd(10) < share ? k1 : k2;
		w[i * n + pattern_key(kind, i, n, vis, col < vis ? col : 0)] += 1;
	}
	for (int i = 0; i < n; i++) { /* rows sum to 1 */
		int vis = *causal ? i + 1 : n;
		float sum = 0;
		for (int j = 0; j < vis; j++)
			sum += w[i * n + j];
		for (int j = 0; j < vis; j++)
			w[i * n + j] /= sum;
	}
	return n;
}

static void random_heads(int count)
{
	int bad = 0;
	for (int k = 0; k < count; k++) {
		bool causal;
		int n = random_head(&causal);
		attn_matrix a = {w, n, causal, 0};
		role_scores rs;
		head_roles(&rs, &a, t);
		char label[160], why[128];
		role_label(&rs, false, label, sizeof label);
		bool agrees = picture_agrees(&a, t, &rs, why, sizeof why);
		bool hides = !agrees ? false : picture_hides_induction(&a, t, &rs, why, sizeof why);
		if ((!agrees || hides) && bad++ < 10) {
			char text[N + 1];
			for (int i = 0; i < n; i++)
				text[i] = t[i].cp == '\n' ? '|' : (char)t[i].cp;
			text[n] = 0;
			fprintf(stderr, "random head %d (%s, \"%s\"): \"%s\", but %s%s\n", k,
				causal ? "causal" : "masked", text, label,
				hides ? "it hides induction: " : "", why);
		}
	}
	CHECKF(bad == 0, "%d of %d random heads' labels contradict their picture", bad, count);
}

static const char *const texts[] = {
    "床前明月光，疑是地上霜。举头望明月，低头思故乡。",
    "床前明月光，\n疑是地上霜。\n举头望明月，\n低头思故乡。\n",
    "Time flies like an arrow; fruit flies like a banana, said the old teacher.",
    "Mr Dursley and Mrs Dursley. Mr Dursley and Mrs Dursley.",
    "The quick brown fox jumps over the lazy dog.",
    "你好, world! 今天天气很好, let us go to the park.",
    "the cat sat on the mat.\nthe dog sat on the log.\nthe cat sat on the mat.\n",
    "我们今天去公园散步，天气很好，大家都很开心。我们明天还去。",
    "x",
    "      ",
};

/* A matrix's label, held to the matrix's picture. */
static void hold_to_picture(const char *name, const char *text, int l, int h, const char *what,
			    const attn_matrix *a, const token *tok)
{
	role_scores rs;
	head_roles(&rs, a, tok);
	char label[160], why[128];
	role_label(&rs, false, label, sizeof label);
	CHECKF(picture_agrees(a, tok, &rs, why, sizeof why),
	       "%s L%d H%d%s on \"%s\": \"%s\", but %s", name, l, h, what, text, label, why);
	CHECKF(!picture_hides_induction(a, tok, &rs, why, sizeof why),
	       "%s L%d H%d%s on \"%s\": \"%s\" hides induction: %s", name, l, h, what, text, label,
	       why);
}

static void every_head(const char *name)
{
	av_error err;
	model *m = strstr(name, ".attn") ? model_load(test_path(name), &err)
					 : model_builtin_named(name, &err);
	CHECKF(m != NULL, "%s: %s", name, m ? "" : err.msg);
	if (!m)
		return;
	for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
		cp_buf cps = {0};
		CHECK(tokenize_text(texts[k], strlen(texts[k]), "text", &cps, NULL, &err));
		int n = (int)cps.n;
		token *tok = malloc((size_t)n * sizeof *tok);
		activations ws;
		attn_result r;
		memset(&r, 0, sizeof r);
		bool init = tok && activations_init(&ws, &m->cfg, 1, n, n, &err), ok = init;
		if (ok) {
			vocab_tokenize(&m->vocab, cps.v, cps.n, tok);
			ok = model_attend(m, &ws, tok, n, 0, &r, &err);
			CHECKF(ok, "%s: %s", name, err.msg);
		}
		/* and of the value contributions, the map F11 shows */
		size_t heads = (size_t)m->cfg.layers * m->cfg.heads;
		float *vn = ok ? malloc(heads * (size_t)n * sizeof *vn) : NULL;
		float *c = ok ? malloc((size_t)n * (size_t)n * sizeof *c) : NULL;
		CHECK(!ok || (vn && c && value_norms(m, &ws, n, vn, &err)));
		for (int l = 0; ok && vn && c && l < (int)m->cfg.layers; l++)
			for (int h = 0; h < (int)m->cfg.heads; h++) {
				attn_matrix a = attn_result_head(&r, l, h);
				contribution_shares(c, &a, vn + ((size_t)l * m->cfg.heads + h) * n);
				hold_to_picture(name, texts[k], l, h, "", &a, r.tokens);
				hold_to_picture(name, texts[k], l, h, " contributions",
						&(attn_matrix){c, n, a.causal, 0}, r.tokens);
			}
		free(vn);
		free(c);
		if (ok)
			attn_result_finish(&r);
		if (init)
			activations_finish(&ws);
		free(tok);
		cp_buf_finish(&cps);
	}
	model_destroy(m);
}

int main(void)
{
	reading_can_fail();
	random_heads(20000);
	every_head("builtin");
	every_head("builtin-causal");
	every_head("data/models/notes.attn");
	every_head("data/models/broad.attn");
	return test_summary("test_labels");
}
