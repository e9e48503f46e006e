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

/* An opening mark whose segment is closed by the same mark: marks pair
 * off from the start, the first of each pair opening. */
static void rule_delimiter(const uint32_t *cps, int n, uint8_t *d)
{
	int open = -1;
	for (int i = 0; i < n; i++) {
		if (!is_mark(cps[i]))
			continue;
		if (open < 0) {
			open = i;
			continue;
		}
		d[open] = cps[open] == cps[i];
		open = -1;
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

typedef struct lab_rule {
	const char *name;
	void (*rule)(const uint32_t *cps, int n, uint8_t *decided);
} lab_rule;

static const lab_rule rules[] = {
    {"previous", rule_previous}, {"two-back", rule_two_back},	{"induction", rule_induction},
    {"reverse", rule_reverse},	 {"delimiter", rule_delimiter}, {"class", rule_class},
};
#define NRULES ((int)(sizeof rules / sizeof rules[0]))

const char *const lab_rule_names[] = {"previous",  "two-back", "induction", "reverse",
				      "delimiter", "class",    NULL};
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
