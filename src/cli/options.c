/* The option table (options.h) and what is printed from it: --help,
 * --train --help and --list-options. */
#include "options.h"
#include "attnview/i18n.h"
#include "attnview/generate.h"
#include "attnview/tokenizer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#define O(id_, name_, letter_, arg_, modes_, help_)                                                \
	[id_ - OPT_FIRST] = {id_, name_, letter_, arg_, modes_, help_, CLI_OTHER, 0, 0}
/* An option whose value is a number: its kind and the values accepted. */
#define V(id_, name_, letter_, arg_, modes_, kind_, lo_, hi_, help_)                               \
	[id_ - OPT_FIRST] = {id_, name_, letter_, arg_, modes_, help_, kind_, lo_, hi_}

/* The modes that show pictures of the weights, and those that read a text. */
#define M_LOOK	  (M_VIEW | M_DUMP | M_EXPORT)
#define M_PICTURE (M_VIEW | M_EXPORT)

/* In the order --help lists them: a mode's section lists the options that
 * no section before it has described. */
const cli_option cli_options[CLI_NOPTS] = {
    O(OPT_MODEL, "model", 'm', "FILE", M_LOOK | M_INFO,
      N_("the model (default: the built-in one); builtin and builtin-causal name the "
	 "built-in models (the second predicts the next character and writes text: "
	 "Ctrl-G); the view reloads FILE when it is replaced, e.g. by a --train run "
	 "writing FILE or FILE.ckpt")),
    O(OPT_TEXT, "text", 't', "TEXT", M_LOOK,
      N_("the text to look at (invalid UTF-8 is an error; ▒, where the model has no "
	 "such character, is the mask token); the view starts with it in the input line")),
    V(OPT_LAYER, "layer", 0, "L", M_LOOK, CLI_INT, 0, CLI_MAX_INDEX, NULL),
    V(OPT_HEAD, "head", 0, "H", M_LOOK, CLI_INT, 0, CLI_MAX_INDEX,
      N_("the layer and head, numbered from 0: the view starts on them, --dump prints "
	 "only them, --export draws them")),
    O(OPT_SHOW, "show", 0, "WHAT", M_PICTURE,
      N_("head (default), or a summary of the layer's heads: mean, max, rollout "
	 "(through the layer; --export's default: the last), all (every head's mean); "
	 "contributions (the head's value contributions, F11), overview (every head, a "
	 "tile each, with its role)")),
    O(OPT_SCALE, "scale", 0, "S", M_PICTURE,
      N_("colour scale: row (the map's default: each row to its maximum), fixed (0..1), "
	 "head (to the head's maximum), log (.001..1), lift (the overview's default: the "
	 "weight against uniform attention, times the keys the row sees, on a log scale "
	 "with 1 in the middle)")),
    O(OPT_COLORMAP, "colormap", 0, "R", M_PICTURE,
      N_("viridis (default) or cividis (for colour-blind viewers)")),
    V(OPT_STEP, "step", 0, "S", M_LOOK | M_INFO, CLI_WHOLE, 0, UINT64_MAX,
      N_("instead of the model FILE, its model of step S that the run writing it kept "
	 "(--train --keep-steps): FILE.steps/step-SSSSSS.attn")),
    O(OPT_CELLS, "cells", 0, "C", M_VIEW,
      N_("fit (default: as large as the screen allows), scroll, compact")),
    O(OPT_NO_PANEL, "no-panel", 0, NULL, M_VIEW, N_("start with the details panel hidden")),
    O(OPT_FIGURE_DIR, "figure-dir", 0, "DIR", M_VIEW, NULL),
    O(OPT_FIGURE_FORMAT, "figure-format", 0, "F", M_VIEW,
      N_("where Ctrl-S writes figures of the view, and as what: png (default), svg or "
	 "pdf")),
    V(OPT_TEMPERATURE, "temperature", 0, "T", M_VIEW | M_DUMP, CLI_REAL, 0, GEN_MAX_TEMPERATURE,
      N_("the model writes (Ctrl-G, --generate) at temperature T (0.8; 0: always the "
	 "most likely character)")),
    V(OPT_TOP_K, "top-k", 0, "K", M_VIEW | M_DUMP, CLI_INT, 0, 1000000,
      N_("the model writes among the K most likely characters (20; 0: all)")),
    O(OPT_DUMP, "dump", 0, NULL, M_DUMP, N_("print the tokens and every attention weight")),
    O(OPT_INFO, "info", 0, NULL, M_INFO,
      N_("print the model's header: sizes, vocabulary, training")),
    O(OPT_FORMAT, "format", 0, "FMT", M_DUMP, N_("json (default) or tsv (one row per weight)")),
    O(OPT_INPUT, "input", 0, "FILE", M_DUMP | M_EXPORT,
      N_("read the text from FILE, - for standard input (invalid UTF-8 is replaced; "
	 "text in another encoding gets an iconv hint)")),
    V(OPT_TOP, "top", 0, "K", M_DUMP, CLI_INT, 0, 100,
      N_("top-K predictions per position in JSON (default 5, 0 = none)")),
    O(OPT_LOGITS, "logits", 0, NULL, M_DUMP,
      N_("the prediction logits of every position, one per id, in JSON (null where a model "
	 "has none: ids 0..2 of a converted model)")),
    V(OPT_QUERY, "query", 0, "I", M_DUMP | M_EXPORT, CLI_INT, 0, AV_MAX_CONTEXT - 1, NULL),
    V(OPT_KEY, "key", 0, "J", M_DUMP | M_EXPORT, CLI_INT, 0, AV_MAX_CONTEXT - 1,
      N_("the q·k breakdown of that cell in every head shown, and its score split by source "
	 "(--export: the split's terms in the --layer/--head head as a figure); with --patch, "
	 "--query alone is where the patching is read")),
    O(OPT_CONTRIBUTIONS, "contributions", 0, NULL, M_DUMP | M_EXPORT,
      N_("value norms and contributions A[i][j]·|v_j W_O| of every head, with the label of "
	 "their shares of each row (--export: the same as --show contributions)")),
    O(OPT_AGGREGATES, "aggregates", 0, NULL, M_DUMP,
      N_("the mean and max of each layer's heads, and the mean of all heads")),
    O(OPT_ROLLOUT, "rollout", 0, NULL, M_DUMP | M_EXPORT,
      N_("attention rollout (--export: the same as --show rollout)")),
    O(OPT_WORDS, "words", 0, NULL, M_DUMP | M_EXPORT,
      N_("words instead of characters: words at spaces and punctuation, and where a "
	 "'|' in the text marks one (the model does not read the '|')")),
    O(OPT_COMPARE, "compare", 0, "TEXT2", M_LOOK,
      N_("the difference: this text's weights minus TEXT2's, by position (the view: the "
	 "text patched in by Alt-X when no text is pinned)")),
    O(OPT_ABLATE, "ablate", 0, "L.H,...", M_DUMP,
      N_("switch heads off; adds the loss before, after and with their mean output")),
    V(OPT_GENERATE, "generate", 0, "N", M_DUMP, CLI_INT, 1, AV_MAX_CONTEXT,
      N_("a causal model writes N characters after the text first (with --temperature, "
	 "--top-k, --seed as in the view)")),
    O(OPT_PATCH, "patch", 0, "TEXT2", M_DUMP | M_EXPORT,
      N_("activation patching: each head's output (at every position, and at each one) "
	 "taken from TEXT2, of the same length, and the change of the logit difference of "
	 "two characters at the last position (or --query; --export: the heads by positions "
	 "as a figure)")),
    O(OPT_TARGETS, "targets", 0, "A B", M_LOOK,
      N_("patching's two characters: the change of z_A - z_B at the row read (default: "
	 "where the texts differ in one place, the text's character there and TEXT2's; "
	 "else each text's top-1); the view starts Alt-X with them, and Alt-D changes "
	 "them")),
    O(OPT_LENS, "lens", 0, NULL, M_DUMP | M_EXPORT,
      N_("the logit lens: the top-K (--top) characters after each block at every position, "
	 "and the block from which the prediction stays top-1 (--export: the probability of "
	 "the model's prediction after each block as a figure)")),
    O(OPT_DLA, "dla", 0, NULL, M_DUMP | M_EXPORT,
      N_("direct logit attribution: what each head adds to the logit of the top-1 at every "
	 "position, and the rest (--export: the heads by positions as a figure)")),
    O(OPT_CIRCUITS, "circuits", 0, NULL, M_DUMP | M_EXPORT,
      N_("each head's circuits from its weights alone: the positional QK profile, the QK "
	 "table, the OV copying score and maps, the composition with earlier heads (--export: "
	 "FILE the positional patterns, FILE-composition the composition)")),
    O(OPT_FAITHFULNESS, "faithfulness", 0, NULL, M_DUMP | M_EXPORT,
      N_("the faithfulness meter: at every position what blanking each key does to the loss, "
	 "and each head's rank correlation of its attention with it (a pass per key; "
	 "--export: the heads by positions as a figure)")),
    O(OPT_TIMELINE, "timeline", 0, NULL, M_DUMP | M_EXPORT,
      N_("instead of a text: the model's training timeline, every head's role scores "
	 "and the losses at each recorded step (attnview(5), Timeline); with --export, "
	 "a panel per head and the loss curve")),
    O(OPT_EXPORT, "export", 0, "FILE", M_EXPORT,
      N_("write FILE.svg, FILE.png or FILE.pdf: a heatmap with its labels, colour bar "
	 "and title, from the numbers --dump prints")),
    O(OPT_OVERVIEW, "overview", 0, NULL, M_EXPORT, N_("the same as --show overview")),
    O(OPT_VALUES, "values", 0, NULL, M_EXPORT, N_("print the weights in the cells")),
    O(OPT_TITLE, "title", 0, "T", M_EXPORT,
      N_("the figure's title instead of the one made for it")),
    O(OPT_FORCE, "force", 0, NULL, M_EXPORT,
      N_("replace FILE if it exists (otherwise it is left untouched)")),
    O(OPT_TRAIN, "train", 0, "CORPUS", M_TRAIN,
      N_("train on CORPUS (more files after it are one text; - is standard input)")),
    O(OPT_OUTPUT, "output", 'o', "FILE", M_TRAIN,
      N_("the model file (default model.attn); checkpoints go to FILE.ckpt")),
    O(OPT_OBJECTIVE, "objective", 0, "masked|causal", M_TRAIN,
      N_("masked-character (default) or next-character")),
    V(OPT_DIM, "dim", 0, "D", M_TRAIN, CLI_WHOLE, 0, UINT32_MAX, N_("model width (default 64)")),
    V(OPT_HEADS, "heads", 0, "N", M_TRAIN, CLI_WHOLE, 0, UINT32_MAX,
      N_("attention heads; D must be divisible by N (default 4)")),
    V(OPT_LAYERS, "layers", 0, "L", M_TRAIN, CLI_WHOLE, 0, UINT32_MAX,
      N_("transformer blocks (default 2)")),
    V(OPT_CONTEXT, "context", 0, "T", M_TRAIN, CLI_WHOLE, 0, UINT32_MAX,
      N_("characters per sequence, at most 1024 (default 128; a short text gets less, "
	 "as it does --batch and --lr)")),
    V(OPT_BATCH, "batch", 0, "B", M_TRAIN, CLI_WHOLE, 0, UINT32_MAX,
      N_("sequences per step (default 32)")),
    V(OPT_STEPS, "steps", 0, "N", M_TRAIN, CLI_WHOLE, 1, UINT64_MAX,
      N_("optimizer steps (default 2000)")),
    V(OPT_EPOCHS, "epochs", 0, "N", M_TRAIN, CLI_WHOLE, 1, UINT64_MAX,
      N_("instead of --steps: N passes' worth of the training text")),
    V(OPT_LR, "lr", 0, "X", M_TRAIN, CLI_REAL_BELOW, 0, 10,
      N_("peak learning rate (default 5e-3)")),
    V(OPT_WARMUP, "warmup", 0, "N", M_TRAIN, CLI_WHOLE, 0, UINT64_MAX,
      N_("linear warmup steps, then cosine decay (default min(100, steps/10))")),
    V(OPT_SEED, "seed", 0, "S", M_TRAIN | M_VIEW | M_DUMP, CLI_WHOLE, 0, UINT64_MAX,
      N_("random seed (default 1): of the training run, or of the model writing")),
    V(OPT_THREADS, "threads", 0, "N", M_TRAIN, CLI_WHOLE, 1, 256,
      N_("threads (default: all cores; with --resume, the checkpoint's, which must not "
	 "change)")),
    V(OPT_MIN_COUNT, "min-count", 0, "N", M_TRAIN, CLI_WHOLE, 1, UINT64_MAX,
      N_("keep characters seen at least N times (default 1)")),
    V(OPT_MAX_VOCAB, "max-vocab", 0, "N", M_TRAIN, CLI_WHOLE, 0, UINT32_MAX,
      N_("at most N vocabulary ids, 3 specials included (default: all)")),
    V(OPT_VAL_SHARE, "val-share", 0, "P", M_TRAIN, CLI_WHOLE, 0, 50,
      /* xgettext:no-c-format */
      N_("hold out P% of the corpus for validation, 0 to 50 (default 5), in pieces "
	 "spread evenly over it")),
    O(OPT_NO_VAL, "no-val", 0, NULL, M_TRAIN, N_("no validation (the same as --val-share 0)")),
    O(OPT_VAL_FILE, "val-file", 0, "FILE", M_TRAIN,
      N_("validation text instead of pieces of the corpus")),
    V(OPT_EVAL_EVERY, "eval-every", 0, "N", M_TRAIN, CLI_WHOLE, 0, UINT64_MAX,
      N_("validate every N steps, 0 = only at the end (default 100)")),
    V(OPT_PATIENCE, "patience", 0, "N", M_TRAIN, CLI_WHOLE, 0, UINT64_MAX,
      N_("stop after N evaluations without a new best validation loss, and write the "
	 "best model (default 0: never)")),
    V(OPT_SHARPEN, "sharpen", 0, "X", M_TRAIN, CLI_REAL, 0, 100,
      N_("add X times the attention rows' mean entropy to the loss: sharper heads, "
	 "easier to name; 0 to 100 (default 0: none)")),
    V(OPT_CKPT_EVERY, "checkpoint-every", 0, "N", M_TRAIN, CLI_WHOLE, 0, UINT64_MAX,
      N_("write OUT.ckpt at the start and every N steps, 0 = only on Ctrl-C (default "
	 "500)")),
    V(OPT_TIMELINE_EVERY, "timeline-every", 0, "N", M_TRAIN, CLI_WHOLE, 0, UINT64_MAX,
      N_("record every head's role scores on a fixed probe every N steps, for the "
	 "training timeline; 0 = none (default: about 100 records a run)")),
    V(OPT_KEEP_STEPS, "keep-steps", 0, "N", M_TRAIN, CLI_WHOLE, 0, UINT64_MAX,
      N_("keep the model of every N-th recorded step, and of the last, as "
	 "OUT.steps/step-SSSSSS.attn: the timeline (Alt-H, Enter) and --model OUT --step S "
	 "open them (default 0: none)")),
    O(OPT_RESUME, "resume", 0, "CHECKPOINT", M_TRAIN,
      N_("continue a stopped run with the checkpoint's options; with --steps N, more "
	 "than it has done, a finished run too (OUT.ckpt, or OUT: the state kept "
	 "beside it)")),
    O(OPT_INIT, "init", 0, "MODEL", M_TRAIN,
      N_("start from MODEL's weights (a file, builtin or builtin-causal) instead of "
	 "random ones: its objective, sizes and vocabulary (characters it lacks are "
	 "read as unknown); AdamW starts afresh")),
    O(OPT_ANY_ENCODING, "any-encoding", 0, NULL, M_TRAIN | M_DUMP | M_EXPORT,
      N_("read a file that is mostly not UTF-8 text (a binary file, GB18030, UTF-16) "
	 "instead of refusing it: train on, or look at (--input), what is left after "
	 "cleaning")),
    O(OPT_TASK, "task", 0, "NAME", M_TRAIN,
      N_("instead of a corpus: a tiny model on generated text whose mechanism is known, "
	 "and which heads carry it (--task list names the tasks; attnview(1), THE LAB); "
	 "takes -o, --seed, --steps, --dim, --heads, --layers, --lr, --threads, "
	 "--timeline-every, --keep-steps")),
    O(OPT_HELP, "help", 'h', NULL, M_ALL, N_("show this help")),
    O(OPT_VERSION, "version", 'V', NULL, M_ALL & ~M_TRAIN,
      N_("show the version, OpenBLAS build and kernel")),
    O(OPT_LIST_OPTIONS, "list-options", 0, NULL, M_ALL & ~M_TRAIN,
      N_("list every option with the modes that take it, one a line (for scripts)")),
    O(OPT_COMPLETIONS, "completions", 0, "SHELL", M_ALL & ~M_TRAIN,
      N_("print the completion script for SHELL: bash, zsh or fish (meson install puts "
	 "them where the shells look)")),
};

_Static_assert(sizeof cli_options / sizeof cli_options[0] == CLI_NOPTS, "a row for every option");

const cli_option *cli_option_of(cli_opt_id id)
{
	return id >= OPT_FIRST && id < OPT_END ? &cli_options[id - OPT_FIRST] : NULL;
}

bool cli_option_value_in(cli_opt_id id, const char *arg, double lo, double hi, cli_value *v)
{
	const cli_option *o = cli_option_of(id);
	char *end;
	if (!o || !arg)
		return false;
	if (!(lo <= hi))
		lo = o->lo, hi = o->hi;
	switch (o->kind) {
	case CLI_INT: {
		long x = strtol(arg, &end, 10);
		if (end == arg || *end || x < lo || x > hi)
			return false;
		v->i = (int)x;
		return true;
	}
	case CLI_WHOLE: {
		if (*arg < '0' || *arg > '9')
			return false;
		errno = 0;
		unsigned long long x = strtoull(arg, &end, 10);
		if (errno || *end || (double)x < lo || (double)x > hi)
			return false;
		v->u = x;
		return true;
	}
	case CLI_REAL:
	case CLI_REAL_BELOW: {
		errno = 0;
		double x = strtod(arg, &end);
		if (errno || end == arg || *end || !(x >= lo) ||
		    !(o->kind == CLI_REAL_BELOW ? x < hi : x <= hi))
			return false;
		v->x = x;
		return true;
	}
	default:
		return false;
	}
}

bool cli_option_value(cli_opt_id id, const char *arg, cli_value *v)
{
	return cli_option_value_in(id, arg, 1, 0, v);
}

unsigned cli_option_modes(const char *arg)
{
	if (strncmp(arg, "--", 2) != 0)
		return 0;
	size_t len = strcspn(arg + 2, "=");
	for (size_t i = 0; i < CLI_NOPTS; i++)
		if (strlen(cli_options[i].name) == len &&
		    strncmp(cli_options[i].name, arg + 2, len) == 0)
			return cli_options[i].modes;
	return 0;
}

void cli_getopt_table(cli_mode mode, struct option *out, char *shorts)
{
	size_t n = 0, ns = 0;
	shorts[ns++] = ':'; /* a missing value returns ':' */
	for (size_t i = 0; i < CLI_NOPTS; i++) {
		const cli_option *o = &cli_options[i];
		if (!(o->modes & (1u << mode)))
			continue;
		out[n++] = (struct option){o->name, o->arg ? required_argument : no_argument, NULL,
					   (int)o->id};
		if (o->letter && ns + 3 < 16) {
			shorts[ns++] = o->letter;
			if (o->arg)
				shorts[ns++] = ':';
		}
	}
	out[n] = (struct option){NULL, 0, NULL, 0};
	shorts[ns] = '\0';
}

/* ---- printing -------------------------------------------------------------- */

#define HELP_COLS 80

/* Columns of UTF-8 text as a terminal shows it (CJK: 2). */
static int text_width(const char *s, size_t n)
{
	int w = 0;
	utf8proc_int32_t cp;
	for (size_t i = 0; i < n;) {
		const utf8proc_uint8_t *at = (const utf8proc_uint8_t *)s + i;
		utf8proc_ssize_t k = utf8proc_iterate(at, (utf8proc_ssize_t)(n - i), &cp);
		if (k <= 0)
			k = 1, cp = 0xFFFD;
		w += cp_display_width((uint32_t)cp, NULL);
		i += (size_t)k;
	}
	return w;
}

/* Chinese punctuation that never starts a line ("，" "。" "）"...), and
 * that never ends one ("（" "“"). */
static bool no_break(uint32_t before, uint32_t after)
{
	static const uint32_t closing[] = {0xFF0C, 0x3002, 0xFF1A, 0xFF1B, 0xFF09, 0x3001,
					   0xFF01, 0xFF1F, 0x201D, 0x300D, 0x300F};
	static const uint32_t opening[] = {0xFF08, 0x201C, 0x300C, 0x300E};
	for (size_t i = 0; i < sizeof closing / sizeof closing[0]; i++)
		if (after == closing[i])
			return true;
	for (size_t i = 0; i < sizeof opening / sizeof opening[0]; i++)
		if (before == opening[i])
			return true;
	return false;
}

/* text from column `col` (the cursor is there), wrapped at HELP_COLS; the
 * lines after the first start at column `indent`. A line breaks at a space,
 * or between two wide (Chinese) characters. */
static void put_wrapped(FILE *out, const char *text, int col, int indent)
{
	const char *p = text;
	while (*p) {
		/* The longest run that fits: [p, cut). */
		const char *q = p, *cut = NULL;
		int w = col;
		utf8proc_int32_t cp, prev = 0;
		while (*q) {
			utf8proc_ssize_t k = utf8proc_iterate((const utf8proc_uint8_t *)q, -1, &cp);
			if (k <= 0)
				k = 1, cp = 0xFFFD;
			int cw = cp_display_width((uint32_t)cp, NULL);
			bool wide_pair = cw == 2 && prev &&
					 cp_display_width((uint32_t)prev, NULL) == 2 &&
					 !no_break((uint32_t)prev, (uint32_t)cp);
			if (cp == ' ' || wide_pair)
				cut = q;
			if (w + cw > HELP_COLS && cut)
				break;
			w += cw;
			prev = cp;
			q += k;
		}
		if (!*q)
			cut = q;
		fwrite(p, 1, (size_t)(cut - p), out);
		fputc('\n', out);
		p = *cut == ' ' ? cut + 1 : cut;
		if (*p)
			fprintf(out, "%*s", indent, "");
		col = indent;
	}
}

/* "--layer L, --head H" for option i (and the options joined to it);
 * returns the index of the last one. */
static size_t names(char *buf, size_t size, size_t i, unsigned modes)
{
	size_t len = 0;
	for (;; i++) {
		const cli_option *o = &cli_options[i];
		len += (size_t)snprintf(buf + len, size - len, "%s", len ? ", " : "");
		if (o->letter)
			len += (size_t)snprintf(buf + len, size - len, "-%c, ", o->letter);
		len += (size_t)snprintf(buf + len, size - len, "--%s%s%s", o->name,
					o->arg ? " " : "", o->arg ? o->arg : "");
		if (o->help || i + 1 >= CLI_NOPTS || !(cli_options[i + 1].modes & modes) ||
		    len >= size)
			return i;
	}
}

/* One option's line(s): its names, then its help from column `col` (or
 * two columns after longer names), wrapped to column `col`. */
static void put_option(FILE *out, const char *nm, const char *help, int col)
{
	int w = 2 + text_width(nm, strlen(nm));
	int at = w <= col - 2 ? col : w + 2;
	fprintf(out, "  %s%*s", nm, at - w, "");
	put_wrapped(out, _(help), at, col);
}

/* The options of `modes` that `shown` has not described yet, each with its
 * help; those already described are named on one line after them. */
static void put_section(FILE *out, unsigned modes, unsigned *shown, int col)
{
	char also[512] = "";
	size_t alen = 0;
	for (size_t i = 0; i < CLI_NOPTS; i++) {
		const cli_option *o = &cli_options[i];
		if (!(o->modes & modes) || o->id >= OPT_HELP) /* the general ones: at the end */
			continue;
		if (o->modes & *shown) {
			alen += (size_t)snprintf(also + alen, sizeof also - alen, "%s--%s",
						 alen ? ", " : "", o->name);
			continue;
		}
		char nm[160];
		size_t last = names(nm, sizeof nm, i, modes);
		put_option(out, nm, cli_options[last].help, col);
		i = last;
	}
	if (alen) {
		/* TRANSLATORS: after a list of options described above. */
		fprintf(out, "  ");
		char line[600];
		snprintf(line, sizeof line, _("%s: as above"), also);
		put_wrapped(out, line, 2, 4);
	}
	*shown |= modes;
}

/* The options of mode, names and values only, two columns apart and never
 * split (the training options in attnview --help: attnview --train --help
 * describes them). */
static void put_names(FILE *out, cli_mode mode, cli_opt_id skip)
{
	int col = 0;
	for (size_t i = 0; i < CLI_NOPTS; i++) {
		const cli_option *o = &cli_options[i];
		if (!(o->modes & (1u << mode)) || o->id == skip || o->id == OPT_HELP)
			continue;
		char nm[160];
		i = names(nm, sizeof nm, i, 1u << mode);
		int w = text_width(nm, strlen(nm));
		if (col && col + 2 + w > HELP_COLS) {
			fputc('\n', out);
			col = 0;
		}
		fprintf(out, "  %s", nm);
		col += 2 + w;
	}
	fputc('\n', out);
}

/* A heading: its own line(s), wrapped, after a blank line. */
static void put_heading(FILE *out, const char *text)
{
	fputc('\n', out);
	put_wrapped(out, text, 0, 0);
}

/* The help, a paragraph a message (translated one by one) around the
 * sections made from the table. */
static const char *const usage_text =
    N_("Usage: attnview [OPTION...]\n"
       "       attnview --dump (--text TEXT | --input FILE) [OPTION...]\n"
       "       attnview --export FILE.svg|.png|.pdf (--text TEXT | --input FILE) [OPTION...]\n"
       "       attnview --info [--model FILE [--step S]]\n"
       "       attnview --train CORPUS [CORPUS...] [-o OUT] [OPTION...]\n"
       "       attnview --train --task NAME|list [-o OUT] [OPTION...]\n"
       "\n"
       "See multi-head self-attention: type Chinese or English text and watch every\n"
       "head of a small transformer attend, character by character.\n");

void cli_print_help(FILE *out)
{
	unsigned shown = 0;
	fputs(_(usage_text), out);
	put_heading(out, _("Interactive view (the default):"));
	put_section(out, M_VIEW, &shown, 20);
	fputs(_("  (keys: press F1 in the view, or see attnview(1); a printable key types\n"
		"  into the text everywhere but the help and the training timeline, Ctrl-Q\n"
		"  quits)\n"),
	      out);
	put_heading(out, _("Non-interactive (attnview --dump, attnview --info):"));
	put_section(out, M_DUMP | M_INFO, &shown, 20);
	put_heading(out, _("Figures (attnview --export FILE; the format follows the extension):"));
	put_section(out, M_EXPORT, &shown, 20);
	put_heading(out, _("Training (attnview --train CORPUS...; several files are one text, - is "
			   "standard input; a short text shrinks the options that do not fit it, "
			   "and says so):"));
	put_names(out, MODE_TRAIN, OPT_TRAIN);
	fputs(_("  Every evaluation says whether the model beats the unigram baseline.\n"
		"  Ctrl-C writes a checkpoint; --resume continues from it.\n"
		"  attnview --train --help lists the training options with their defaults.\n"),
	      out);
	fputc('\n', out);
	for (cli_opt_id id = OPT_HELP; id < OPT_END; id++) {
		char nm[64];
		names(nm, sizeof nm, (size_t)(id - OPT_FIRST), M_ALL);
		put_option(out, nm, cli_option_of(id)->help, 20);
	}
	fputs(_("\nExit status: 0 success, 1 runtime error (bad file or input), 2 usage error.\n"
		"Model file format and the exact computation: man 5 attnview.\n"),
	      out);
}

static const char *const train_usage =
    N_("Usage: attnview --train CORPUS [CORPUS...] [-o OUT] [options]\n"
       "\n");
static const char *const train_about =
    N_("Train a character-level transformer on UTF-8 text and write it to OUT. Several\n"
       "files are one text, in order (a line break between files); - reads standard\n"
       "input, and pipes work too. A short text needs no options: the context, batch\n"
       "and validation share that do not fit it shrink, and a line says so.\n"
       "\n");
static const char *const train_notes[] = {
    N_("Every evaluation and the end say whether the model beats the unigram baseline\n"
       "(the loss of predicting each character from its frequency alone) and by how\n"
       "much, and a warning says when the validation loss rises while the training\n"
       "loss falls (over-fitting), with what to do.\n"
       "\n"),
    N_("Ctrl-C or SIGTERM finishes the current step, writes a checkpoint and prints the\n"
       "command that resumes it; the resumed run ends with the same model, byte for byte,\n"
       "as an uninterrupted one (same seed and --threads; it keeps the creation time of\n"
       "the run it continues). The model records the clock as its creation time, or\n"
       "SOURCE_DATE_EPOCH (seconds since 1970) when set: set it to get the same bytes\n"
       "from the same corpus, options and seed. Exit status: 0 done, 1 error,\n"
       "2 usage error, 130/143 stopped by SIGINT/SIGTERM with the checkpoint written.\n"),
};

void cli_print_train_help(FILE *out)
{
	fputs(_(train_usage), out);
	fputs(_(train_about), out);
	for (size_t i = 0; i < CLI_NOPTS; i++) {
		const cli_option *o = &cli_options[i];
		if (!(o->modes & M_TRAIN) || o->id == OPT_TRAIN)
			continue;
		char nm[160];
		i = names(nm, sizeof nm, i, M_TRAIN);
		put_option(out, nm, cli_options[i].help, 26);
	}
	fputc('\n', out);
	for (size_t i = 0; i < sizeof train_notes / sizeof train_notes[0]; i++)
		fputs(_(train_notes[i]), out);
}

void cli_list_options(FILE *out)
{
	static const char *const mode_names[MODE_NMODES] = {"view", "dump", "info", "export",
							    "train"};
	for (size_t i = 0; i < CLI_NOPTS; i++) {
		const cli_option *o = &cli_options[i];
		char letter[3] = {'-', o->letter, 0};
		fprintf(out, "--%s\t%s\t%s\t", o->name, o->letter ? letter : "-",
			o->arg ? o->arg : "-");
		bool first = true;
		for (int m = 0; m < MODE_NMODES; m++)
			if (o->modes & (1u << m)) {
				fprintf(out, "%s%s", first ? "" : ",", mode_names[m]);
				first = false;
			}
		fputc('\n', out);
	}
}
