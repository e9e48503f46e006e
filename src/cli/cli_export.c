/* attnview --export FILE: a heatmap, an aggregate, the rollout or every head
 * as an SVG, PNG or PDF figure (figure.h), from the numbers --dump prints. */
#include "attnview/analysis.h"
#include "attnview/figure.h"
#include "attnview/i18n.h"
#include "attnview/faith.h"
#include "attnview/lens.h"
#include "attnview/patch.h"
#include "attnview/score_split.h"
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define usage_error(...) cli_usage_error("attnview --help", __VA_ARGS__)

/* What --export was asked for: parse_export_options fills it, the other
 * phases read it. */
typedef struct export_request {
	cli_common c; /* --model, --text, --input, --layer, --head, --scale, ... */
	const char *path, *title;
	sel_kind show;
	bool values, force;
	cli_why why; /* a cell's score split, the lens's tables..., the timeline */
} export_request;

/* One option of --export (the shared ones are in q->c); returns -1, or the
 * exit status of a usage error. */
static int take_option(cli_opt_id id, const char *arg, void *ctx)
{
	export_request *q = ctx;
	int st = cli_take_why(id, arg, &q->why);
	if (st != -2)
		return st;
	switch (id) {
	case OPT_EXPORT:
		q->path = arg;
		break;
	case OPT_SHOW:
		if (!sel_parse(arg, &q->show))
			return cli_show_error(arg);
		break;
	case OPT_OVERVIEW:
		q->show = SEL_OVERVIEW;
		break;
	case OPT_ROLLOUT:
		q->show = SEL_ROLLOUT;
		break;
	case OPT_CONTRIBUTIONS:
		q->show = SEL_CONTRIB;
		break;
	case OPT_VALUES:
		q->values = true;
		break;
	case OPT_TITLE:
		q->title = arg;
		break;
	case OPT_FORCE:
		q->force = true;
		break;
	default: /* --help, --version: main.c took them */
		break;
	}
	return -1;
}

/* The combinations the options allow; -1 or EXIT_USAGE. */
static int check_request(const export_request *q)
{
	const cli_common *c = &q->c;
	/* The other figures of their own, which these two leave no room for. */
	const bool others = q->why.lens || q->why.dla || q->why.faith || q->why.patch ||
			    q->why.query >= 0 || q->why.key >= 0;
	if (q->why.circuits &&
	    (c->text || c->input || c->compare || c->words || c->layer >= 0 || c->head >= 0 ||
	     q->show != SEL_HEAD || q->values || others || q->why.timeline))
		return usage_error("%s", _("--export --circuits draws every head from the weights "
					   "alone: leave out the text, --layer, --head, --show, "
					   "--words, --compare and --values, and the other figures "
					   "(--timeline, --lens, --dla, --faithfulness, --patch, "
					   "--query, --key)"));
	if (q->why.circuits)
		return -1;
	if (q->why.timeline &&
	    (c->text || c->input || c->compare || c->words || c->layer >= 0 || c->head >= 0 ||
	     q->show != SEL_HEAD || q->values || q->title || others))
		return usage_error("%s", _("--timeline draws the training timeline, every head, "
					   "without a text: attnview --export F.svg --timeline "
					   "--model FILE"));
	if (q->why.timeline)
		return -1;
	if (!!c->text == !!c->input)
		return usage_error("%s",
				   _("--export needs exactly one of --text TEXT or --input FILE"));
	if (c->head >= 0 && !sel_has_head(q->show))
		return usage_error(
		    _("--head goes with --show head or contributions, not --show %s"),
		    sel_name(q->show));
	if (c->layer >= 0 && !sel_has_layer(q->show))
		return usage_error(_("--show %s covers every layer; leave out --layer"),
				   sel_name(q->show));
	if (q->values && q->show == SEL_OVERVIEW)
		return usage_error("%s", _("--values needs one heatmap, not --show overview"));
	if ((q->why.query < 0) != (q->why.key < 0))
		return usage_error("%s",
				   _("--query and --key go together: the cell to break down"));
	if (q->why.query >= 0 && (q->show != SEL_HEAD || c->words || c->compare))
		return usage_error("%s",
				   _("--query and --key draw one head's score split: not with "
				     "--show, --words or --compare"));
	const int tables =
	    (q->why.query >= 0) + q->why.lens + q->why.dla + q->why.faith + !!q->why.patch;
	if (tables > 1)
		return usage_error("%s",
				   _("--query/--key, --patch, --lens, --dla and --faithfulness are "
				     "figures of their own: ask for one"));
	if (tables && q->why.query < 0 &&
	    (q->show != SEL_HEAD || c->words || c->compare || c->layer >= 0 || c->head >= 0))
		return usage_error("%s",
				   _("--patch, --lens, --dla and --faithfulness draw every block "
				     "and head: not with --show, --words, --compare, --layer or "
				     "--head"));
	return -1;
}

static int parse_export_options(int argc, char **argv, export_request *q)
{
	*q = (export_request){.c = CLI_COMMON_INIT, .show = SEL_HEAD, .why = CLI_WHY_INIT};
	int st = cli_parse(argc, argv, MODE_EXPORT, &q->c, take_option, q);
	if (st >= 0)
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
	char second[4096];
	if (q->why.circuits && !export_circuits_path(q->path, second, sizeof second))
		return usage_error(_("%s: the file name is too long"), AV_Q(q->path));
	for (int i = 0; i < 1 + q->why.circuits; i++)
		if (!q->force && lstat(i ? second : q->path, &st) == 0) {
			cli_note(_("%s: exists; it was left untouched (add --force to replace it)"),
				 AV_Q(i ? second : q->path));
			return EXIT_RUNTIME;
		}
	return -1;
}

/* What was written, as the view's Ctrl-S says it: "attnview: wrote PATH
 * (svg, 12 KB)", a message to the person on standard error (standard output
 * stays empty, the same in every language). */
static void said_written(const char *path)
{
	av_error err;
	fig_format fmt;
	struct stat st;
	long long kb = stat(path, &st) == 0 ? ((long long)st.st_size + 1023) / 1024 : 0;
	const char *ext = fig_format_of(path, &fmt, &err) ? fig_format_ext(fmt) : "?";
	cli_note(_("wrote %s (%s, %lld KB)"), AV_Q(path), ext, kb);
}

/* --layer and --head against this model, and their defaults. */
static int check_layer_head(export_request *q, const model *m)
{
	int st = cli_check_layer_head(&q->c, m);
	if (st >= 0)
		return st;
	/* The rollout goes through every layer unless told where to stop. */
	if (q->c.layer < 0)
		q->c.layer = q->show == SEL_ROLLOUT ? (int)m->cfg.layers - 1 : 0;
	if (q->c.head < 0)
		q->c.head = 0;
	return -1;
}

/* The word view: '|' marks where a word starts and is not read by the
 * model (words_strip_marks, analysis.h). marks[i] (i < the new length) gets
 * whether one stood before codepoint i. */
static bool strip_marks(cp_buf *cps, bool **marks)
{
	*marks = calloc(cps->n + 1, sizeof **marks);
	if (!*marks)
		return false;
	cps->n = words_strip_marks(cps->v, cps->n, *marks);
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
	bool ok = arg ? cli_read_arg(arg, what, &s->cps, err) : cli_read_text(&q->c, &s->cps, err);
	if (ok && q->c.words && !strip_marks(&s->cps, &s->marks))
		ok = av_fail(err, _("out of memory"));
	const char *name = arg ? what : q->c.text ? "--text" : q->c.input;
	if (ok && s->cps.n == 0)
		ok = av_fail(err,
			     _("%s has nothing but word marks; give some characters to look at"),
			     AV_Q(name));
	if (ok && !(s->utf8 = utf8_of(&s->cps)))
		ok = av_fail(err, _("out of memory"));
	return ok && cli_attend(m, &s->cps, 0, q->show == SEL_CONTRIB, &s->r, NULL, err);
}

static void side_finish(side_text *s)
{
	cp_buf_finish(&s->cps);
	free(s->marks);
	free(s->utf8);
	attn_result_finish(&s->r);
}

/* --query I --key J: the score split of that cell in the head of --layer
 * and --head, from a plain pass of the text (score_split.h). */
static figure *split_figure(const export_request *q, const model *m, const side_text *a,
			    const fig_request *fr, av_error *err)
{
	const int n = a->r.n;
	if (q->why.query >= n || q->why.key >= n) {
		av_fail(err, _("--query %d --key %d: the text has %d tokens, 0 to %d"),
			q->why.query, q->why.key, n, n - 1);
		return NULL;
	}
	if (m->cfg.objective == OBJ_CAUSAL && q->why.key > q->why.query) {
		av_fail(err,
			_("--query %d --key %d: a causal model's mask hides that key: give a key "
			  "at or before the query"),
			q->why.query, q->why.key);
		return NULL;
	}
	int32_t *ids = malloc((size_t)n * sizeof *ids);
	activations ws = {0};
	score_split s = {0};
	figure *f = NULL;
	bool ok = ids != NULL;
	if (!ok)
		av_fail(err, _("out of memory"));
	for (int i = 0; ok && i < n; i++)
		ids[i] = a->r.tokens[i].id;
	ok = ok && activations_init(&ws, &m->cfg, 1, n, n, err);
	if (ok)
		model_forward(m, &ws, ids, 1, n);
	if (ok && score_split_compute(m, &ws, n, q->c.layer, q->c.head, q->why.query, q->why.key,
				      &s, err))
		f = figure_score_split(m, &s, &a->r, fr, err);
	score_split_finish(&s);
	activations_finish(&ws);
	free(ids);
	return f;
}

/* --patch TEXT2: TEXT2 patched into the text, read at its last position. */
static bool patch_of(const export_request *q, const model *m, activations *ws, const int32_t *ids,
		     int n, patch_result *p, av_error *err)
{
	cp_buf cps = {0};
	bool ok = cli_read_arg(q->why.patch, "--patch", &cps, err);
	if (ok && cps.n > m->cfg.context) /* cut as the text is */
		cps.n = m->cfg.context;
	if (ok && cps.n != (size_t)n)
		ok = av_fail(err,
			     _("--patch: the text has %d tokens and TEXT2 %zu; patching needs "
			       "texts of the same length"),
			     n, cps.n);
	token *t = ok ? malloc((size_t)n * sizeof *t) : NULL;
	int32_t *ids2 = ok ? malloc((size_t)n * sizeof *ids2) : NULL;
	if (ok && (!t || !ids2))
		ok = av_fail(err, _("out of memory"));
	if (ok) {
		vocab_tokenize(&m->vocab, cps.v, (size_t)n, t);
		for (int i = 0; i < n; i++)
			ids2[i] = t[i].id;
		int32_t tg[2];
		const int32_t *targets;
		int from;
		ok = cli_patch_targets(m, &q->c, ids, ids2, n, tg, &targets, &from, err) &&
		     activation_patch(m, ws, ids, ids2, n, n - 1, targets, p, err);
		p->from = (patch_targets_from)from;
	}
	free(t);
	free(ids2);
	cp_buf_finish(&cps);
	return ok;
}

/* --faithfulness: every row's meter (faith.h), as a table. */
static figure *faith_figure(const model *m, const attn_result *r, const int32_t *ids, int n,
			    const fig_request *fr, av_error *err)
{
	const size_t LH = (size_t)m->cfg.layers * m->cfg.heads, N = (size_t)n;
	float *loss = malloc(N * sizeof *loss), *effect = malloc(N * N * sizeof *effect),
	      *sp = malloc(N * LH * sizeof *sp);
	figure *f = NULL;
	if (!loss || !effect || !sp)
		av_fail(err, _("out of memory"));
	else if (faith_rows(m, ids, n, 0, n, loss, effect, sp, NULL, NULL, NULL, err))
		f = figure_faith(r, sp, fr, err);
	free(loss);
	free(effect);
	free(sp);
	return f;
}

/* --lens, --dla, --patch, --faithfulness: tables of rows x columns, from plain passes
 * of the text. */
static figure *why_figure(const export_request *q, const model *m, const side_text *a,
			  fig_request *fr, av_error *err)
{
	const int n = a->r.n, L = (int)m->cfg.layers, LH = L * (int)m->cfg.heads;
	int32_t *ids = malloc((size_t)n * sizeof *ids), *top = malloc((size_t)L * n * sizeof *top);
	float *w = malloc((size_t)n * (LH + L) * sizeof *w), *x = malloc(2 * (size_t)n * sizeof *x);
	activations ws = {0};
	patch_result p = {0};
	figure *f = NULL;
	bool ok = ids && top && w && x;
	if (!ok)
		av_fail(err, _("out of memory"));
	for (int i = 0; ok && i < n; i++)
		ids[i] = a->r.tokens[i].id;
	ok = ok && activations_init(&ws, &m->cfg, 1, n, n, err);
	const lens_rows all = {0, n};
	if (ok && q->why.lens && logit_lens(m, &ws, ids, n, all, 1, top, w, NULL, err) &&
	    logit_lens_p(m, &ws, ids, n, all, top + (size_t)(L - 1) * n, w, err))
		f = figure_lens(&a->r, w, fr, err);
	if (ok && q->why.dla && logit_attribution(m, &ws, ids, n, all, NULL, top, x, w, x + n, err))
		f = figure_dla(&a->r, w, fr, err);
	if (ok && q->why.faith)
		f = faith_figure(m, &a->r, ids, n, fr, err);
	fr->text2 = q->why.patch;
	if (ok && q->why.patch && patch_of(q, m, &ws, ids, n, &p, err))
		f = figure_patch(m, &a->r, &p, fr, err);
	patch_result_finish(&p);
	activations_finish(&ws);
	free(ids);
	free(top);
	free(w);
	free(x);
	return f;
}

static int run_export(const export_request *q, const model *m)
{
	av_error err;
	side_text a = {0}, b = {0};
	figure *f = NULL;
	bool ok = run_side(&a, m, q, NULL, NULL, &err) &&
		  (!q->c.compare || run_side(&b, m, q, q->c.compare, "--compare", &err));
	if (ok) {
		fig_request fr = {
		    .show = q->show,
		    .layer = q->c.layer,
		    .head = q->c.head,
		    .words = q->c.words,
		    .marks = a.marks,
		    .compare = q->c.compare ? &b.r : NULL,
		    .compare_marks = b.marks,
		    .scale = q->c.scale >= 0	       ? (scale_kind)q->c.scale
			     : q->show == SEL_OVERVIEW ? SCALE_DEFAULT_OVERVIEW
						       : SCALE_DEFAULT_MAP,
		    .ramp = q->c.ramp >= 0 ? (cm_ramp)q->c.ramp : RAMP_VIRIDIS,
		    .values = q->values,
		    .model_name = m->meta.name && *m->meta.name ? m->meta.name : "model",
		    .text = a.utf8,
		    .text2 = b.utf8,
		    .title = q->title,
		};
		if (q->why.query >= 0)
			f = split_figure(q, m, &a, &fr, &err);
		else if (q->why.lens || q->why.dla || q->why.faith || q->why.patch)
			f = why_figure(q, m, &a, &fr, &err);
		else
			f = figure_from_result(&a.r, &fr, &err);
		ok = f && figure_write(f, q->path, q->force, &err);
	}
	if (!ok)
		cli_error(err.msg);
	else
		said_written(q->path);
	figure_destroy(f);
	side_finish(&a);
	side_finish(&b);
	return ok ? EXIT_OK : EXIT_RUNTIME;
}

int cli_export(int argc, char **argv)
{
	export_request q;
	int status = parse_export_options(argc, argv, &q);
	if (status >= 0 || (status = check_path(&q)) >= 0)
		return status;
	av_error err;
	model *m = cli_load_model(q.c.model_path, &err);
	if (!m) {
		cli_error(err.msg);
		return EXIT_RUNTIME;
	}
	if (q.why.circuits) {
		status = export_circuits(m, q.path, q.force, q.title, q.c.scale, q.c.ramp, &err)
			     ? EXIT_OK
			     : EXIT_RUNTIME;
		char second[4096];
		if (status != EXIT_OK)
			cli_error(err.msg);
		else
			said_written(q.path);
		if (status == EXIT_OK && export_circuits_path(q.path, second, sizeof second))
			said_written(second);
	} else if (q.why.timeline) {
		status = figure_timeline(m, q.c.model_path ? q.c.model_path : "builtin", q.path,
					 q.force, &err)
			     ? EXIT_OK
			     : EXIT_RUNTIME;
		if (status != EXIT_OK)
			cli_error(err.msg);
		else
			said_written(q.path);
	} else if ((status = check_layer_head(&q, m)) < 0) {
		status = run_export(&q, m);
	}
	model_destroy(m);
	return status;
}
