/* The positions a lab task decides, read from a text (lab_positions.h):
 * on texts of each task's own generator, every position it scores is found,
 * and for a causal task few others (coincidences of random letters; a
 * masked task's generator hides and scores some of the positions its
 * mechanism decides, the rule finds them all); every task of the lab has a
 * rule; a lab model is known by its metadata; and the rules on typed
 * texts. */
#include "harness.h"

#include "attnview/lab.h"
#include "attnview/lab_positions.h"
#include "attnview/tokenizer.h"

#include <string.h>

/* The characters a model reads from a generated text (a causal task reads
 * text[0..T), its targets text[1..T]; a masked one reads the text with its
 * hidden characters, which the rule sees unmasked, as in the view). */
static void check_task(const lab_task *t)
{
	int T = (int)t->context, missed = 0, extra = 0, scored = 0;
	rng r;
	rng_seed(&r, 7);
	for (int k = 0; k < 200; k++) {
		uint32_t text[LAB_MAX_CONTEXT + 1];
		uint8_t flag[LAB_MAX_CONTEXT], d[LAB_MAX_CONTEXT + 1];
		t->gen(t, &r, T, text, flag);
		/* A causal task's last position predicts text[T]: the rule
		 * reads T + 1 characters. */
		int n = T + (t->obj == OBJ_CAUSAL);
		CHECKF(lab_decided(t->name, text, n, d) >= 0, "%s: no rule", t->name);
		for (int i = 0; i < T; i++) {
			bool s = flag[i] & LAB_SCORED;
			scored += s;
			missed += s && !d[i];
			extra += !s && d[i];
		}
	}
	printf("%-10s %5d scored positions, %d missed, %d more\n", t->name, scored, missed, extra);
	CHECKF(missed == 0, "%s: %d scored positions not found by the rule", t->name, missed);
	/* By chance a random letter is the one the rule looks for 1 time in
	 * 26: at most 1 position in 20 more. */
	CHECKF(t->obj != OBJ_CAUSAL || extra * 20 <= 200 * T,
	       "%s: %d positions more than the %d scored, of %d", t->name, extra, scored, 200 * T);
}

static int decided(const char *task, const char *s, uint8_t *d)
{
	uint32_t cps[64];
	int n = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p && n < 64; n++)
		if (*p < 0x80)
			cps[n] = *p++;
		else { /* two bytes: the Greek letters */
			cps[n] = (uint32_t)(p[0] & 0x1F) << 6 | (p[1] & 0x3F);
			p += 2;
		}
	return lab_decided(task, cps, n, d);
}

/* The rules on texts a person types. */
static void typed(void)
{
	uint8_t d[64];
	/* kbqzwxy written again: from the second k on, each next letter. */
	CHECK(decided("induction", "kbqzwxykbqzwxykbq", d) == 9 && !d[6] && d[7] && d[15]);
	CHECK(decided("previous", "kbkqeq", d) == 2 && d[1] && d[4]);
	CHECK(decided("two-back", "kbtkqexq", d) == 2 && d[2] && d[6]);
	CHECK(decided("reverse", "abc|cba", d) == 6 && !d[3]);
	/* ! stands for o, ? for u, . for a. */
	CHECK(decided("delimiter", "!ooo!?uk?.a", d) == 5 && d[1] && d[3] && d[6] && !d[7] &&
	      d[10] && !d[0]);
	CHECK(decided("next", "kkbbqx", d) == 2 && d[0] && d[2] && !d[1] && !d[4]);
	/* k between k and b, q between b and q; x between q and a is not. */
	CHECK(decided("band", "kkbqqxa", d) == 2 && d[1] && d[3] && !d[5]);
	CHECK(decided("first", "7b7q7", d) == 2 && d[2] && d[4] && !d[0]);
	CHECK(decided("first", "kbkqk", d) == 0);
	CHECK(decided("word-start", "kkk.bbx;q", d) == 3 && d[1] && d[2] && d[5] && !d[6] &&
	      !d[8]);
	CHECK(decided("line-parallel", "kbq.kxq.", d) == 4 && d[0] && d[4] && !d[1] && !d[5]);
	/* e's copy stands at place 3, k's at 0, q's at 2; b (place 1) is
	 * followed by 7, and the register itself decides nothing. */
	CHECK(decided("duplicate", "kbqexzfwame3k0b7q2", d) == 3 && d[10] && d[12] && !d[14] &&
	      d[16] && !d[2]);
	/* k twice in the register: either place, nothing decided. */
	CHECK(decided("duplicate", "kkqexzfwamk0k1q2", d) == 1 && !d[10] && !d[12] && d[14]);
	/* k, then β, then k again after β: the nearest of its own script. */
	CHECK(decided("script", "kβkβdk", d) == 2 && d[2] && d[3] && !d[4] && !d[5]);
	CHECK(decided("class", "kb7qe7x3", d) == 2 && d[2] && d[5] && !d[7]);
	CHECK(decided("no-such-task", "abc", d) == -1);
}

int main(void)
{
	int nrules = 0;
	while (lab_rule_names[nrules])
		nrules++;
	CHECKF(nrules == lab_ntasks(), "%d rules for %d tasks", nrules, lab_ntasks());
	for (int i = 0; i < lab_ntasks(); i++)
		check_task(lab_task_at(i));
	typed();
	/* A lab model is known by its metadata, and only then. */
	av_error err;
	lab_options o = {.seed = 1};
	model *m = lab_model_create(lab_find("induction"), &o, &err);
	CHECK(m && lab_model_task(m) && strcmp(lab_model_task(m), "induction") == 0);
	if (m) {
		CHECK(model_set_meta_strings(m, "induction", "a corpus", &err));
		CHECK(lab_model_task(m) == NULL);
	}
	model_destroy(m);
	return test_summary("lab_positions");
}
