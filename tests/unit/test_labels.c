/* Labels that never contradict the picture: every head of the built-in
 * models, of a model trained with README's own command
 * (data/models/notes.attn) and of one of broad heads (data/models/broad.attn)
 * on texts of each kind, each label held to the heatmap as the tests read
 * it (tests/lib/picture.h: each row's brightest key, counted): every role
 * the label names shows in the picture, and no label hides an induction
 * head. First, the reading itself on planted matrices, so that it can fail:
 * the labels the labeller gave before it was measured (a column called
 * delimiter, an induction head called line-parallel on a text without
 * lines, a column called word start) are contradicted. */
#include "attnview/analysis.h"
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

/* Row i all on key_of[i] (masked: every key visible). */
static attn_matrix planted(int n, const int *key_of)
{
	memset(w, 0, sizeof w);
	for (int i = 0; i < n; i++)
		w[i * n + key_of[i]] = 1;
	return (attn_matrix){w, n, false, 0};
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
	attn_matrix a = planted(n, key);
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
	a = planted(n, key);
	rs = claim(ROLE_DELIMITER, ROLE_SURE, ROLE_NKINDS);
	CHECKF(picture_agrees(&a, t, &rs, why, sizeof why), "%s", why);

	/* A sentence written twice, its second half after the earlier copy:
	 * induction, and on a text without lines never line-parallel. */
	n = toks("mr dursley and mrs. mr dursley and mrs.");
	int half = n / 2 + 1; /* the second "mr" */
	for (int i = 0; i < n; i++)
		key[i] = i >= half ? i - half + 1 : i > 0 ? i - 1 : 1;
	a = planted(n, key);
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
		for (int l = 0; ok && l < (int)m->cfg.layers; l++)
			for (int h = 0; h < (int)m->cfg.heads; h++) {
				attn_matrix a = attn_result_head(&r, l, h);
				role_scores rs;
				head_roles(&rs, &a, r.tokens);
				char label[160], why[128];
				role_label(&rs, false, label, sizeof label);
				CHECKF(picture_agrees(&a, r.tokens, &rs, why, sizeof why),
				       "%s L%d H%d on \"%s\": \"%s\", but %s", name, l, h, texts[k],
				       label, why);
				CHECKF(!picture_hides_induction(&a, r.tokens, &rs, why, sizeof why),
				       "%s L%d H%d on \"%s\": \"%s\" hides induction: %s", name, l,
				       h, texts[k], label, why);
			}
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
	every_head("builtin");
	every_head("builtin-causal");
	every_head("data/models/notes.attn");
	every_head("data/models/broad.attn");
	return test_summary("test_labels");
}
