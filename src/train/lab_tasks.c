/* The lab's tasks (lab.h): the generators of their texts and the task
 * table, one row a task. */
#include "attnview/i18n.h"
#include "attnview/lab.h"
#include "attnview/lab_positions.h"

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
 * and its mirror image, one is hidden, either at random, and scored: every
 * pair has a row that must look at its mirror image, nearly half the rows
 * (with four of five pairs, two fifths: under the half that makes a role,
 * so a head that carried the mechanism was labelled unclear). */
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
		if (which < T)
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

/* Random letters, and one digit written at 18 to 24 different places of
 * 32, all hidden but one: the digit's rows are most rows, so a head that
 * fetches the digit for them shows a column on most rows. Scored: the
 * hidden ones, which only the one digit shown tells. */
static void gen_class(const lab_task *t, rng *r, int T, uint32_t *text, uint8_t *flag)
{
	(void)t;
	memset(flag, 0, (size_t)T);
	uint32_t digit = '0' + (uint32_t)rng_below(r, 10);
	for (int i = 0; i <= T; i++)
		text[i] = letter(r); /* never a digit */
	int spread = T / 4 - 1 > 1 ? T / 4 - 1 : 1;
	int places = T / 2 + 2 + (int)rng_below(r, (uint64_t)spread);
	if (places > T)
		places = T;
	for (int k = 0; k < places;) {
		int i = (int)rng_below(r, (uint64_t)T);
		if (text[i] == digit)
			continue;
		text[i] = digit;
		if (k++ > 0)
			flag[i] = LAB_MASKED | LAB_SCORED; /* the first place is shown */
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

/* Random letters, every other one (from a random place) replaced by the
 * later in the alphabet of its two neighbours and hidden ("k?b" holds k).
 * Scored: the hidden ones, which only both neighbours tell: a head looks
 * at the one before and the one after, the larger more. */
static void gen_band(const lab_task *t, rng *r, int T, uint32_t *text, uint8_t *flag)
{
	(void)t;
	int p = (int)rng_below(r, 2);
	for (int i = 0; i <= T; i++) {
		text[i] = letter(r);
		if (i < T)
			flag[i] = 0;
	}
	for (int i = 1 + p; i + 1 <= T; i += 2) {
		text[i] = text[i - 1] > text[i + 1] ? text[i - 1] : text[i + 1];
		if (i + 1 < T)
			flag[i] = LAB_MASKED | LAB_SCORED;
	}
}

/* A digit, then random letters and other digits, three quarters of the
 * places hidden; every hidden one is the first digit, which only the first
 * place tells. The other digits (half the places shown) keep a head from
 * finding it by averaging every key, where the one digit stood out: without
 * them a carrier's picture could be broad, no column at key 0. */
static void gen_first(const lab_task *t, rng *r, int T, uint32_t *text, uint8_t *flag)
{
	(void)t;
	text[0] = '0' + (uint32_t)rng_below(r, 10);
	flag[0] = 0;
	for (int i = 1; i <= T; i++) {
		bool hide = rng_uniform(r) < 0.75f;
		uint32_t other = '0' + (uint32_t)(text[0] - '0' + 1 + rng_below(r, 9)) % 10;
		text[i] = hide ? text[0] : rng_uniform(r) < 0.5f ? other : letter(r);
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

/* LAB_REGISTER distinct letters, the register, then the same letters in
 * another order, each followed by the digit of its place in the register
 * ("kbqe…" then "e3k0…"), then letters not in the register to the end.
 * Scored: the letters of the second part, whose next character is where
 * their copy in the register stands; nothing but that copy tells it, and
 * one layer finds it: a head looks at the copy and reads its place. (Drawn
 * with replacement, the letters of the second part leave the model nothing
 * to learn first, and 11 of 12 runs tried stayed near chance in 12000
 * steps; in another order, it first learns to leave out the digits already
 * written, 29%, on its way to the copy.) */
static void gen_duplicate(const lab_task *t, rng *r, int T, uint32_t *text, uint8_t *flag)
{
	(void)t;
	uint32_t reg[26], rest[26];
	distinct_letters(r, LAB_REGISTER, reg, rest);
	int order[LAB_REGISTER];
	for (int k = 0; k < LAB_REGISTER; k++)
		order[k] = k;
	for (int k = LAB_REGISTER - 1; k > 0; k--) {
		int j = (int)rng_below(r, (uint64_t)(k + 1)), x = order[k];
		order[k] = order[j];
		order[j] = x;
	}
	memset(flag, 0, (size_t)T);
	int tail = 0;
	for (int i = 0; i <= T; i++) {
		int k = (i - LAB_REGISTER) / 2;
		if (i < LAB_REGISTER) {
			text[i] = reg[i];
		} else if (k < LAB_REGISTER) {
			bool digit = (i - LAB_REGISTER) % 2;
			text[i] = digit ? '0' + (uint32_t)order[k] : reg[order[k]];
			if (!digit && i < T)
				flag[i] = LAB_SCORED;
		} else {
			text[i] = rest[tail++ % (26 - LAB_REGISTER)];
		}
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

/* clang-format off */
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
     "xqbmkwtrjqbmkwtrjqbmkwt", OBJ_CAUSAL, 32, 1, 2, 24, 32, 12000, 5e-3f, 26, 0,
     {ROLE_PREVIOUS, ROLE_INDUCTION}, gen_induction, false},
    {"reverse",
     N_("twelve letters, a bar and the same letters reversed (\"abc|cba\"), one of each "
	"pair hidden: a hidden letter is its mirror image's, which a head finds by looking "
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
     N_("random letters and one digit written at more than half the places, all hidden "
	"but one (\"k77q7e77\"): a hidden place holds the digit shown, which a head finds "
	"by looking at the one character of its class"),
     "k77q7e77x77f7w77a7m77o7s7", OBJ_MASKED, 32, 1, 1, 32, 32, 1500, 3e-3f, 10, 0,
     {ROLE_KEYWORD, ROLE_NKINDS}, gen_class, false},
    {"next",
     N_("pairs of one letter (\"kkbbqq\"), the first of each pair hidden: a hidden "
	"letter is the next one, which a head fetches by looking at the next character"),
     "kkbbqqeexxzzffwwaa", OBJ_MASKED, 32, 1, 1, 32, 32, 1500, 3e-3f, 26, 0,
     {ROLE_NEXT, ROLE_NKINDS}, gen_next, false},
    {"band",
     N_("letters, every other one hidden, each the later in the alphabet of its two "
	"neighbours (\"k?b\" holds k): a head looks at the letters on both sides of a "
	"hidden one, the larger more, a band two places wide"),
     "kkbqqxxxfwwwammmjoo", OBJ_MASKED, 32, 1, 1, 32, 32, 2000, 3e-3f, 13, 0,
     {ROLE_LOCAL, ROLE_NKINDS}, gen_band, false},
    {"first",
     N_("a digit, then letters and other digits, three of four places hidden "
	"(\"7kb37q\"): every hidden place holds the first digit, which a head finds by "
	"looking at the first character"),
     "7k7737b77q7277e7x7", OBJ_MASKED, 32, 1, 1, 32, 32, 4000, 3e-3f, 10, 0,
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
     N_("ten distinct letters, then the same letters in another order, each followed by "
	"the digit of its place among the ten (\"kbqexzfwam\", then \"e3k0m9\"): after a "
	"letter comes the place of its earlier copy, which a head finds by looking at "
	"that copy"),
     "kbqexzfwame3k0m9b1z5a8q2w7x4f6jo", OBJ_CAUSAL, 64, 1, 1, 32, 32, 12000, 3e-3f, 10, 0,
     {ROLE_DUPLICATE, ROLE_NKINDS}, gen_duplicate, false},
    {"script",
     N_("Latin and Greek letters mixed, most of them hidden behind their script's "
	"placeholder, z or ω (\"kzβωzdω\"): a hidden letter is the "
	"nearest letter of its own script before it, which a head finds by looking at "
	"the letters of its script"),
     "kzβωzdωγzωqωzzλω", OBJ_MASKED, 64, 1, 1, 32,
     32, 8000, 3e-3f, 25, 0, {ROLE_SCRIPT, ROLE_NKINDS}, gen_script, true},
};
/* clang-format on */

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
