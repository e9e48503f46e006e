/* What the modes of the command line share. */
#include "cli.h"
#include "attnview/colormap.h"
#include "attnview/i18n.h"
#include "attnview/modelfile.h"
#include "attnview/scale.h"
#include "attnview/timeline.h"

#include <errno.h>
#include <langinfo.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Whether bytes from 0x80 are UTF-8 here: in a locale of another character
 * set (GB18030, Latin-1) they are its own characters (gettext converts the
 * translations to it) and pass; ASCII locales translate nothing. */
static bool utf8_output(void)
{
	static int utf8 = -1;
	if (utf8 < 0) {
		const char *cs = nl_langinfo(CODESET);
		utf8 = !cs || strcmp(cs, "UTF-8") == 0 || strcmp(cs, "ANSI_X3.4-1968") == 0;
	}
	return utf8 == 1;
}

void cli_write(FILE *f, const char *s)
{
	bool utf8 = utf8_output();
	while (*s) {
		char esc[AV_ESC_SIZE];
		size_t len = av_char_shown(s, esc, NULL);
		if (!esc[0] || *s == '\n' || *s == '\t' || (!utf8 && (unsigned char)*s >= 0x80))
			fwrite(s, 1, len, f);
		else
			fputs(esc, f);
		s += len;
	}
}

void cli_vprintf(FILE *f, const char *fmt, va_list ap)
{
	char small[2048], *buf = small;
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	if (n >= (int)sizeof small && (buf = malloc((size_t)n + 1)) != NULL)
		vsnprintf(buf, (size_t)n + 1, fmt, again);
	va_end(again);
	if (n >= 0)
		cli_write(f, buf ? buf : small);
	if (buf != small)
		free(buf);
}

void cli_printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	cli_vprintf(stdout, fmt, ap);
	va_end(ap);
}

/* Whatever stdout holds goes first: with both redirected to one file, the
 * lines stay in the order they were written. */
void cli_error(const char *msg)
{
	fflush(stdout);
	fputs("attnview: ", stderr);
	cli_write(stderr, msg);
	fputc('\n', stderr);
}

void cli_note(const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	va_start(ap, fmt);
	fputs("attnview: ", stderr);
	cli_vprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_usage_error(const char *help, const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	va_start(ap, fmt);
	fputs("attnview: ", stderr);
	cli_vprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, _("\nTry '%s'.\n"), help);
	return EXIT_USAGE;
}

model *cli_load_model(const char *path, av_error *err)
{
	if (!path || model_builtin_name(path))
		return model_builtin_named(path, err);
	struct stat st;
	if (stat(path, &st) != 0 && errno == ENOENT) {
		char ckpt[4200], qc[4300];
		snprintf(ckpt, sizeof ckpt, "%s.ckpt", path);
		if (stat(ckpt, &st) == 0) { /* a run stopped or still going: named */
			av_shell_quote(ckpt, qc, sizeof qc);
			av_fail(
			    err,
			    _("%s: no such file yet, but %s is there: a training run writing it "
			      "has not finished, or was stopped (resume it with the command it "
			      "printed); its latest step: --model %s"),
			    AV_Q(path), AV_Q(ckpt), qc);
			return NULL;
		}
		av_fail(err,
			_("%s: no such file; --model takes a model file (attnview --train "
			  "CORPUS -o FILE writes one; python3 -m attnview_torch.convert, "
			  "nanoGPT's and minGPT's) or builtin, builtin-causal"),
			AV_Q(path));
		return NULL;
	}
	return model_load(path, err);
}

int cli_gen_option(cli_opt_id id, const char *arg, cli_gen *g)
{
	cli_value v;
	g->given = true;
	bool ok = cli_option_value(id, arg, &v);
	if (id == OPT_TEMPERATURE) {
		if (!ok)
			return cli_usage_error(
			    "attnview --help",
			    _("--temperature takes a number from 0 (always the most "
			      "likely character) to %g, not '%s'"),
			    (double)GEN_MAX_TEMPERATURE, AV_Q(arg));
		g->temperature = (float)v.x;
		return -1;
	}
	if (id == OPT_TOP_K) {
		if (!ok)
			return cli_usage_error(
			    "attnview --help",
			    _("--top-k takes a number of characters (0: all), not "
			      "'%s'"),
			    AV_Q(arg));
		g->top_k = v.i;
		return -1;
	}
	if (!ok)
		return cli_usage_error("attnview --help",
				       _("--seed takes a whole number, not '%s'"), AV_Q(arg));
	g->seed = v.u;
	return -1;
}

#define usage_error(...) cli_usage_error("attnview --help", __VA_ARGS__)

static int take_step(const char *arg, cli_common *c)
{
	cli_value v;
	if (!cli_option_value(OPT_STEP, arg, &v))
		return usage_error(_("--step takes a step number, not '%s'"), AV_Q(arg));
	c->step = v.u;
	c->has_step = true;
	return -1;
}

/* --step S with --model FILE: FILE.steps/step-SSSSSS.attn, which must
 * exist. -1, or the exit status of the error, printed. */
static int resolve_step(cli_common *c)
{
	if (!c->has_step)
		return -1;
	if (c->model_path && model_builtin_name(c->model_path))
		return usage_error(_("--step opens a model a training run kept beside its model "
				     "file; the built-in model %s keeps none: give a trained "
				     "model's file with --model"),
				   c->model_path);
	if (!c->model_path)
		return usage_error(_("--step opens a model a training run kept beside its model "
				     "file: give that file with --model"));
	if (!timeline_kept_path(c->model_path, c->step, c->step_path, sizeof c->step_path))
		return usage_error(_("%s: the path is too long"), AV_Q(c->model_path));
	struct stat st;
	if (stat(c->step_path, &st) != 0) {
		char qm[1024];
		av_shell_quote(c->model_path, qm, sizeof qm);
		cli_note(
		    _("%s: no model kept of step %llu: the run that wrote %s kept none there "
		      "(--train --keep-steps N keeps every N-th recorded step; attnview --dump "
		      "--timeline --model %s lists the recorded steps)"),
		    AV_Q(c->step_path), (unsigned long long)c->step, AV_Q(c->model_path), qm);
		return EXIT_RUNTIME;
	}
	c->model_path = c->step_path;
	return -1;
}

/* One shared option into c; -1, or the exit status of a usage error. */
/* --targets A B (two_values joined them with a tab), or --targets AB: two
 * characters, each one codepoint after cleaning. */
static int take_targets(const char *arg, cli_common *c)
{
	cp_buf cps = {0};
	av_error err;
	const char *tab = strchr(arg, '\t');
	size_t k = 0;
	bool ok = true;
	/* The two arguments one by one (a tab is no character of a text). */
	for (int part = 0; ok && part < (tab ? 2 : 1); part++) {
		const char *s = part ? tab + 1 : arg;
		size_t len = part || !tab ? strlen(s) : (size_t)(tab - arg);
		cps.n = 0;
		ok = tokenize_text(s, len, "--targets", &cps, NULL, &err);
		for (size_t i = 0; ok && i < cps.n; i++)
			if (k++ < 2)
				c->targets[k - 1] = cps.v[i];
	}
	cp_buf_finish(&cps);
	if (!ok || k != 2) {
		char shown[128];
		snprintf(shown, sizeof shown, "%s", arg);
		for (char *t = strchr(shown, '\t'); t; t = strchr(t, '\t'))
			*t = ' ';
		return usage_error(_("--targets takes two characters, the one whose logit counts "
				     "and the one taken away (--targets 他 她), not '%s'"),
				   AV_Q(shown));
	}
	c->has_targets = true;
	return -1;
}

/* An option of two values (--targets A B): the second is the argument after
 * the first, unless the first holds both; joined by a tab. */
static const char *two_values(int argc, char **argv, const char *first)
{
	static char joined[128];
	int ncp = 0; /* codepoints: the bytes that do not continue one */
	for (const char *s = first; s && *s; s++)
		ncp += ((unsigned char)*s & 0xC0) != 0x80;
	if (ncp != 1 || optind >= argc || (argv[optind][0] == '-' && argv[optind][1]))
		return first;
	snprintf(joined, sizeof joined, "%s\t%s", first, argv[optind++]);
	return joined;
}

static int take_common(cli_opt_id id, const char *arg, cli_common *c)
{
	scale_kind sk;
	cm_ramp rk;
	cli_value v;
	switch (id) {
	case OPT_MODEL:
		c->model_path = arg;
		return -1;
	case OPT_TEXT:
		c->text = arg;
		return -1;
	case OPT_INPUT:
		c->input = arg;
		return -1;
	case OPT_COMPARE:
		c->compare = arg;
		return -1;
	case OPT_WORDS:
		c->words = true;
		return -1;
	case OPT_ANY_ENCODING:
		c->any_encoding = true;
		return -1;
	case OPT_TARGETS:
		return take_targets(arg, c);
	case OPT_STEP:
		return take_step(arg, c);
	case OPT_LAYER:
		if (!cli_option_value(id, arg, &v))
			return usage_error(_("--layer takes a layer number from 0, not '%s'"),
					   AV_Q(arg));
		c->layer = v.i;
		return -1;
	case OPT_HEAD:
		if (!cli_option_value(id, arg, &v))
			return usage_error(_("--head takes a head number from 0, not '%s'"),
					   AV_Q(arg));
		c->head = v.i;
		return -1;
	case OPT_SCALE:
		if (!scale_parse(arg, &sk))
			return usage_error(_("--scale takes %s, not '%s'"),
					   scale_names_list(_(" or ")), AV_Q(arg));
		c->scale = (int)sk;
		return -1;
	case OPT_COLORMAP:
		if (!colormap_ramp_parse(arg, &rk))
			return usage_error(_("--colormap takes viridis or cividis, not '%s'"),
					   AV_Q(arg));
		c->ramp = (int)rk;
		return -1;
	default: /* OPT_TEMPERATURE, OPT_TOP_K, OPT_SEED */
		return cli_gen_option(id, arg, &c->gen);
	}
}

static bool is_common(cli_opt_id id)
{
	switch (id) {
	case OPT_MODEL:
	case OPT_TEXT:
	case OPT_INPUT:
	case OPT_COMPARE:
	case OPT_WORDS:
	case OPT_ANY_ENCODING:
	case OPT_TARGETS:
	case OPT_STEP:
	case OPT_LAYER:
	case OPT_HEAD:
	case OPT_SCALE:
	case OPT_COLORMAP:
	case OPT_TEMPERATURE:
	case OPT_TOP_K:
	case OPT_SEED:
		return true;
	default:
		return false;
	}
}

/* The id of what getopt_long returned: a long option's, or a letter's. */
static cli_opt_id option_id(int c)
{
	if (c >= OPT_FIRST && c < OPT_END)
		return (cli_opt_id)c;
	for (size_t i = 0; i < CLI_NOPTS; i++)
		if (cli_options[i].letter == c)
			return cli_options[i].id;
	return OPT_END;
}

int cli_take_why(cli_opt_id id, const char *arg, cli_why *w)
{
	switch (id) {
	case OPT_QUERY:
	case OPT_KEY: {
		cli_value v;
		if (!cli_option_value(id, arg, &v))
			return cli_usage_error("attnview --help",
					       _("%s takes a token position from 0, not '%s'"),
					       id == OPT_QUERY ? "--query" : "--key", AV_Q(arg));
		*(id == OPT_QUERY ? &w->query : &w->key) = v.i;
		return -1;
	}
	case OPT_LENS:
		w->lens = true;
		return -1;
	case OPT_DLA:
		w->dla = true;
		return -1;
	case OPT_CIRCUITS:
		w->circuits = true;
		return -1;
	case OPT_FAITHFULNESS:
		w->faith = true;
		return -1;
	case OPT_PATCH:
		w->patch = arg;
		return -1;
	case OPT_TIMELINE:
		w->timeline = true;
		return -1;
	default:
		return -2;
	}
}

const char *cli_shortened(char **argv, int optind_now, const char *value, const char *name)
{
	/* The option's own argument: the one before optind, or the one before
	 * its value when the value was an argument of its own. */
	int k = optind_now - 1;
	if (value && k > 0 && value == argv[k])
		k--;
	const char *a = argv[k];
	size_t n = strlen(name);
	if (a[0] == '-' && a[1] == '-' && strncmp(a + 2, name, n) == 0 &&
	    (a[2 + n] == '\0' || a[2 + n] == '='))
		return NULL;
	return a;
}

int cli_parse(int argc, char **argv, cli_mode mode, cli_common *c, cli_take_fn take, void *ctx)
{
	static const char *const mode_names[MODE_NMODES] = {N_("the view"), "--dump", "--info",
							    "--export", "--train"};
	const char *help = mode == MODE_TRAIN ? "attnview --train --help" : "attnview --help";
	struct option opts[CLI_NOPTS + 1];
	char shorts[16];
	cli_getopt_table(mode, opts, shorts);
	optind = 1;
	opterr = 0;
	int ch, li = -1, st;
	while ((ch = getopt_long(argc, argv, shorts, opts, &li)) != -1) {
		char name[64];
		const char *part =
		    li >= 0 ? cli_shortened(argv, optind, optarg, opts[li].name) : NULL;
		if (part)
			return cli_usage_error(help,
					       _("'%s' is short for --%s: write options in full"),
					       AV_Q(part), opts[li].name);
		if (li >= 0)
			snprintf(name, sizeof name, "--%s", opts[li].name);
		else if (optopt > 0 && optopt < 128 && (ch == ':' || ch == '?'))
			snprintf(name, sizeof name, "-%c", optopt);
		else if (ch != ':' && ch != '?')
			snprintf(name, sizeof name, "-%c", ch);
		else
			snprintf(name, sizeof name, "%.60s", argv[optind - 1]);
		li = -1;
		if (ch == ':')
			return cli_usage_error(help, _("%s needs a value"), AV_Q(name));
		cli_opt_id id = option_id(ch);
		/* An option of another mode: say which take it. */
		unsigned other = ch == '?' ? cli_option_modes(argv[optind - 1]) : 0;
		if (other && !(other & (1u << mode))) {
			static const char *const sep = NC_("list", ", "); /* between names */
			char modes[128] = "";
			for (int k = 0; k < MODE_NMODES; k++)
				if (other & (1u << k))
					snprintf(modes + strlen(modes),
						 sizeof modes - strlen(modes), "%s%s",
						 modes[0] ? av_pgettext("list", sep) : "",
						 _(mode_names[k]));
			return cli_usage_error(help, _("%s does not go with %s (it goes with %s)"),
					       AV_Q(argv[optind - 1]), _(mode_names[mode]), modes);
		}
		if (ch == '?' || id == OPT_END)
			return cli_usage_error(help, _("unknown or incomplete option '%s' for %s"),
					       AV_Q(argv[optind - 1]), _(mode_names[mode]));
		const char *value = id == OPT_TARGETS ? two_values(argc, argv, optarg) : optarg;
		st = c && is_common(id) ? take_common(id, value, c) : take(id, value, ctx);
		if (st >= 0)
			return st;
	}
	return c ? resolve_step(c) : -1;
}

int cli_show_error(const char *arg)
{
	return usage_error(_("--show takes %s, not '%s'"), sel_names_list(_(" or ")), AV_Q(arg));
}

int cli_check_layer_head(const cli_common *c, const model *m)
{
	if (c->layer >= 0 && (uint32_t)c->layer >= m->cfg.layers) {
		cli_note(_("--layer %d is out of range: this model has layers 0..%u"), c->layer,
			 m->cfg.layers - 1);
		return EXIT_USAGE;
	}
	if (c->head >= 0 && (uint32_t)c->head >= m->cfg.heads) {
		cli_note(_("--head %d is out of range: this model has heads 0..%u"), c->head,
			 m->cfg.heads - 1);
		return EXIT_USAGE;
	}
	return -1;
}
