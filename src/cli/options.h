/* Every option of the command line, declared once (options.c), tagged with
 * the modes that take it, as llama.cpp's common/arg.cpp does: the parsers
 * build getopt_long's tables from it, --help and --train --help are printed
 * from it, --list-options prints it for tests/cli/man.sh, and --completions
 * writes the shell completions from it (completions.c). A number's row
 * carries its kind and range, and cli_option_value reads every one of
 * them, in every mode and the lab. Adding an option is adding a row here
 * and its case in the parser of each mode that takes it (or in
 * take_common, cli.c, when several modes share its value). */
#ifndef ATTNVIEW_CLI_OPTIONS_H
#define ATTNVIEW_CLI_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The modes of the command line; main.c picks one. */
typedef enum cli_mode {
	MODE_VIEW,
	MODE_DUMP,
	MODE_INFO,
	MODE_EXPORT,
	MODE_TRAIN,
	MODE_NMODES
} cli_mode;
enum {
	M_VIEW = 1u << MODE_VIEW,
	M_DUMP = 1u << MODE_DUMP,
	M_INFO = 1u << MODE_INFO,
	M_EXPORT = 1u << MODE_EXPORT,
	M_TRAIN = 1u << MODE_TRAIN,
	M_ALL = (1u << MODE_NMODES) - 1,
};

/* What getopt_long returns for each long option (short ones return their
 * letter: -o, -h, -V). */
typedef enum cli_opt_id {
	OPT_FIRST = 256,
	/* shared by the view, --dump and --export */
	OPT_MODEL = OPT_FIRST,
	OPT_TEXT,
	OPT_LAYER,
	OPT_HEAD,
	OPT_SHOW,
	OPT_SCALE,
	OPT_COLORMAP,
	OPT_STEP,
	/* the view */
	OPT_CELLS,
	OPT_NO_PANEL,
	OPT_FIGURE_DIR,
	OPT_FIGURE_FORMAT,
	OPT_TEMPERATURE,
	OPT_TOP_K,
	/* --dump and --info */
	OPT_DUMP,
	OPT_INFO,
	OPT_FORMAT,
	OPT_INPUT,
	OPT_TOP,
	OPT_LOGITS,
	OPT_QUERY,
	OPT_KEY,
	OPT_CONTRIBUTIONS,
	OPT_AGGREGATES,
	OPT_ROLLOUT,
	OPT_WORDS,
	OPT_COMPARE,
	OPT_ABLATE,
	OPT_GENERATE,
	OPT_PATCH,
	OPT_TARGETS,
	OPT_LENS,
	OPT_DLA,
	OPT_CIRCUITS,
	OPT_FAITHFULNESS,
	OPT_TIMELINE,
	/* --export */
	OPT_EXPORT,
	OPT_OVERVIEW,
	OPT_VALUES,
	OPT_TITLE,
	OPT_FORCE,
	/* --train */
	OPT_TRAIN,
	OPT_OUTPUT,
	OPT_OBJECTIVE,
	OPT_DIM,
	OPT_HEADS,
	OPT_LAYERS,
	OPT_CONTEXT,
	OPT_BATCH,
	OPT_STEPS,
	OPT_EPOCHS,
	OPT_LR,
	OPT_WARMUP,
	OPT_SEED, /* and the view's and --dump's writing */
	OPT_THREADS,
	OPT_MIN_COUNT,
	OPT_MAX_VOCAB,
	OPT_VAL_SHARE,
	OPT_NO_VAL,
	OPT_VAL_FILE,
	OPT_EVAL_EVERY,
	OPT_PATIENCE,
	OPT_SHARPEN,
	OPT_CKPT_EVERY,
	OPT_TIMELINE_EVERY,
	OPT_KEEP_STEPS,
	OPT_RESUME,
	OPT_INIT,
	OPT_ANY_ENCODING,
	OPT_TASK, /* the lab: --train --task NAME */
	/* every mode */
	OPT_HELP,
	OPT_VERSION,
	OPT_LIST_OPTIONS,
	OPT_COMPLETIONS,
	OPT_END
} cli_opt_id;
#define CLI_NOPTS (OPT_END - OPT_FIRST)

/* --layer and --head are checked against the model later: here, any index
 * a model could have. */
#define CLI_MAX_INDEX 1000000

/* What an option's value is, for the one parser (cli_option_value). */
typedef enum cli_value_kind {
	CLI_OTHER = 0,	/* none, a text or a path, or a name of a table: the mode reads it */
	CLI_INT,	/* an int in [lo, hi], as strtol reads it (the view's and --dump's) */
	CLI_WHOLE,	/* decimal digits only: a uint64_t in [lo, hi] */
	CLI_REAL,	/* a number in [lo, hi] */
	CLI_REAL_BELOW, /* a number in [lo, hi) */
} cli_value_kind;

typedef struct cli_option {
	cli_opt_id id;
	const char *name; /* the long name, without "--" */
	char letter;	  /* a short name ('o' for -o), or 0 */
	const char *arg;  /* what its value is called ("FILE"), or NULL: it takes none */
	unsigned modes;	  /* M_*: the modes that take it */
	/* What it does, for every mode that takes it (a message to translate).
	 * NULL: described together with the next option, on one line
	 * ("--layer L, --head H  ..."). */
	const char *help;
	/* Its value's kind and the values accepted (CLI_OTHER: none here). */
	cli_value_kind kind;
	double lo, hi;
} cli_option;

/* A value as cli_option_value read it: .i for CLI_INT, .u for CLI_WHOLE,
 * .x for the reals. */
typedef union cli_value {
	int i;
	uint64_t u;
	double x;
} cli_value;

/* The one parser of option values: arg read as option id's row says (its
 * kind and range); false when arg is not such a value. The caller says why
 * in its message. cli_option_value_in narrows the row's range to [lo, hi]
 * (the lab's smaller models). */
bool cli_option_value(cli_opt_id id, const char *arg, cli_value *v);
bool cli_option_value_in(cli_opt_id id, const char *arg, double lo, double hi, cli_value *v);

extern const cli_option cli_options[CLI_NOPTS];

const cli_option *cli_option_of(cli_opt_id id);

/* getopt_long's table for a mode: its options, then a terminating row;
 * `out` has room for CLI_NOPTS + 1. The short options of the mode go to
 * shorts (":o:h" style, with room for 16). */
/* The modes that take the long option arg ("--name" or "--name=value";
 * written in full), or 0 when there is no such option. */
unsigned cli_option_modes(const char *arg);
void cli_getopt_table(cli_mode mode, struct option *out, char *shorts);

/* attnview --help, attnview --train --help, attnview --list-options (a
 * line an option: --name, -x or -, its value's name or -, the modes that
 * take it, tab-separated: "--layer\t-\tL\tview,dump,export"). */
void cli_print_help(FILE *out);
void cli_print_train_help(FILE *out);
void cli_list_options(FILE *out);

#endif
