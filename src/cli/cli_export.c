/* attnview --export FILE: a heatmap, an aggregate, the rollout or every head
 * as an SVG, PNG or PDF figure (figure.h), from the numbers --dump prints. */
#include "attnview/figure.h"
#include "attnview/i18n.h"
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define usage_error(...) cli_usage_error("attnview --help", __VA_ARGS__)
#define WORD_MARK	 '|' /* --words: a word starts after it (as in the view) */

/* What --export was asked for: parse_export_options fills it, the other
 * phases read it. */
typedef struct export_request {
	const char *path, *text, *input, *model_path, *compare, *title;
	fig_show show;
	int layer, head; /* -1: not given */
	bool words, values, force;
	scale_kind scale;
	cm_ramp ramp;
} export_request;

enum {
	OPT_EXPORT = 256,
	OPT_TEXT,
	OPT_INPUT,
	OPT_MODEL,
	OPT_LAYER,
	OPT_HEAD,
	OPT_SHOW,
	OPT_OVERVIEW,
	OPT_ROLLOUT,
	OPT_WORDS,
	OPT_COMPARE,
	OPT_SCALE,
	OPT_COLORMAP,
	OPT_VALUES,
	OPT_TITLE,
	OPT_FORCE,
};

static const struct option export_opts[] = {
    {"export", required_argument, NULL, OPT_EXPORT},
    {"text", required_argument, NULL, OPT_TEXT},
    {"input", required_argument, NULL, OPT_INPUT},
    {"model", required_argument, NULL, OPT_MODEL},
    {"layer", required_argument, NULL, OPT_LAYER},
    {"head", required_argument, NULL, OPT_HEAD},
    {"show", required_argument, NULL, OPT_SHOW},
    {"overview", no_argument, NULL, OPT_OVERVIEW},
    {"rollout", no_argument, NULL, OPT_ROLLOUT},
    {"words", no_argument, NULL, OPT_WORDS},
    {"compare", required_argument, NULL, OPT_COMPARE},
    {"scale", required_argument, NULL, OPT_SCALE},
    {"colormap", required_argument, NULL, OPT_COLORMAP},
    {"values", no_argument, NULL, OPT_VALUES},
    {"title", required_argument, NULL, OPT_TITLE},
    {"force", no_argument, NULL, OPT_FORCE},
    {NULL, 0, NULL, 0},
};

/* One option into q; returns -1, or the exit status of a usage error. */
static int take_option(int c, export_request *q, char **argv)
{
	switch (c) {
	case OPT_EXPORT:
		q->path = optarg;
		break;
	case OPT_TEXT:
		q->text = optarg;
		break;
	case OPT_INPUT:
		q->input = optarg;
		break;
	case OPT_MODEL:
		q->model_path = optarg;
		break;
	case OPT_LAYER:
		if (!cli_parse_int(optarg, 0, AV_MAX_LAYERS - 1, &q->layer))
			return usage_error(_("--layer takes a layer number from 0, not '%s'"),
					   AV_Q(optarg));
		break;
	case OPT_HEAD:
		if (!cli_parse_int(optarg, 0, AV_MAX_HEADS - 1, &q->head))
			return usage_error(_("--head takes a head number from 0, not '%s'"),
					   AV_Q(optarg));
		break;
	case OPT_SHOW:
		if (!fig_show_parse(optarg, &q->show))
			return usage_error(
			    _("--show takes head, mean, max, rollout, all or overview, "
			      "not '%s'"),
			    AV_Q(optarg));
		break;
	case OPT_OVERVIEW:
		q->show = FIG_OVERVIEW;
		break;
	case OPT_ROLLOUT:
		q->show = FIG_ROLLOUT;
		break;
	case OPT_WORDS:
		q->words = true;
		break;
	case OPT_COMPARE:
		q->compare = optarg;
		break;
	case OPT_SCALE:
		if (!scale_parse(optarg, &q->scale))
			return usage_error(_("--scale takes fixed, head, row or log, not '%s'"),
					   AV_Q(optarg));
		break;
	case OPT_COLORMAP:
		if (!colormap_ramp_parse(optarg, &q->ramp))
			return usage_error(_("--colormap takes viridis or cividis, not '%s'"),
					   AV_Q(optarg));
		break;
	case OPT_VALUES:
		q->values = true;
		break;
	case OPT_TITLE:
		q->title = optarg;
		break;
	case OPT_FORCE:
		q->force = true;
		break;
	default:
		return usage_error(_("unknown or incomplete option '%s' for --export"),
				   AV_Q(argv[optind - 1]));
	}
	return -1;
}

/* The combinations the options allow; -1 or EXIT_USAGE. */
static int check_request(const export_request *q)
{
	if (!!q->text == !!q->input)
		return usage_error("%s",
				   _("--export needs exactly one of --text TEXT or --input FILE"));
	if (q->head >= 0 && q->show != FIG_HEAD)
		return usage_error(_("--head goes with --show head, not --show %s"),
				   fig_show_name(q->show));
	if (q->layer >= 0 && (q->show == FIG_ALL || q->show == FIG_OVERVIEW))
		return usage_error(_("--show %s covers every layer; leave out --layer"),
				   fig_show_name(q->show));
	if (q->values && q->show == FIG_OVERVIEW)
		return usage_error("%s", _("--values needs one heatmap, not --show overview"));
	return -1;
}

static int parse_export_options(int argc, char **argv, export_request *q)
{
	*q = (export_request){
	    .show = FIG_HEAD, .layer = -1, .head = -1, .scale = SCALE_ROW, .ramp = RAMP_VIRIDIS};
	int c, st;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", export_opts, NULL)) != -1)
		if ((st = take_option(c, q, argv)) >= 0)
			return st;
	if (optind < argc)
		return usage_error(_("unexpected argument '%s'"), AV_Q(argv[optind]));
	return check_request(q);
}

/* Before any work: the file name's format, and an existing file. */
static int check_path(const export_request *q)
{
	av_error err;
	fig_format fmt;
	if (!fig_format_of(q->path, &fmt, &err))
		return usage_error("%s", err.msg);
	if (!fig_format_available(fmt)) {
		cli_note(_("%s: attnview was built without cairo and pango: PNG and PDF need "
			   "libcairo2-dev and libpango1.0-dev at build time; .svg works"),
			 AV_Q(q->path));
		return EXIT_RUNTIME;
	}
	struct stat st;
	if (!q->force && lstat(q->path, &st) == 0) {
		cli_note(_("%s: exists; it was left untouched (add --force to replace it)"),
			 AV_Q(q->path));
		return EXIT_RUNTIME;
	}
	return -1;
}

/* --layer and --head against this model; EXIT_USAGE when out of range. */
static int check_layer_head(export_request *q, const model *m)
{
	if ((q->layer >= 0 && (uint32_t)q->layer >= m->cfg.layers) ||
	    (q->head >= 0 && (uint32_t)q->head >= m->cfg.heads)) {
		cli_note(_("this model has layers 0..%u and heads 0..%u; --layer/--head is out of "
			   "range"),
			 m->cfg.layers - 1, m->cfg.heads - 1);
		return EXIT_USAGE;
	}
	/* The rollout goes through every layer unless told where to stop. */
	if (q->layer < 0)
		q->layer = q->show == FIG_ROLLOUT ? (int)m->cfg.layers - 1 : 0;
	if (q->head < 0)
		q->head = 0;
	return -1;
}

/* The word view: '|' marks where a word starts and is not read by the
 * model. marks[i] (i < the new length) gets whether one stood before
 * codepoint i. */
static bool strip_marks(cp_buf *cps, bool **marks)
{
	*marks = calloc(cps->n + 1, sizeof **marks);
	if (!*marks)
		return false;
	size_t out = 0;
	bool starts = false;
	for (size_t i = 0; i < cps->n; i++) {
		if (cps->v[i] == WORD_MARK) {
			starts = true;
			continue;
		}
		(*marks)[out] = starts;
		starts = false;
		cps->v[out++] = cps->v[i];
	}
	cps->n = out;
	return true;
}

/* The cleaned text as UTF-8, for the subtitle. */
static char *utf8_of(const cp_buf *cps)
{
	char *s = malloc(cps->n * 4 + 1), *p = s;
	for (size_t i = 0; s && i < cps->n; i++)
		p += cp_to_utf8(cps->v[i], p);
	if (s)
		*p = '\0';
	return s;
}

/* One text through the model: read, marks stripped in the word view, run. */
typedef struct side_text {
	cp_buf cps;
	bool *marks;
	char *utf8;
	attn_result r;
} side_text;

static bool run_side(side_text *s, const model *m, const export_request *q, const char *arg,
		     const char *what, av_error *err)
{
	bool ok = arg ? cli_read_arg(arg, what, &s->cps, err)
		      : cli_read_text(q->text, q->input, &s->cps, err);
	if (ok && q->words && !strip_marks(&s->cps, &s->marks))
		ok = av_fail(err, _("out of memory"));
	const char *name = arg ? what : q->text ? "--text" : q->input;
	if (ok && s->cps.n == 0)
		ok = av_fail(err,
			     _("%s has nothing but word marks; give some characters to look at"),
			     AV_Q(name));
	if (ok && !(s->utf8 = utf8_of(&s->cps)))
		ok = av_fail(err, _("out of memory"));
	return ok && cli_attend(m, &s->cps, 0, &s->r, NULL, err);
}

static void side_free(side_text *s)
{
	cp_buf_free(&s->cps);
	free(s->marks);
	free(s->utf8);
	attn_result_free(&s->r);
}

static int run_export(const export_request *q, const model *m)
{
	av_error err;
	side_text a = {0}, b = {0};
	figure *f = NULL;
	bool ok = run_side(&a, m, q, NULL, NULL, &err) &&
		  (!q->compare || run_side(&b, m, q, q->compare, "--compare", &err));
	if (ok) {
		fig_request fr = {
		    .show = q->show,
		    .layer = q->layer,
		    .head = q->head,
		    .words = q->words,
		    .marks = a.marks,
		    .compare = q->compare ? &b.r : NULL,
		    .compare_marks = b.marks,
		    .scale = q->scale,
		    .ramp = q->ramp,
		    .values = q->values,
		    .model_name = m->meta.name && *m->meta.name ? m->meta.name : "model",
		    .text = a.utf8,
		    .text2 = b.utf8,
		    .title = q->title,
		};
		f = figure_from_result(&a.r, &fr, &err);
		ok = f && figure_write(f, q->path, q->force, &err);
	}
	if (!ok)
		cli_error(err.msg);
	figure_destroy(f);
	side_free(&a);
	side_free(&b);
	return ok ? EXIT_OK : EXIT_RUNTIME;
}

int cli_export(int argc, char **argv)
{
	export_request q;
	int status = parse_export_options(argc, argv, &q);
	if (status >= 0 || (status = check_path(&q)) >= 0)
		return status;
	av_error err;
	model *m = cli_load_model(q.model_path, &err);
	if (!m) {
		cli_error(err.msg);
		return EXIT_RUNTIME;
	}
	if ((status = check_layer_head(&q, m)) < 0)
		status = run_export(&q, m);
	model_destroy(m);
	return status;
}
