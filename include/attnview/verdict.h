/* Whether a model learned anything: its validation loss against the unigram
 * baseline's on the same characters (train.h, "Evaluation").
 *
 * The baseline predicts every character from its frequency in the training
 * text alone; a model that is no better has learned nothing about context.
 * The verdict: the model beats the baseline when its loss (mean cross-entropy
 * in nats per predicted character) is at least VERDICT_MARGIN (2%) below the
 * baseline's, and by how much is the difference in nats/char and relative to
 * the baseline's loss; the accuracies (masked or next character, against
 * always guessing the most frequent character) are given beside it. Below
 * VERDICT_FEW predicted characters the verdict says on how few it rests.
 * Without validation text there is no verdict. */
#ifndef ATTNVIEW_VERDICT_H
#define ATTNVIEW_VERDICT_H

#include <stddef.h>
#include <stdint.h>

#define VERDICT_MARGIN 0.02
#define VERDICT_FEW    100

typedef enum verdict_kind {
	VERDICT_NONE = 0,   /* no validation text: nothing to judge by */
	VERDICT_NOT_BETTER, /* within VERDICT_MARGIN of the baseline, or worse */
	VERDICT_BETTER,
} verdict_kind;

verdict_kind verdict_of(float loss, float base_loss);

/* The verdict as a sentence (no trailing newline), e.g. "beats the unigram
 * baseline: loss 1.826 against 4.006 nats/char, 2.180 (54%) lower; accuracy
 * 55.9% against 20.5%". count: the characters it was judged on (0: not
 * known). In the language of the messages (i18n.h). */
verdict_kind verdict_text(float loss, float acc, float base_loss, float base_acc, uint64_t count,
			  char *buf, size_t n);
/* The same in English whatever the locale: for --info, which scripts read. */
verdict_kind verdict_text_untranslated(float loss, float acc, float base_loss, float base_acc,
				       uint64_t count, char *buf, size_t n);

/* A few words for a status line: "54% below unigram", "not below unigram". */
void verdict_short(float loss, float base_loss, char *buf, size_t n);

#endif
