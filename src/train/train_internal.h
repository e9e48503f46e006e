/* Shared by train.c and the files it uses (train_eval.c,
 * train_timeline.c); not part of the public API. */
#ifndef ATTNVIEW_TRAIN_INTERNAL_H
#define ATTNVIEW_TRAIN_INTERNAL_H

#include "attnview/train.h"

/* The training timeline (timeline.h, train_timeline.c): at the start, the
 * timeline of the model the run starts from (--init) going on, or a new one
 * on the run's probe, with the record of the model's state; the record
 * after a step when one is due. Both do nothing with timeline_every 0. */
bool train_timeline_start(trainer *t, av_error *err);
bool train_timeline_step(trainer *t, av_error *err);
/* The model of the step just recorded, kept beside out_path when
 * --keep-steps asks for it (keep_every, timeline_keep_due). */
bool train_timeline_keep(const trainer *t, av_error *err);

/* Evaluation over the threads (train_eval.c): each thread's activations for
 * a group of sequences and the groups' sums; the model's summed loss,
 * predicted characters and right guesses on the first nb rows of
 * t->tokens and t->targets, added into the totals. */
bool train_eval_buffers_init(trainer *t, av_error *err);
void train_eval_batch(trainer *t, int nb, double *loss, uint64_t *count, uint64_t *correct);

#endif
