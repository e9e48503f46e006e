/* The positions a lab task decides, read from a text (lab_positions.h). */
#include "attnview/lab_positions.h"

#include <string.h>

static bool is_letter(uint32_t c)
{
	return c >= 'a' && c <= 'z';
}

static bool is_mark(uint32_t c)
{
	return c && c < 0x80 && strchr(".,;!?", (int)c) != NULL;
}

/* The next character is the one k back (previous: k = 1; two-back: 2). */
static void copy_back(int k, const uint32_t *cps, int n, uint8_t *d)
{
	for (int i = k; i + 1 < n; i++)
		d[i] = is_letter(cps[i + 1]) && cps[i + 1] == cps[i - k];
}

static void rule_previous(const uint32_t *cps, int n, uint8_t *d)
{
	copy_back(1, cps, n, d);
}

static void rule_two_back(const uint32_t *cps, int n, uint8_t *d)
{
	copy_back(2, cps, n, d);
}

/* The character occurred before, and the next one is the one after its
 * latest earlier copy. */
static void rule_induction(const uint32_t *cps, int n, uint8_t *d)
{
	for (int i = 1; i + 1 < n; i++) {
		int j = i - 1;
		while (j >= 0 && cps[j] != cps[i])
			j--;
		d[i] = j >= 0 && is_letter(cps[i]) && cps[j + 1] == cps[i + 1];
	}
}

/* The character equals its mirror image about the first '|'. */
static void rule_reverse(const uint32_t *cps, int n, uint8_t *d)
{
	int m = 0;
	while (m < n && cps[m] != '|')
		m++;
	for (int i = 0; m < n && i < n; i++) {
		int mirror = 2 * m - i;
		d[i] = i != m && mirror >= 0 && mirror < n && is_letter(cps[i]) &&
		       cps[mirror] == cps[i];
	}
}

/* The letter the nearest mark before it (the first after it, at the
 * start of the text) stands for (lab.h: LAB_MARK_LETTERS). */
static void rule_delimiter(const uint32_t *cps, int n, uint8_t *d)
{
	static const char marks[] = ".,;!?";
	for (int i = 0; i < n; i++) {
		if (!is_letter(cps[i]))
			continue;
		int m = i - 1;
		while (m >= 0 && !is_mark(cps[m]))
			m--;
		if (m < 0)
			for (m = i + 1; m < n && !is_mark(cps[m]); m++)
				;
		if (m >= 0 && m < n)
			d[i] = cps[i] == (uint32_t)LAB_MARK_LETTERS[strchr(marks, (int)cps[m]) - marks];
	}
}

/* A digit written elsewhere too. */
static void rule_class(const uint32_t *cps, int n, uint8_t *d)
{
	for (int i = 0; i < n; i++) {
		if (cps[i] < '0' || cps[i] > '9')
			continue;
		for (int j = 0; j < n && !d[i]; j++)
			d[i] = j != i && cps[j] == cps[i];
	}
}

/* A letter the same as the next character. */
static void rule_next(const uint32_t *cps, int n, uint8_t *d)
{
	for (int i = 0; i + 1 < n; i++)
		d[i] = is_letter(cps[i]) && cps[i + 1] == cps[i];
}

/* A character the same as the first, a digit. */
static void rule_first(const uint32_t *cps, int n, uint8_t *d)
{
	for (int i = 1; i < n; i++)
		d[i] = cps[0] >= '0' && cps[0] <= '9' && cps[i] == cps[0];
}

/* A letter one or more into its word (after the last mark) that is the
 * word's first. */
static void rule_word_start(const uint32_t *cps, int n, uint8_t *d)
{
	int start = 0;
	for (int i = 0; i < n; i++) {
		if (!is_letter(cps[i])) {
			start = i + 1;
			continue;
		}
		d[i] = i > start && cps[i] == cps[start];
	}
}

/* A letter the same as the one at its place in the line before or after
 * (lines closed by full stops). */
static void rule_line_parallel(const uint32_t *cps, int n, uint8_t *d)
{
	int start = 0, prev = -1;
	for (int i = 0; i < n; i++) {
		if (cps[i] == '.') {
			prev = start;
			start = i + 1;
			continue;
		}
		int place = i - start;
		if (!is_letter(cps[i]))
			continue;
		bool before = prev >= 0 && prev + place < start - 1 && cps[prev + place] == cps[i];
		int next = i + 1;
		while (next < n && cps[next] != '.')
			next++;
		int after = next + 1 + place;
		bool ahead = after < n && cps[after] == cps[i];
		for (int k = next + 1; ahead && k < after; k++)
			ahead = cps[k] != '.';
		d[i] = before || ahead;
	}
}

/* A letter's script: 1 Latin (a to z), 2 Greek (α to ω), else 0. */
static int script_of(uint32_t c)
{
	return is_letter(c) ? 1 : c >= 0x3B1 && c <= 0x3C9 ? 2 : 0;
}

/* A Latin or Greek letter the same as the nearest letter of its script
 * before it. */
static void rule_script(const uint32_t *cps, int n, uint8_t *d)
{
	int last[3] = {-1, -1, -1};
	for (int i = 0; i < n; i++) {
		int s = script_of(cps[i]);
		if (!s)
			continue;
		d[i] = last[s] >= 0 && cps[last[s]] == cps[i];
		last[s] = i;
	}
}

/* A letter after the register that stands in it once, and the next
 * character is the digit of its place there. (A letter a person writes
 * twice into the register decides nothing: which copy the model reads is
 * its own.) */
static void rule_duplicate(const uint32_t *cps, int n, uint8_t *d)
{
	for (int i = LAB_REGISTER; i + 1 < n; i++) {
		int at = -1, copies = 0;
		for (int j = 0; j < LAB_REGISTER; j++)
			if (cps[j] == cps[i])
				at = j, copies++;
		d[i] = copies == 1 && is_letter(cps[i]) && cps[i + 1] == '0' + (uint32_t)at;
	}
}

/* A letter between two letters, the later in the alphabet of them. */
static void rule_band(const uint32_t *cps, int n, uint8_t *d)
{
	for (int i = 1; i + 1 < n; i++) {
		uint32_t a = cps[i - 1], b = cps[i + 1];
		d[i] =
		    is_letter(cps[i]) && is_letter(a) && is_letter(b) && cps[i] == (a > b ? a : b);
	}
}

typedef struct lab_rule {
	const char *name;
	void (*rule)(const uint32_t *cps, int n, uint8_t *decided);
} lab_rule;

static const lab_rule rules[] = {
    {"previous", rule_previous},
    {"two-back", rule_two_back},
    {"induction", rule_induction},
    {"reverse", rule_reverse},
    {"delimiter", rule_delimiter},
    {"class", rule_class},
    {"next", rule_next},
    {"band", rule_band},
    {"first", rule_first},
    {"word-start", rule_word_start},
    {"line-parallel", rule_line_parallel},
    {"duplicate", rule_duplicate},
    {"script", rule_script},
};
#define NRULES ((int)(sizeof rules / sizeof rules[0]))

const char *const lab_rule_names[] = {
    "previous", "two-back", "induction",  "reverse",	   "delimiter", "class",  "next",
    "band",	"first",    "word-start", "line-parallel", "duplicate", "script", NULL};
_Static_assert(sizeof lab_rule_names / sizeof lab_rule_names[0] == NRULES + 1,
	       "a name for every rule");

static const lab_rule *rule_of(const char *task)
{
	for (int i = 0; task && i < NRULES; i++)
		if (strcmp(rules[i].name, task) == 0)
			return &rules[i];
	return NULL;
}

const char *lab_model_task(const model *m)
{
	static const char prefix[] = "lab task ";
	const char *c = m->meta.corpus, *name = m->meta.name;
	if (!c || !name || strncmp(c, prefix, sizeof prefix - 1) != 0)
		return NULL;
	size_t len = strlen(name);
	const char *rest = c + sizeof prefix - 1;
	const lab_rule *r = rule_of(name);
	return r && strncmp(rest, name, len) == 0 && (rest[len] == ' ' || !rest[len]) ? r->name
										      : NULL;
}

int lab_decided(const char *task, const uint32_t *cps, int n, uint8_t *decided)
{
	const lab_rule *r = rule_of(task);
	if (!r)
		return -1;
	memset(decided, 0, (size_t)(n > 0 ? n : 0));
	r->rule(cps, n, decided);
	int count = 0;
	for (int i = 0; i < n; i++)
		count += decided[i];
	return count;
}
