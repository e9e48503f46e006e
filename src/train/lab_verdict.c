/* The lab's verdicts on a head from task accuracies (lab.h): whether it
 * carries the mechanism, what the task's pattern in its place says, and
 * the control of every key alike. The accuracies come from lab.c. */
#include "attnview/lab.h"

#include <math.h>

bool lab_carries(double acc_all, double acc_without, double chance)
{
	return acc_all - acc_without >= 0.5 * (acc_all - chance);
}

lab_fit lab_pattern_fit(double acc_all, double acc_pattern, double chance)
{
	double gain = acc_all - chance, kept = acc_pattern - chance;
	return isnan(acc_pattern)   ? LAB_FIT_NONE
	       : kept >= 0.9 * gain ? LAB_FIT_HOLDS
	       : kept >= 0.5 * gain ? LAB_FIT_PARTLY
				    : LAB_FIT_OTHER;
}

bool lab_output_only(double acc_all, double acc_without, double acc_even, double chance)
{
	return lab_carries(acc_all, acc_without, chance) &&
	       lab_pattern_fit(acc_all, acc_even, chance) == LAB_FIT_HOLDS;
}

bool lab_judge_picture(const model *m, const lab_task *t, uint64_t seed, int head, double acc_all,
		       double acc_without, lab_picture *out, av_error *err)
{
	double chance = 1.0 / t->answers;
	*out = (lab_picture){.fit = LAB_FIT_NONE, .acc_pattern = NAN, .acc_even = NAN};
	if (!lab_pattern_accuracy(m, t, seed, head, &out->acc_pattern, err))
		return false;
	out->fit = lab_pattern_fit(acc_all, out->acc_pattern, chance);
	/* A pattern that fails already says the picture is not the
	 * mechanism; the control has nothing to add. */
	if (out->fit != LAB_FIT_HOLDS && out->fit != LAB_FIT_NONE)
		return true;
	if (!lab_uniform_accuracy(m, t, seed, head, &out->acc_even, err))
		return false;
	out->output_only = lab_output_only(acc_all, acc_without, out->acc_even, chance);
	return true;
}
