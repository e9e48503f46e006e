/* The verdict on a model against the unigram baseline (verdict.h). */
#include "attnview/verdict.h"
#include "attnview/i18n.h"

#include <math.h>
#include <stdio.h>

verdict_kind verdict_of(float loss, float base_loss)
{
	if (isnan(loss) || isnan(base_loss) || !(base_loss > 0.0f))
		return VERDICT_NONE;
	return (double)loss <= (1.0 - VERDICT_MARGIN) * (double)base_loss ? VERDICT_BETTER
									  : VERDICT_NOT_BETTER;
}

verdict_kind verdict_text(float loss, float acc, float base_loss, float base_acc, uint64_t count,
			  char *buf, size_t n)
{
	verdict_kind v = verdict_of(loss, base_loss);
	double l = loss, b = base_loss, gain = b - l;
	int k = 0;
	switch (v) {
	case VERDICT_NONE:
		k = snprintf(buf, n,
			     _("none: there is no validation text to judge the model by; its "
			     "training loss says how well it fits the training text, not how it "
			     "does on text it has not seen"));
		break;
	case VERDICT_BETTER:
		k = snprintf(buf, n,
			     _("beats the unigram baseline: loss %.3f against %.3f nats/char, %.3f "
			     "(%.0f%%) lower; accuracy %.1f%% against %.1f%%%s"),
			     l, b, gain, 100.0 * gain / b, 100.0 * (double)acc,
			     100.0 * (double)base_acc, acc < base_acc ? _(" (not above it yet)") : "");
		break;
	case VERDICT_NOT_BETTER:
		k = snprintf(buf, n,
			     _("does not beat the unigram baseline: loss %.3f against %.3f nats/char "
			     "(%.3f %s%s); accuracy %.1f%% against %.1f%%: it has learned little "
			     "more than how often each character occurs"),
			     l, b, fabs(gain),
			     gain > 0	? _("lower")
			     : gain < 0 ? _("higher")
					: _("apart"),
			     gain > 0 ? _(", less than 2%") : "", 100.0 * (double)acc,
			     100.0 * (double)base_acc);
		break;
	}
	if (v != VERDICT_NONE && count > 0 && count < VERDICT_FEW && k > 0 && (size_t)k < n)
		snprintf(buf + k, n - (size_t)k,
			 _(" (judged on only %llu characters: a longer validation text judges "
			 "better)"),
			 (unsigned long long)count);
	return v;
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
