/* Entry points of the program's modes. main.c picks the mode from the first
 * mode option it finds (--train, --dump, --info; otherwise the view) and hands
 * the whole argv to that mode, which parses its own options with getopt_long.
 * Each returns the process exit status. */
#ifndef ATTNVIEW_CLI_H
#define ATTNVIEW_CLI_H

#include "attnview/generate.h"
#include "attnview/model.h"
#include "options.h"

#include <stdarg.h>
#include <stdio.h>

/* Exit statuses (documented in attnview(1)). */
enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

int cli_dump(int argc, char **argv, cli_mode mode); /* --dump, --info */
int cli_export(int argc, char **argv); /* --export */
/* --export PATH --circuits (cli_export_circuits.c): the positional patterns
 * to PATH and the composition to export_circuits_path's name for it
 * (PATH-composition.EXT; false if it does not fit in size). */
bool export_circuits(const model *m, const char *path, bool force, const char *title, int sc,
		     int ramp, av_error *err);
bool export_circuits_path(const char *path, char *out, size_t size);
int cli_train(int argc, char **argv); /* --train */
int cli_view(int argc, char **argv);  /* the interactive view */

/* --model PATH: a file, or a built-in model's name ("builtin", the default
 * when path is NULL, or "builtin-causal"); a file called builtin is reached
 * as ./builtin. */
model *cli_load_model(const char *path, av_error *err);

/* The text of c's --text TEXT or --input FILE (exactly one is non-NULL), cleaned
 * (cleaning is reported on stderr; invalid UTF-8 is an error in TEXT and
 * replaced in FILE, which is refused if it is mostly not text unless
 * --any-encoding; a file's final line breaks are dropped); an empty
 * result is refused. */
struct cli_common;
bool cli_read_text(const struct cli_common *c, cp_buf *cps, av_error *err);
/* Patching's two characters for ids2 (n) patched into ids, into out:
 * --targets (each in the model's vocabulary, else an error), else where
 * the texts differ in one place; *targets is out, or NULL when neither
 * (activation_patch's default, the top-1s); *from says which. */
bool cli_patch_targets(const model *m, const struct cli_common *c, const int32_t *ids,
		       const int32_t *ids2, int n, int32_t out[2], const int32_t **targets,
		       int *from, av_error *err);
/* The same for the text of another option (`what` names it: "--compare"). */
bool cli_read_arg(const char *s, const char *what, cp_buf *cps, av_error *err);

/* The model on the first `context` codepoints of cps (the rest is reported
 * on stderr and left out; *dropped, may be NULL, says how many): r filled,
 * with r->value_norms when `norms` (for value contributions); free it with
 * attn_result_finish. */
bool cli_attend(const model *m, const cp_buf *cps, int topk, bool norms, attn_result *r,
		int *dropped, av_error *err);

/* After training: a line per layer with the roles of its heads on the
 * codepoints cps[0..n) (at most the context), `sample` saying what they
 * are, and advice when every head is broad. */
void cli_print_roles(const model *m, const uint32_t *cps, size_t n, const char *sample);

/* --train --task: the lab (lab.h). */
int cli_lab(int argc, char **argv);

/* How the model writes text (the view's Ctrl-G, --dump --generate): the
 * sampler's settings from --temperature T, --top-k K, --seed S. */
typedef struct cli_gen {
	float temperature;
	int top_k;
	uint64_t seed;
	bool given; /* one of the three was on the command line */
} cli_gen;
#define CLI_GEN_INIT {GEN_TEMPERATURE, GEN_TOP_K, 1, false}
/* One of those options (its id, its value) into g; -1, or the exit status
 * of a usage error, printed. */
int cli_gen_option(cli_opt_id id, const char *arg, cli_gen *g);

/* The values of the options several modes share (options.h: --model,
 * --text, --input, --layer, --head, --scale, --colormap, --words,
 * --compare, --temperature, --top-k, --seed), parsed in one place. */
typedef struct cli_common {
	const char *model_path, *text, *input, *compare;
	int layer, head; /* -1: not given */
	int scale;	 /* scale_kind, -1: not given */
	int ramp;	 /* cm_ramp, -1: not given */
	bool words;
	bool any_encoding; /* --any-encoding: --input FILE read even if it is not text */
	bool has_targets;  /* --targets A B: patching's two characters */
	uint32_t targets[2];
	cli_gen gen;
	/* --step S: model_path becomes the model of step S kept beside the
	 * file --model names (timeline_kept_path), held in step_path. */
	bool has_step;
	uint64_t step;
	char step_path[4200];
} cli_common;
#define CLI_COMMON_INIT                                                                            \
	{                                                                                          \
		.layer = -1, .head = -1, .scale = -1, .ramp = -1, .gen = CLI_GEN_INIT              \
	}

/* What --dump and --export both show besides the attention: the score
 * split of a cell (--query, --key), why the model predicts what it does
 * and whether the attention matters (--lens, --dla,
 * --patch, --circuits, --faithfulness) and the training timeline. */
typedef struct cli_why {
	int query, key;	   /* -1: not given */
	bool lens, dla;	   /* lens.h */
	bool circuits;	   /* circuits.h */
	bool faith;	   /* faith.h */
	const char *patch; /* --patch TEXT2 (patch.h) */
	bool timeline;	   /* --timeline: the training timeline instead of a text */
} cli_why;
#define CLI_WHY_INIT {.query = -1, .key = -1}

/* Takes option id into w if it is one of cli_why's: -1 when taken, -2 when
 * it is not one of them, or the exit status of a usage error (printed). */
int cli_take_why(cli_opt_id id, const char *arg, cli_why *w);

/* A mode's own options: take one (its id, its value or NULL) into ctx;
 * returns -1, or the exit status that ends parsing (help, a usage error,
 * printed). */
typedef int (*cli_take_fn)(cli_opt_id id, const char *arg, void *ctx);

/* argv for `mode`, through getopt_long with the mode's options of the
 * table: the shared ones into c (c NULL: every option goes to take), the
 * others to take. An option of another mode, an unknown one or a missing
 * value is a usage error; arguments that are not options are left at
 * argv[optind..argc) for the caller. Returns -1, or the exit status. */
int cli_parse(int argc, char **argv, cli_mode mode, cli_common *c, cli_take_fn take, void *ctx);

/* getopt_long takes any unambiguous beginning of a long option's name, and
 * attnview does not: main() and cli_train find the modes, --help and --task
 * by their whole names, so "--hel" or "--tas" would be read as one thing
 * there and another here. After getopt_long returned the long option
 * `name` (without its dashes), with optind now and its value (NULL: none):
 * NULL when the argument that held it was the whole name (or "--name="),
 * else that argument. */
const char *cli_shortened(char **argv, int optind_now, const char *value, const char *name);

/* A usage error: --show does not take `arg` (the names of select.h). */
int cli_show_error(const char *arg);

/* --layer and --head against this model's sizes: -1, or EXIT_USAGE with a
 * note naming the model's range. */
int cli_check_layer_head(const cli_common *c, const model *m);


/* What the program prints goes through these: s (or the formatted text)
 * with every control character escaped as av_char_shown says, line breaks
 * and tabs but the text's own. Names in it are quoted where they go in
 * (AV_Q); this is the net under that. cli_printf writes to stdout. */
void cli_write(FILE *f, const char *s);
void cli_vprintf(FILE *f, const char *fmt, va_list ap) AV_PRINTF(2, 0);
void cli_printf(const char *fmt, ...) AV_PRINTF(1, 2);

/* Messages on stderr. Each first flushes stdout, so that when both go to
 * the same file (2>&1) the lines keep the order they were written in; all
 * of the program's stderr output goes through these.
 * cli_error: "attnview: <msg>"; cli_note: "attnview: " and the formatted
 * text, for warnings and notes. */
void cli_error(const char *msg);
void cli_note(const char *fmt, ...) AV_PRINTF(1, 2);

/* Print "attnview: <message>" and "Try '<help>'." to stderr; returns
 * EXIT_USAGE. */
int cli_usage_error(const char *help, const char *fmt, ...) AV_PRINTF(2, 3);

#endif
