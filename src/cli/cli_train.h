/* Shared by cli_train.c and cli_train_options.c: what attnview --train was
 * asked for (its options are in options.h's table). */
#ifndef ATTNVIEW_CLI_TRAIN_H
#define ATTNVIEW_CLI_TRAIN_H

#include "attnview/train.h"
#include "cli.h"

#include <stdbool.h>
#include <stddef.h>

#define usage_error(...) cli_usage_error("attnview --train --help", __VA_ARGS__)

/* What attnview --train was asked for: parse_train_options fills it, the
 * later phases complete it (a checkpoint's options, the output paths). */
typedef struct train_request {
	train_options o;
	const char **corpus; /* the corpus files, in order ("-": standard input) */
	size_t ncorpus;
	const char *out, *val_path, *resume;
	const char *init;		  /* --init MODEL */
	model *init_model;		  /* its model, until the trainer takes it */
	uint64_t resumed_total;		  /* with --resume: the checkpoint's steps */
	int threads;			  /* --threads, 0 if not given */
	uint64_t keep_every;		  /* --keep-steps, 0: none */
	bool given[CLI_NOPTS]; /* which options appeared (by id - OPT_FIRST) */
	char out_buf[4096], ckpt[4200], resume_buf[4200];
} train_request;

/* The command line into q; returns -1, or the exit status (help, usage
 * error). */
int parse_train_options(int argc, char **argv, train_request *q);

/* --resume (cli_train_start.c): the checkpoint read into ck (the one beside
 * a finished model given instead), its options taken, the ones given checked
 * against them, --steps as the run's new total. Returns -1, or the exit
 * status. */
int take_checkpoint(train_request *q, train_checkpoint *ck);
/* --init: the model read into q->init_model, its objective and sizes made
 * the run's (given ones that differ refused). Returns -1, or the exit
 * status. */
int take_init(train_request *q);
/* Is there something at path a new run must not write over: a stopped
 * run's checkpoint (a finished run's is replaced)? */
bool stopped_run_at(const char *path);

#endif
