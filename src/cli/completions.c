/* The shell completions (completions.h): every option of the table, offered
 * in the modes that take it (before a mode's option, those of the view,
 * --dump, --info and --export, and the mode options; after --train,
 * --dump, --info or --export, that mode's), and the values of each option
 * from the name tables its parser reads. The descriptions are the help
 * texts untranslated (the scripts are made once, at build time, whatever
 * the language of the build machine), cut to their first clause. */
#include "completions.h"
#include "attnview/colormap.h"
#include "attnview/dump.h"
#include "attnview/figure.h"
#include "attnview/i18n.h"
#include "attnview/lab.h"
#include "attnview/model.h"
#include "attnview/modelfile.h"
#include "attnview/scale.h"
#include "attnview/select.h"
#include "cli.h"
#include "heatmap.h"
#include "options.h"

#include <string.h>

/* What an option's value completes to. */
typedef enum comp_kind {
	COMP_NONE,  /* nothing: a number or a text */
	COMP_WORDS, /* one of the names in the list */
	COMP_FILES,
	COMP_DIRS,
	COMP_MODEL, /* a built-in model's name, or a .attn file */
} comp_kind;

#define MAX_WORDS 16

static const char *const shells[] = {"bash", "zsh", "fish"};

/* The value of o: its kind, and the names (w, n) for COMP_WORDS and
 * COMP_MODEL, read from the tables the parsers read. */
static comp_kind values_of(const cli_option *o, const char *w[MAX_WORDS], int *n)
{
	*n = 0;
	switch (o->id) {
	case OPT_MODEL:
	case OPT_INIT:
		for (int i = 0; i < MODEL_NBUILTINS; i++)
			w[(*n)++] = model_builtins[i];
		return COMP_MODEL;
	case OPT_SHOW:
		for (int k = 0; k < SEL_NKINDS; k++)
			w[(*n)++] = sel_name((sel_kind)k);
		return COMP_WORDS;
	case OPT_SCALE:
		for (int k = 0; k < SCALE_NKINDS; k++)
			w[(*n)++] = scale_name((scale_kind)k);
		return COMP_WORDS;
	case OPT_COLORMAP:
		for (int k = 0; k < RAMP_NRAMPS; k++)
			w[(*n)++] = colormap_ramp_name((cm_ramp)k);
		return COMP_WORDS;
	case OPT_CELLS:
		for (int k = 0; k < CELLS_NMODES; k++)
			w[(*n)++] = heat_cells_name((heat_cells)k);
		return COMP_WORDS;
	case OPT_FIGURE_FORMAT: /* those this build can write */
		for (int f = FIG_SVG; f <= FIG_PDF; f++)
			if (fig_format_available((fig_format)f))
				w[(*n)++] = fig_format_ext((fig_format)f);
		return COMP_WORDS;
	case OPT_FORMAT:
		for (int f = 0; f < DUMP_NFORMATS; f++)
			w[(*n)++] = dump_format_name((dump_format)f);
		return COMP_WORDS;
	case OPT_OBJECTIVE:
		for (int k = 0; k < OBJ_NKINDS; k++)
			w[(*n)++] = objective_name((objective)k);
		return COMP_WORDS;
	case OPT_COMPLETIONS:
		for (size_t i = 0; i < sizeof shells / sizeof shells[0]; i++)
			w[(*n)++] = shells[i];
		return COMP_WORDS;
	case OPT_TASK: /* the lab's tasks, and "list" */
		w[(*n)++] = "list";
		for (int i = 0; i < lab_ntasks() && *n < MAX_WORDS; i++)
			w[(*n)++] = lab_task_at(i)->name;
		return COMP_WORDS;
	case OPT_FIGURE_DIR:
		return COMP_DIRS;
	default:
		if (o->arg && (strcmp(o->arg, "FILE") == 0 || strcmp(o->arg, "CORPUS") == 0 ||
			       strcmp(o->arg, "CHECKPOINT") == 0))
			return COMP_FILES;
		return COMP_NONE;
	}
}

/* What the words typed so far say the mode is: no mode option yet (the
 * view, or a mode option still to come), or the one given. */
typedef enum comp_mode { CM_NONE, CM_TRAIN, CM_DUMP, CM_INFO, CM_EXPORT, CM_N } comp_mode;

/* The mode option's name, as the scripts match it (--train=CORPUS and
 * --export=FILE too). */
static const char *const cm_names[CM_N] = {NULL, "train", "dump", "info", "export"};

/* Offered in completion mode m: before any mode option, every option but
 * training's (and --train); after one, that mode's. */
static bool offered(const cli_option *o, comp_mode m)
{
	static const unsigned bits[CM_N] = {0, M_TRAIN, M_DUMP, M_INFO, M_EXPORT};
	if (m == CM_NONE)
		return (o->modes & ~M_TRAIN) || o->id == OPT_TRAIN;
	return (o->modes & bits[m]) != 0;
}

/* The modes in the order the scripts test them: the mode options', then
 * none (the last branch, "else"). */
static const comp_mode branch_order[] = {CM_TRAIN, CM_DUMP, CM_INFO, CM_EXPORT, CM_NONE};
#define NBRANCHES (sizeof branch_order / sizeof branch_order[0])

/* The line that opens the k-th branch: "if TEST; then", "elif TEST; then"
 * or "else", TEST written by `test` for the branch's mode. */
static void open_branch(FILE *out, size_t k, void (*test)(FILE *, comp_mode))
{
	if (branch_order[k] == CM_NONE) {
		fputs("\telse\n", out);
		return;
	}
	fputs(k == 0 ? "\tif " : "\telif ", out);
	test(out, branch_order[k]);
	fputs("; then\n", out);
}

/* The names joined by spaces. */
static void put_words(FILE *out, const char *const *w, int n)
{
	for (int i = 0; i < n; i++)
		fprintf(out, "%s%s", i ? " " : "", w[i]);
}

/* o's help (or that of the option it shares a line with), its first
 * clause, with quote (a single quote) written as the shell needs it and
 * the characters in `escape` after a backslash. */
static void put_desc(FILE *out, const cli_option *o, const char *quote, const char *escape)
{
	while (!o->help && o->id + 1 < OPT_END)
		o = cli_option_of(o->id + 1);
	size_t n = strcspn(o->help, ";:(");
	while (n && o->help[n - 1] == ' ')
		n--;
	for (size_t i = 0; i < n; i++) {
		char c = o->help[i];
		if (c == '\'')
			fputs(quote, out);
		else if (strchr(escape, c))
			fprintf(out, "\\%c", c);
		else
			fputc(c, out);
	}
}

/* ---- bash ------------------------------------------------------------------ */

/* o's names as a case pattern: "-m|--model". */
static void bash_names(FILE *out, const cli_option *o)
{
	if (o->letter)
		fprintf(out, "-%c|", o->letter);
	fprintf(out, "--%s", o->name);
}

/* The case arm completing the value of o (which takes one that can be
 * completed). */
static void bash_value(FILE *out, const cli_option *o)
{
	const char *w[MAX_WORDS];
	int n;
	comp_kind k = values_of(o, w, &n);
	fputc('\t', out);
	bash_names(out, o);
	fputs(")\n", out);
	if (k == COMP_FILES || k == COMP_DIRS || k == COMP_MODEL)
		fputs("\t\tcompopt -o filenames 2>/dev/null\n", out);
	fputs("\t\tmapfile -t COMPREPLY < <(", out);
	if (k == COMP_WORDS || k == COMP_MODEL) {
		fputs("compgen -W '", out);
		put_words(out, w, n);
		fputs("' -- \"$cur\"", out);
	}
	if (k == COMP_MODEL)
		fputs("\n\t\t\tcompgen -d -X '*.attn' -- \"$cur\"; compgen -f -X '!*.attn' -- "
		      "\"$cur\"",
		      out);
	else if (k == COMP_FILES)
		fputs("compgen -f -- \"$cur\"", out);
	else if (k == COMP_DIRS)
		fputs("compgen -d -- \"$cur\"", out);
	fputs(")\n\t\treturn ;;\n", out);
}

/* bash's test for mode m, set by the loop over the words. */
static void bash_test(FILE *out, comp_mode m)
{
	fprintf(out, "[[ $mode == %s ]]", cm_names[m]);
}

static void put_bash(FILE *out)
{
	fputs("# bash completion for attnview, written by `attnview --completions bash` from\n"
	      "# its option table (src/cli/options.c): make it again rather than edit it.\n"
	      "\n"
	      "_attnview()\n"
	      "{\n"
	      "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev= mode= opts i\n"
	      "\t((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}\n"
	      "\t# --option=value: bash splits the word at the '='.\n"
	      "\tif [[ $cur == = ]]; then\n"
	      "\t\tcur=\n"
	      "\telif [[ $prev == = ]] && ((COMP_CWORD > 1)); then\n"
	      "\t\tprev=${COMP_WORDS[COMP_CWORD - 2]}\n"
	      "\tfi\n"
	      "\tfor ((i = 1; i < COMP_CWORD; i++)); do\n"
	      "\t\tcase ${COMP_WORDS[i]} in\n"
	      "\t\t--train | --train=*) mode=train ;;\n"
	      "\t\t--dump) mode=dump ;;\n"
	      "\t\t--info) mode=info ;;\n"
	      "\t\t--export | --export=*) mode=export ;;\n"
	      "\t\tesac\n"
	      "\tdone\n"
	      "\tcase $prev in\n",
	      out);
	const char *w[MAX_WORDS];
	int n, none = 0;
	for (size_t i = 0; i < CLI_NOPTS; i++)
		if (cli_options[i].arg && values_of(&cli_options[i], w, &n) != COMP_NONE)
			bash_value(out, &cli_options[i]);
	/* The values that cannot be completed (numbers, texts): nothing. */
	for (size_t i = 0; i < CLI_NOPTS; i++)
		if (cli_options[i].arg && values_of(&cli_options[i], w, &n) == COMP_NONE) {
			fputs(none++ % 4 ? "|" : none > 1 ? "|\\\n\t" : "\t", out);
			bash_names(out, &cli_options[i]);
		}
	fputs(")\n\t\tCOMPREPLY=()\n\t\treturn ;;\n\tesac\n", out);
	for (size_t k = 0; k < NBRANCHES; k++) {
		comp_mode cm = branch_order[k];
		open_branch(out, k, bash_test);
		fputs("\t\topts='", out);
		int col = 16;
		for (size_t i = 0; i < CLI_NOPTS; i++) {
			const cli_option *o = &cli_options[i];
			if (!offered(o, cm))
				continue;
			int len = 3 + (int)strlen(o->name);
			if (col + len > 90) {
				fputs("\n\t\t\t", out);
				col = 24;
			} else if (col > 16) {
				fputc(' ', out);
			}
			fprintf(out, "--%s", o->name);
			col += len;
		}
		fputs("'\n", out);
	}
	fputs("\tfi\n"
	      "\t# After --train, a word that is not an option is a corpus.\n"
	      "\tif [[ $mode == train && $cur != -* ]]; then\n"
	      "\t\tcompopt -o filenames 2>/dev/null\n"
	      "\t\tmapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n"
	      "\telse\n"
	      "\t\tmapfile -t COMPREPLY < <(compgen -W \"$opts\" -- \"$cur\")\n"
	      "\tfi\n"
	      "}\n"
	      "complete -F _attnview attnview\n",
	      out);
}

/* ---- zsh ------------------------------------------------------------------- */

/* _arguments' specs of o: '--name=[what]:value:action', and one for its
 * short name. */
static void zsh_spec(FILE *out, const cli_option *o)
{
	const char *w[MAX_WORDS];
	int n;
	comp_kind k = values_of(o, w, &n);
	for (int s = o->letter ? 0 : 1; s < 2; s++) {
		fputs("\t\t'", out);
		if (s == 0)
			fprintf(out, "-%c%s[", o->letter, o->arg ? "+" : "");
		else
			fprintf(out, "--%s%s[", o->name, o->arg ? "=" : "");
		put_desc(out, o, "'\\''", "[]");
		fputc(']', out);
		if (o->arg) {
			fputc(':', out);
			for (const char *a = o->arg; *a; a++)
				fputc(*a == ':' ? '.'
						: (*a >= 'A' && *a <= 'Z' ? *a - 'A' + 'a' : *a),
				      out);
			fputc(':', out);
			if (k == COMP_WORDS) {
				fputc('(', out);
				put_words(out, w, n);
				fputc(')', out);
			}
			fputs(k == COMP_FILES	? "_files"
			      : k == COMP_DIRS	? "_files -/"
			      : k == COMP_MODEL ? "_attnview_model"
			      : k == COMP_NONE	? " "
						: "",
			      out);
		}
		fputs("'\n", out);
	}
}

/* zsh's test for mode m: its option among the words (with a value after
 * '=' for those that take one). */
static void zsh_test(FILE *out, comp_mode m)
{
	fprintf(out, "((${words[(I)--%s%s]}))", cm_names[m],
		m == CM_TRAIN || m == CM_EXPORT ? "(|=*)" : "");
}

static void put_zsh(FILE *out)
{
	const char *w[MAX_WORDS];
	int n;
	values_of(cli_option_of(OPT_MODEL), w, &n);
	fputs("#compdef attnview\n"
	      "# zsh completion for attnview, written by `attnview --completions zsh` from\n"
	      "# its option table (src/cli/options.c): make it again rather than edit it.\n"
	      "\n"
	      "_attnview_model()\n"
	      "{\n"
	      "\t_alternative 'builtin:built-in model:(",
	      out);
	put_words(out, w, n);
	fputs(")' 'files:model file:_files -g \"*.attn(-.)\"'\n"
	      "}\n"
	      "\n"
	      "_attnview()\n"
	      "{\n"
	      "\tlocal -a specs\n",
	      out);
	for (size_t k = 0; k < NBRANCHES; k++) {
		comp_mode cm = branch_order[k];
		open_branch(out, k, zsh_test);
		fputs("\t\tspecs=(\n", out);
		for (size_t i = 0; i < CLI_NOPTS; i++)
			if (offered(&cli_options[i], cm))
				zsh_spec(out, &cli_options[i]);
		fputs(cm == CM_TRAIN ? "\t\t'*:corpus:_files'\n\t\t)\n" : "\t\t)\n", out);
	}
	fputs("\tfi\n", out);
	fputs("\t_arguments $specs\n"
	      "}\n"
	      "\n"
	      "_attnview \"$@\"\n",
	      out);
}

/* ---- fish ------------------------------------------------------------------ */

static void fish_option(FILE *out, const cli_option *o)
{
	const char *w[MAX_WORDS];
	int n;
	comp_kind k = values_of(o, w, &n);
	fputs("complete -c attnview", out);
	/* The modes it is offered in, unless it is offered in all. */
	int in = 0;
	for (int m = 0; m < CM_N; m++)
		in += offered(o, (comp_mode)m);
	if (in < CM_N) {
		fputs(" -n 'contains (__attnview_mode)", out);
		for (int m = 0; m < CM_N; m++)
			if (offered(o, (comp_mode)m))
				fprintf(out, " %s", m == CM_NONE ? "none" : cm_names[m]);
		fputc('\'', out);
	}
	if (o->letter)
		fprintf(out, " -s %c", o->letter);
	fprintf(out, " -l %s", o->name);
	if (o->arg && (k == COMP_WORDS || k == COMP_MODEL)) {
		fputs(" -x -a '", out);
		put_words(out, w, n);
		fputs(k == COMP_MODEL ? " (__fish_complete_suffix .attn)'" : "'", out);
	} else if (o->arg) {
		fputs(k == COMP_FILES  ? " -r -F"
		      : k == COMP_DIRS ? " -x -a '(__fish_complete_directories)'"
				       : " -x",
		      out);
	}
	fputs(" -d '", out);
	put_desc(out, o, "\\'", "\\");
	fputs("'\n", out);
}

static void put_fish(FILE *out)
{
	fputs("# fish completion for attnview, written by `attnview --completions fish` from\n"
	      "# its option table (src/cli/options.c): make it again rather than edit it.\n"
	      "\n"
	      "# The mode the words typed so far give: the first mode option's, or none.\n"
	      "function __attnview_mode\n"
	      "\tfor w in (commandline -opc)\n"
	      "\t\tswitch $w\n"
	      "\t\t\tcase --train '--train=*'\n"
	      "\t\t\t\techo train; return\n"
	      "\t\t\tcase --dump\n"
	      "\t\t\t\techo dump; return\n"
	      "\t\t\tcase --info\n"
	      "\t\t\t\techo info; return\n"
	      "\t\t\tcase --export '--export=*'\n"
	      "\t\t\t\techo export; return\n"
	      "\t\tend\n"
	      "\tend\n"
	      "\techo none\n"
	      "end\n"
	      "\n"
	      "# No files unless an option asks for one; after --train, the corpora.\n"
	      "complete -c attnview -f\n"
	      "complete -c attnview -n 'test (__attnview_mode) = train' -F\n",
	      out);
	for (size_t i = 0; i < CLI_NOPTS; i++)
		fish_option(out, &cli_options[i]);
}

int cli_completions(FILE *out, const char *shell)
{
	static void (*const writers[])(FILE *) = {put_bash, put_zsh, put_fish};
	_Static_assert(sizeof writers / sizeof writers[0] == sizeof shells / sizeof shells[0],
		       "a writer for every shell");
	for (size_t i = 0; shell && i < sizeof shells / sizeof shells[0]; i++)
		if (strcmp(shell, shells[i]) == 0) {
			writers[i](out);
			return fflush(out) == 0 && !ferror(out) ? EXIT_OK : EXIT_RUNTIME;
		}
	if (!shell || !*shell)
		return cli_usage_error("attnview --help",
				       _("--completions needs bash, zsh or fish"));
	return cli_usage_error("attnview --help",
			       _("--completions takes bash, zsh or fish, not '%s'"), AV_Q(shell));
}
