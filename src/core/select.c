/* What a map shows (select.h): the kinds' names and their matrices. */
#include "attnview/select.h"
#include "attnview/analysis.h"
#include "attnview/i18n.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const sel_names[] = {
    [SEL_HEAD] = "head",
    [SEL_MEAN] = "mean",
    [SEL_MAX] = "max",
    [SEL_ROLLOUT] = "rollout",
    [SEL_ALL] = "all",
    [SEL_CONTRIB] = "contributions",
    [SEL_OVERVIEW] = "overview",
};
_Static_assert(sizeof sel_names / sizeof sel_names[0] == SEL_NKINDS, "a name for every kind");

const char *sel_name(sel_kind k)
{
	return (unsigned)k < SEL_NKINDS ? sel_names[k] : "?";
}

bool sel_parse(const char *name, sel_kind *k)
{
	for (int i = 0; i < SEL_NKINDS; i++)
		if (strcmp(name, sel_names[i]) == 0) {
			*k = (sel_kind)i;
			return true;
		}
	return false;
}

const char *sel_names_list(const char *last)
{
	static char buf[160];
	size_t len = 0;
	for (int i = 0; i < SEL_NKINDS && len < sizeof buf; i++)
		len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s",
					i == 0		    ? ""
					: i == SEL_NKINDS - 1 ? last
							      : ", ",
					sel_names[i]);
	return buf;
}

bool sel_has_head(sel_kind k)
{
	return k == SEL_HEAD || k == SEL_CONTRIB;
}

bool sel_has_layer(sel_kind k)
{
	return k != SEL_ALL && k != SEL_OVERVIEW;
}

void sel_cache_forget(sel_cache *c)
{
	c->of = NULL;
}

void sel_cache_finish(sel_cache *c)
{
	free(c->roll);
	free(c->work);
	memset(c, 0, sizeof *c);
}

/* The rollout of every layer of r, made once per result. */
static const float *rollout(const attn_result *r, sel_cache *c, av_error *err)
{
	if (c->of == r && c->roll)
		return c->roll;
	size_t nn = (size_t)r->n * (size_t)r->n, need = (size_t)r->layers * nn;
	if (need > c->cap) {
		float *roll = realloc(c->roll, need * sizeof *roll);
		if (roll)
			c->roll = roll;
		float *work = roll ? realloc(c->work, nn * sizeof *work) : NULL;
		if (work)
			c->work = work;
		if (!roll || !work) {
			av_fail(err, _("out of memory for the rollout of %d tokens"), r->n);
			return NULL;
		}
		c->cap = need;
	}
	attention_rollout(c->roll, c->work, r);
	c->of = r;
	return c->roll;
}

/* The head's value contributions as shares of each row. */
static bool contributions(float *out, const attn_result *r, int layer, int head, av_error *err)
{
	if (!r->value_norms)
		return av_fail(err, _("the value contributions need the value norms of the text"));
	attn_matrix a = attn_result_head(r, layer, head);
	size_t at = ((size_t)layer * (size_t)r->heads + (size_t)head) * (size_t)r->n;
	contribution_shares(out, &a, r->value_norms + at);
	return true;
}

bool sel_matrix(float *out, const attn_result *r, sel_kind kind, int layer, int head,
		sel_cache *c, av_error *err)
{
	size_t nn = (size_t)r->n * (size_t)r->n;
	switch (kind) {
	case SEL_HEAD:
	case SEL_OVERVIEW: {
		attn_matrix a = attn_result_head(r, layer, head);
		attn_matrix_copy(out, &a);
		return true;
	}
	case SEL_MEAN:
	case SEL_MAX:
		aggregate_heads(out, r, layer, kind);
		return true;
	case SEL_ALL:
		aggregate_heads(out, r, 0, SEL_ALL);
		return true;
	case SEL_ROLLOUT: {
		const float *roll = rollout(r, c, err);
		if (roll)
			memcpy(out, roll + (size_t)layer * nn, nn * sizeof *out);
		return roll != NULL;
	}
	case SEL_CONTRIB:
		return contributions(out, r, layer, head, err);
	case SEL_NKINDS:
	default:
		return av_fail(err, _("no such map: %d"), (int)kind);
	}
}
