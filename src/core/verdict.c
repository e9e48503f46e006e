/* The verdict on a model against the unigram baseline (verdict.h). */
#include "attnview/verdict.h"
#include "attnview/i18n.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>

verdict_kind verdict_of(float loss, float base_loss)
{
	if (isnan(loss) || isnan(base_loss) || !(base_loss > 0.0f))
		return VERDICT_NONE;
	return (double)loss <= (1.0 - VERDICT_MARGIN) * (double)base_loss ? VERDICT_BETTER
									  : VERDICT_NOT_BETTER;
}

/* A message of the verdict, translated or as written (N_ marks it). */
static const char *tx(bool translate, const char *s) AV_FORMAT_ARG(2);
static const char *tx(bool translate, const char *s)
{
	return translate ? gettext(s) : s;
}

static verdict_kind compose(float loss, float acc, float base_loss, float base_acc, uint64_t count,
			    char *buf, size_t n, bool tr)
{
	verdict_kind v = verdict_of(loss, base_loss);
	double l = loss, b = base_loss, gain = b - l;
	int k = 0;
	switch (v) {
	case VERDICT_NONE:
		k = snprintf(
		    buf, n,
		    tx(tr, N_("none: there is no validation text to judge the model by; its "
			      "training loss says how well it fits the training text, not how it "
			      "does on text it has not seen")));
		break;
	case VERDICT_BETTER:
		/* Not "beats" while it picks the right character no more often
		 * (the accuracies equal to the 0.1% shown, or below). */
		k = snprintf(
		    buf, n,
		    round(1000.0 * (double)acc) > round(1000.0 * (double)base_acc)
			? tx(tr, N_("beats the unigram baseline: loss %.3f against %.3f nats/char, "
				    "%.3f (%.0f%%) lower; accuracy %.1f%% against %.1f%%"))
			: tx(tr,
			     N_("a lower loss than the unigram baseline but no better "
				"accuracy: loss %.3f against %.3f nats/char, %.3f (%.0f%%) "
				"lower; accuracy %.1f%% against %.1f%%: it does not yet pick the "
				"right character more often than character frequencies do")),
		    l, b, gain, 100.0 * gain / b, 100.0 * (double)acc, 100.0 * (double)base_acc);
		break;
	case VERDICT_NOT_BETTER:
		k = snprintf(
		    buf, n,
		    tx(tr,
		       N_("does not beat the unigram baseline: loss %.3f against %.3f nats/char "
			  "(%.3f %s%s); accuracy %.1f%% against %.1f%%: it has learned little "
			  "more than how often each character occurs")),
		    l, b, fabs(gain),
		    gain > 0   ? tx(tr, N_("lower"))
		    : gain < 0 ? tx(tr, N_("higher"))
			       : tx(tr, N_("apart")),
		    gain > 0 ? tx(tr, N_(", less than 2%")) : "", 100.0 * (double)acc,
		    100.0 * (double)base_acc);
		break;
	}
	if (v != VERDICT_NONE && count > 0 && count < VERDICT_FEW && k > 0 && (size_t)k < n)
		snprintf(
		    buf + k, n - (size_t)k,
		    tx(tr, N_(" (judged on only %llu characters: a longer validation text judges "
			      "better)")),
		    (unsigned long long)count);
	return v;
}

verdict_kind verdict_text(float loss, float acc, float base_loss, float base_acc, uint64_t count,
			  char *buf, size_t n)
{
	return compose(loss, acc, base_loss, base_acc, count, buf, n, true);
}

verdict_kind verdict_text_untranslated(float loss, float acc, float base_loss, float base_acc,
				       uint64_t count, char *buf, size_t n)
{
	return compose(loss, acc, base_loss, base_acc, count, buf, n, false);
}

void verdict_short(float loss, float base_loss, char *buf, size_t n)
{
	switch (verdict_of(loss, base_loss)) {
	case VERDICT_BETTER:
		snprintf(buf, n, _("%.0f%% below unigram"),
			 100.0 * (double)(base_loss - loss) / (double)base_loss);
		break;
	case VERDICT_NOT_BETTER:
		snprintf(buf, n, _("not below unigram"));
		break;
	case VERDICT_NONE:
	default:
		snprintf(buf, n, _("no validation"));
		break;
	}
}
