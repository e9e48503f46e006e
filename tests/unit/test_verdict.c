/* The verdict against the unigram baseline (verdict.h): where "beats"
 * starts, what the sentences say, and no verdict without validation. */
#include "harness.h"

#include "attnview/verdict.h"

#include <math.h>
#include <string.h>

int main(void)
{
	char buf[1024];
	CHECK(verdict_of(1.826f, 4.006f) == VERDICT_BETTER);
	CHECK(verdict_of(6.017f, 5.982f) == VERDICT_NOT_BETTER);
	/* the margin: 2% below the baseline's loss */
	CHECK(verdict_of(0.97f * 5.0f, 5.0f) == VERDICT_BETTER);
	CHECK(verdict_of(0.99f * 5.0f, 5.0f) == VERDICT_NOT_BETTER);
	CHECK(verdict_of(NAN, 4.0f) == VERDICT_NONE && verdict_of(1.0f, NAN) == VERDICT_NONE);

	CHECK(verdict_text(1.826f, 0.559f, 4.006f, 0.205f, 25251, buf, sizeof buf) ==
	      VERDICT_BETTER);
	CHECKF(strcmp(buf, "beats the unigram baseline: loss 1.826 against 4.006 nats/char, 2.180 "
			   "(54%) lower; accuracy 55.9% against 20.5%") == 0,
	       "%s", buf);
	verdict_text(6.017f, 0.134f, 5.982f, 0.134f, 209, buf, sizeof buf);
	CHECKF(strstr(buf, "does not beat the unigram baseline: loss 6.017 against 5.982 "
			   "nats/char (0.035 higher)") &&
		   strstr(buf, "how often each character occurs") && !strstr(buf, "only"),
	       "%s", buf);
	verdict_text(5.0f, 0.2f, 5.05f, 0.1f, 35, buf, sizeof buf);
	CHECKF(strstr(buf, "(0.050 lower, less than 2%)") &&
		   strstr(buf, "judged on only 35 characters"),
	       "%s", buf);
	verdict_text(5.0f, 0.10f, 6.0f, 0.13f, 1000, buf, sizeof buf);
	/* a lower loss, but accuracy below or equal to the baseline's: not "beats" */
	CHECKF(strstr(buf, "a lower loss than the unigram baseline but no better accuracy") &&
		   strstr(buf, "accuracy 10.0% against 13.0%") && !strstr(buf, "beats"),
	       "%s", buf);
	verdict_text(3.0f, 0.0f, 3.2f, 0.0f, 1000, buf, sizeof buf);
	CHECKF(strstr(buf, "no better accuracy") && !strstr(buf, "beats"), "%s", buf);
	CHECK(verdict_text(NAN, NAN, NAN, NAN, 0, buf, sizeof buf) == VERDICT_NONE);
	CHECKF(strstr(buf, "no validation text"), "%s", buf);

	verdict_short(1.826f, 4.006f, buf, sizeof buf);
	CHECKF(strcmp(buf, "54% below unigram") == 0, "%s", buf);
	verdict_short(6.0f, 5.9f, buf, sizeof buf);
	CHECKF(strcmp(buf, "not below unigram") == 0, "%s", buf);
	return test_summary("verdict");
}
