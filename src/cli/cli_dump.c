/* attnview --dump and --info: every number the view shows, for scripts. */
#include "attnview/circuits.h"
#include "attnview/dump.h"
#include "attnview/faith.h"
#include "attnview/i18n.h"
#include "attnview/infer.h"
#include "attnview/lens.h"
#include "attnview/modelfile.h"
#include "attnview/patch.h"
#include "attnview/score_split.h"
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define usage_error(...) cli_usage_error("attnview --help", __VA_ARGS__)

/* What --dump or --info was asked for: parse_dump_options fills it, the
 * other phases read it. */
typedef struct dump_request {
	bool info, dump;
	cli_common c;	  /* --model, --text, --input, --layer, --head, --words, ... */
	dump_options out; /* format, layer and head; `dropped` is set by run_dump */
	int topk;
	bool logits; /* --logits: every position's prediction logits */
	/* what the weights add up to (dump.h, dump_extras) */
	bool contributions, aggregates, rollout;
	const char *ablate; /* --ablate L.H[,L.H...] */
	int generate;	    /* --generate N: characters the model writes; 0: none */
	cli_why why;	    /* --query/--key (that cell's breakdown), the lens ... --timeline */
} dump_request;

/* One option of --dump or --info (the shared ones are in q->c); returns -1,
 * or the exit status of a usage error. */
static int take_option(cli_opt_id id, const char *arg, void *ctx)
{
	dump_request *q = ctx;
	cli_value v;
	int st = cli_take_why(id, arg, &q->why);
	if (st != -2)
		return st;
	switch (id) {
	case OPT_DUMP:
		q->dump = true;
		break;
	case OPT_INFO:
		q->info = true;
		break;
	case OPT_FORMAT:
		for (int f = 0; f < DUMP_NFORMATS; f++)
			if (strcmp(arg, dump_format_name((dump_format)f)) == 0) {
				q->out.format = (dump_format)f;
				return -1;
			}
		return usage_error(_("--format must be json or tsv, not '%s'"), AV_Q(arg));
	case OPT_TOP:
		if (!cli_option_value(id, arg, &v))
			return usage_error(_("--top takes a number from 0 to 100, not '%s'"),
					   AV_Q(arg));
		q->topk = v.i;
		break;
	case OPT_LOGITS:
		q->logits = true;
		break;
	case OPT_CONTRIBUTIONS:
		q->contributions = true;
		break;
	case OPT_AGGREGATES:
		q->aggregates = true;
		break;
	case OPT_ROLLOUT:
		q->rollout = true;
		break;
	case OPT_ABLATE:
		q->ablate = arg;
		break;
	case OPT_GENERATE:
		if (!cli_option_value(id, arg, &v))
			return usage_error(
			    _("--generate takes a number of characters from 1 to %d, "
			      "not '%s'"),
			    AV_MAX_CONTEXT, AV_Q(arg));
		q->generate = v.i;
		break;
	default: /* --help, --version: main.c took them */
		break;
	}
	return -1;
}

/* The command line into q, and the combinations checked; returns -1, or
 * the exit status of a usage error. */
static int parse_dump_options(int argc, char **argv, cli_mode mode, dump_request *q)
{
	*q = (dump_request){.c = CLI_COMMON_INIT,
			    .out = {DUMP_JSON, -1, -1, 0, NULL},
			    .topk = 5,
			    .why = CLI_WHY_INIT};
	int st = cli_parse(argc, argv, mode, &q->c, take_option, q);
	if (st >= 0)
		return st;
	const cli_common *c = &q->c;
	q->out.layer = c->layer;
	q->out.head = c->head;
	if (optind < argc)
		return usage_error(_("unexpected argument '%s'"), AV_Q(argv[optind]));
	if (q->why.timeline && (!q->dump || c->text || c->input))
		return usage_error("%s", _("--timeline goes with --dump, without a text: attnview "
					   "--dump --timeline --model FILE"));
	if (q->why.timeline)
		return -1;
	if (q->dump && !!c->text == !!c->input)
		return usage_error("%s",
				   _("--dump needs exactly one of --text TEXT or --input FILE"));
	if (c->gen.given && !q->generate)
		return usage_error("%s",
				   _("--temperature, --top-k and --seed go with --generate N"));
	if (q->generate && (c->words || c->compare))
		return usage_error("%s",
				   _("--generate cannot be combined with --words or --compare"));
	/* --query alone: where --patch reads the logit difference. */
	if ((q->why.key >= 0 && q->why.query < 0) ||
	    (q->why.query >= 0 && q->why.key < 0 && !q->why.patch))
		return usage_error("%s", _("--query and --key go together (the cell to break "
					   "down); --query alone goes with --patch (where it "
					   "is read)"));
	if (q->why.lens && q->topk < 1)
		return usage_error("%s", _("--lens shows the top-K characters: give --top 1 or more"));
	const cli_why *w = &q->why;
	if (q->out.format == DUMP_TSV &&
	    (w->key >= 0) + !!w->patch + w->lens + w->dla + w->circuits + w->faith > 1)
		return usage_error("%s", _("--query/--key, --patch, --lens, --dla, --circuits and "
					   "--faithfulness are tables of their own: in TSV ask for "
					   "one"));
	if (q->out.format == DUMP_TSV && (c->words || c->compare || q->ablate || q->logits))
		return usage_error("%s", _("--words, --compare, --ablate and --logits are in the "
					   "JSON dump only (--format json)"));
	return -1;
}

static int run_info(const dump_request *q, const model *m)
{
	dump_info(stdout, m, q->c.model_path ? q->c.model_path : "(built-in)");
	return fflush(stdout) == 0 ? EXIT_OK : EXIT_RUNTIME;
}

/* Everything one --dump run holds; dump_run_finish lets go of all of it. */
typedef struct dump_run {
	const model *m;
	cp_buf cps;
	bool *marks; /* --words: a '|' stood before this token */
	token *toks;
	int n;
	activations ws;
	attn_result r, before, cmp;
	uint8_t *ablate; /* (L, H) */
	qk_breakdown *bd;
	int nbd;
	float *vnorm;
	word_span *words;
	float *gen_p; /* --generate: the model's probability of each new character */
	int32_t *lens_id, *dla_id;
	float *lens_p, *dla_logit, *dla_heads, *dla_rest;
	int *lens_commit;
	circuits circ;
	float *faith;  /* loss (n), effect (n, n), spearman (n, L, H) */
	float *logits; /* --logits: (n, V) */
	patch_result patch;
	score_split split;
	dump_extras x;
} dump_run;

static void dump_run_finish(dump_run *d)
{
	for (int i = 0; i < d->nbd; i++)
		qk_breakdown_finish(&d->bd[i]);
	free(d->bd);
	free(d->vnorm);
	free(d->words);
	free(d->ablate);
	free(d->gen_p);
	patch_result_finish(&d->patch);
	score_split_finish(&d->split);
	free(d->lens_id);
	free(d->lens_p);
	free(d->lens_commit);
	free(d->dla_id);
	free(d->dla_logit);
	free(d->dla_heads);
	free(d->dla_rest);
	circuits_finish(&d->circ);
	free(d->faith);
	free(d->logits);
	attn_result_finish(&d->r);
	attn_result_finish(&d->before);
	attn_result_finish(&d->cmp);
	activations_finish(&d->ws);
	free(d->toks);
	free(d->marks);
	cp_buf_finish(&d->cps);
}

/* --ablate L.H[,L.H...] into d->ablate; -1, or EXIT_USAGE with a message. */
static int parse_ablate(const char *spec, dump_run *d)
{
	const model_config *c = &d->m->cfg;
	d->ablate = calloc((size_t)c->layers * c->heads, 1);
	if (!d->ablate) {
		cli_error(_("out of memory"));
		return EXIT_RUNTIME;
	}
	const char *p = spec;
	while (*p) {
		char *end;
		long l = strtol(p, &end, 10), h = -1;
		if (end != p && *end == '.') {
			const char *hp = end + 1;
			h = strtol(hp, &end, 10);
			if (end == hp)
				h = -1;
		}
		if (h < 0 || l < 0 || (*end && *end != ',') || l >= c->layers || h >= c->heads)
			return usage_error(
			    _("--ablate takes heads as LAYER.HEAD[,LAYER.HEAD...] with "
			      "layers 0..%u and heads 0..%u, not '%s'"),
			    c->layers - 1, c->heads - 1, AV_Q(spec));
		d->ablate[l * c->heads + h] = 1;
		p = *end ? end + 1 : end;
	}
	return -1;
}

/* The text, its word marks (--words) and its tokens up to the context. */
static bool take_text(dump_request *q, dump_run *d, av_error *err)
{
	if (!cli_read_text(&q->c, &d->cps, err))
		return false;
	if (q->c.words) {
		d->marks = calloc(d->cps.n + 1, sizeof *d->marks);
		if (!d->marks)
			return av_fail(err, _("out of memory"));
		d->cps.n = words_strip_marks(d->cps.v, d->cps.n, d->marks);
		if (d->cps.n == 0)
			return av_fail(
			    err, _("the text is only word marks ('|'); give some characters"));
	}
	const model *m = d->m;
	d->n = (int)(d->cps.n < m->cfg.context ? d->cps.n : m->cfg.context);
	q->out.dropped = (int)(d->cps.n - (size_t)d->n);
	if (q->out.dropped)
		cli_note(_("the text has %zu tokens; the model's context is %u, so the last %d are "
			   "left out"),
			 d->cps.n, m->cfg.context, q->out.dropped);
	d->toks = malloc((size_t)d->n * sizeof *d->toks);
	if (!d->toks)
		return av_fail(err, _("out of memory"));
	vocab_tokenize(&m->vocab, d->cps.v, (size_t)d->n, d->toks);
	return activations_init(&d->ws, &m->cfg, 1, d->n, d->n, err);
}

/* --generate N: the model writes up to N characters after the text, one at
 * a time (generate.h; with --ablate, without those heads); the dump is then
 * of the longer text, the new characters listed under "generated". */
static bool generate(dump_request *q, dump_run *d, av_error *err)
{
	const model *m = d->m;
	const int T = (int)m->cfg.context, V = (int)m->cfg.vocab_size, from = d->n;
	token *toks = realloc(d->toks, (size_t)T * sizeof *toks);
	int32_t *ids = malloc((size_t)T * sizeof *ids);
	float *logits = malloc((size_t)V * sizeof *logits);
	d->gen_p = malloc((size_t)q->generate * sizeof *d->gen_p);
	if (toks)
		d->toks = toks;
	if (!toks || !ids || !logits || !d->gen_p) {
		free(ids);
		free(logits);
		return av_fail(err, _("out of memory"));
	}
	activations_finish(&d->ws);
	bool ok = activations_init(&d->ws, &m->cfg, 1, T, T, err);
	for (int i = 0; i < d->n; i++)
		ids[i] = d->toks[i].id;
	gen_sampler s;
	gen_sampler_init(&s, q->c.gen.temperature, q->c.gen.top_k, q->c.gen.seed);
	d->ws.ablate = d->ablate;
	dump_extras *x = &d->x;
	for (int k = 0; ok && k < q->generate; k++) {
		if (d->n >= T) {
			x->gen_stop = "the context is full";
			break;
		}
		int32_t id = -1;
		ok = model_next_logits(m, &d->ws, ids, d->n, logits, err);
		if (ok && (id = gen_pick(&s, logits, V, &d->gen_p[k])) < 0)
			ok = av_fail(err, _("out of memory"));
		if (ok) {
			vocab_tokenize(&m->vocab, &m->vocab.cps[id], 1, &d->toks[d->n]);
			ids[d->n++] = id;
		}
	}
	d->ws.ablate = NULL;
	gen_sampler_finish(&s);
	free(ids);
	free(logits);
	x->generated = true;
	x->gen_from = from;
	x->gen_p = d->gen_p;
	x->temperature = s.temperature;
	x->top_k = s.top_k;
	x->seed = s.seed;
	if (ok && d->n - from < q->generate)
		cli_note(_("wrote %d of %d characters: the context of %d is full"), d->n - from,
			 q->generate, T);
	return ok;
}

/* The attention (of the ablated model, with --ablate: then also the loss
 * and predictions with every head, the loss without the heads and with
 * them mean-ablated). */
static bool attend(dump_request *q, dump_run *d, av_error *err)
{
	if (!d->ablate)
		return model_attend(d->m, &d->ws, d->toks, d->n, q->topk, &d->r, err);
	dump_extras *x = &d->x;
	x->ablate = d->ablate;
	d->ws.ablate = NULL;
	if (!model_attend(d->m, &d->ws, d->toks, d->n, q->topk, &d->before, err) ||
	    !model_text_loss(d->m, &d->ws, d->toks, d->n, &x->loss_before, &x->loss_positions,
			     err))
		return false;
	x->before = &d->before;
	double at_loss;
	int count, at_count;
	if (!model_text_loss_mean(d->m, &d->ws, d->toks, d->n, d->ablate, NULL, &x->loss_mean,
				  &count, &at_loss, &at_count, NULL, NULL, err))
		return false;
	d->ws.ablate = d->ablate;
	return model_attend(d->m, &d->ws, d->toks, d->n, q->topk, &d->r, err) &&
	       model_text_loss(d->m, &d->ws, d->toks, d->n, &x->loss_after, &x->loss_positions,
			       err);
}

/* --query I --key J: the score split of that cell in the head of --layer
 * and --head (0 each when not given), from the pass in d->ws; none for a
 * key a causal model's mask hides. */
static bool split(dump_request *q, dump_run *d, av_error *err)
{
	if (d->m->cfg.objective == OBJ_CAUSAL && q->why.key > q->why.query)
		return true;
	const int l = q->out.layer >= 0 ? q->out.layer : 0, h = q->out.head >= 0 ? q->out.head : 0;
	if (!score_split_compute(d->m, &d->ws, d->n, l, h, q->why.query, q->why.key, &d->split,
				 err))
		return false;
	d->x.split = &d->split;
	return true;
}

/* What needs q, k and v: a plain forward pass of the text (the predictions'
 * passes have masked a position each), then the breakdown and the norms. */
static bool explain(dump_request *q, dump_run *d, av_error *err)
{
	if (q->why.key < 0 && !q->contributions)
		return true;
	const model_config *c = &d->m->cfg;
	if (q->why.key >= 0 && (q->why.query >= d->n || q->why.key >= d->n))
		return av_fail(err, _("--query %d --key %d: the text has %d tokens, 0 to %d"),
			       q->why.query, q->why.key, d->n, d->n - 1);
	int32_t *ids = malloc((size_t)d->n * sizeof *ids);
	if (!ids)
		return av_fail(err, _("out of memory"));
	for (int i = 0; i < d->n; i++)
		ids[i] = d->toks[i].id;
	/* The view's pass (infer_forward), whose q and k it takes apart too. */
	bool ok = infer_forward(d->m, &d->ws, NULL, ids, d->n, NULL, NULL, NULL, NULL, err);
	free(ids);
	if (!ok)
		return false;
	const int hs = (int)(c->dim / c->heads);
	if (q->why.key >= 0) {
		d->bd = calloc((size_t)c->layers * c->heads, sizeof *d->bd);
		float *qk = malloc(2 * (size_t)hs * sizeof *qk);
		if (!d->bd || !qk) {
			free(qk);
			return av_fail(err, _("out of memory"));
		}
		for (int l = 0; l < (int)c->layers; l++)
			for (int h = 0; h < (int)c->heads; h++) {
				if ((q->out.layer >= 0 && q->out.layer != l) ||
				    (q->out.head >= 0 && q->out.head != h))
					continue;
				qk_breakdown *b = &d->bd[d->nbd];
				if (!qk_breakdown_init(b, hs, err)) {
					free(qk);
					return false;
				}
				d->nbd++;
				qk_from_forward(d->m, &d->ws, l, h, q->why.query, q->why.key, qk,
						qk + hs);
				float row[AV_MAX_CONTEXT];
				attn_score_row(&d->r, l, h, q->why.query, row);
				qk_breakdown_compute(b, l, h, q->why.query, q->why.key, qk, qk + hs,
						     row, d->n);
			}
		free(qk);
		d->x.breakdown = d->bd;
		d->x.nbreakdown = d->nbd;
		if (!split(q, d, err))
			return false;
	}
	if (q->contributions) {
		d->vnorm = malloc((size_t)c->layers * c->heads * (size_t)d->n * sizeof *d->vnorm);
		if (!d->vnorm || !value_norms(d->m, &d->ws, d->n, d->vnorm, err))
			return d->vnorm ? false : av_fail(err, _("out of memory"));
		d->x.value_norms = d->vnorm;
	}
	return true;
}

/* --patch TEXT2: TEXT2 patched into the text (with --ablate, without those
 * heads), read at --query or the last position, the logit difference of
 * --targets or of the texts' difference (cli_patch_targets); patch.h. */
static bool patching(dump_request *q, dump_run *d, av_error *err)
{
	cp_buf cps = {0};
	clean_stats st;
	const int n = d->n, pos = q->why.query >= 0 ? q->why.query : n - 1;
	bool ok = tokenize_text(q->why.patch, strlen(q->why.patch), "--patch", &cps, &st, err);
	/* Cut at the context as the text is: two texts of the same length
	 * stay the same length. */
	if (ok && cps.n > d->m->cfg.context)
		cps.n = d->m->cfg.context;
	if (ok && cps.n != (size_t)n)
		ok = av_fail(err,
			     _("--patch: the text has %d tokens and TEXT2 %zu; patching needs "
			       "texts of the same length"),
			     n, cps.n);
	if (ok && pos >= n)
		ok = av_fail(err, _("--query %d: the text has %d tokens, 0 to %d"), pos, n, n - 1);
	int32_t *ids = ok ? malloc(2 * (size_t)n * sizeof *ids) : NULL;
	token *t = ok ? malloc((size_t)n * sizeof *t) : NULL;
	if (ok && (!ids || !t))
		ok = av_fail(err, _("out of memory"));
	if (ok) {
		vocab_tokenize(&d->m->vocab, cps.v, (size_t)n, t);
		for (int i = 0; i < n; i++) {
			ids[i] = d->toks[i].id;
			ids[n + i] = t[i].id;
		}
		int32_t tg[2];
		const int32_t *targets;
		int from;
		d->ws.ablate = d->ablate;
		ok = cli_patch_targets(d->m, &q->c, ids, ids + n, n, tg, &targets, &from, err) &&
		     activation_patch(d->m, &d->ws, ids, ids + n, n, pos, targets, &d->patch, err);
		d->patch.from = (patch_targets_from)from;
		d->ws.ablate = NULL;
	}
	free(ids);
	free(t);
	cp_buf_finish(&cps);
	d->x.patching = ok ? &d->patch : NULL;
	return ok;
}

/* --lens and --dla: from a plain pass of the text (with --ablate, without
 * those heads), lens.h. */
static bool lens(dump_request *q, dump_run *d, av_error *err)
{
	const model_config *c = &d->m->cfg;
	const size_t n = (size_t)d->n, LH = (size_t)c->layers * c->heads;
	const int K = q->topk < (int)c->vocab_size ? q->topk : (int)c->vocab_size;
	int32_t *ids = malloc(n * sizeof *ids);
	if (q->why.lens) {
		d->lens_id = malloc((size_t)c->layers * n * (size_t)K * sizeof *d->lens_id);
		d->lens_p = malloc((size_t)c->layers * n * (size_t)K * sizeof *d->lens_p);
		d->lens_commit = malloc(n * sizeof *d->lens_commit);
	}
	if (q->why.dla) {
		d->dla_id = malloc(n * sizeof *d->dla_id);
		d->dla_logit = malloc(n * sizeof *d->dla_logit);
		d->dla_heads = malloc(n * LH * sizeof *d->dla_heads);
		d->dla_rest = malloc(n * sizeof *d->dla_rest);
	}
	bool ok = ids && (!q->why.lens || (d->lens_id && d->lens_p && d->lens_commit)) &&
		  (!q->why.dla || (d->dla_id && d->dla_logit && d->dla_heads && d->dla_rest));
	if (!ok) {
		free(ids);
		return av_fail(err, _("out of memory"));
	}
	for (int i = 0; i < d->n; i++)
		ids[i] = d->toks[i].id;
	d->ws.ablate = d->ablate;
	if (q->why.lens && logit_lens(d->m, &d->ws, ids, d->n, (lens_rows){0, d->n}, K, d->lens_id,
				      d->lens_p, d->lens_commit, err)) {
		d->x.lens_id = d->lens_id;
		d->x.lens_p = d->lens_p;
		d->x.lens_commit = d->lens_commit;
		d->x.lens_k = K;
	} else if (q->why.lens) {
		ok = false;
	}
	if (ok && q->why.dla &&
	    (ok = logit_attribution(d->m, &d->ws, ids, d->n, (lens_rows){0, d->n}, NULL, d->dla_id,
				    d->dla_logit, d->dla_heads, d->dla_rest, err))) {
		d->x.dla_id = d->dla_id;
		d->x.dla_logit = d->dla_logit;
		d->x.dla_heads = d->dla_heads;
		d->x.dla_rest = d->dla_rest;
	}
	d->ws.ablate = NULL;
	free(ids);
	return ok;
}

/* --faithfulness: every row's meter (faith.h), of the model as it is. */
static bool faithfulness(dump_run *d, av_error *err)
{
	const size_t n = (size_t)d->n, LH = (size_t)d->m->cfg.layers * d->m->cfg.heads;
	int32_t *ids = malloc(n * sizeof *ids);
	d->faith = malloc((n + n * n + n * LH) * sizeof *d->faith);
	if (!ids || !d->faith) {
		free(ids);
		return av_fail(err, _("out of memory"));
	}
	for (size_t i = 0; i < n; i++)
		ids[i] = d->toks[i].id;
	bool ok = faith_rows(d->m, ids, d->n, 0, d->n, d->faith, d->faith + n, d->faith + n + n * n,
			     NULL, NULL, NULL, err);
	free(ids);
	if (ok) {
		d->x.faith_loss = d->faith;
		d->x.faith_effect = d->faith + n;
		d->x.faith_spearman = d->faith + n + n * n;
	}
	return ok;
}

/* --logits: every position's prediction logits (man 5 attnview, section 6),
 * each row as the predictions ask for it (infer_pred_logits), so that they
 * are the bits the predictions come from; with --ablate, of the ablated
 * model, as the predictions of the dump. */
static bool logits(dump_run *d, av_error *err)
{
	const size_t V = d->m->cfg.vocab_size;
	infer_cache *c = calloc(1, sizeof *c);
	d->logits = malloc((size_t)d->n * V * sizeof *d->logits);
	bool ok = c && d->logits;
	if (!ok)
		av_fail(err, _("out of memory"));
	d->ws.ablate = d->ablate;
	for (int p = 0; ok && p < d->n; p++)
		ok = infer_pred_logits(d->m, &d->ws, c, d->toks, d->n, p, d->logits + (size_t)p * V,
				       NULL, NULL, err);
	d->ws.ablate = NULL;
	if (c)
		infer_cache_clear(c);
	free(c);
	d->x.logits = ok ? d->logits : NULL;
	return ok;
}

/* --words: words at spaces and punctuation, and at the text's '|' marks. */
static bool words(dump_run *d, av_error *err)
{
	d->words = malloc((size_t)d->n * sizeof *d->words);
	bool *starts = calloc((size_t)d->n, sizeof *starts);
	if (!d->words || !starts) {
		free(starts);
		return av_fail(err, _("out of memory"));
	}
	int nw = words_split(d->words, d->toks, d->n);
	memcpy(starts, d->marks, (size_t)d->n * sizeof *starts);
	for (int i = 0; i < nw; i++)
		starts[d->words[i].start] = true;
	d->x.nwords = words_from_marks(d->words, starts, d->n);
	d->x.words = d->words;
	free(starts);
	return true;
}

/* --compare TEXT: the other text through the same model (and ablation). */
static bool compare(dump_request *q, dump_run *d, av_error *err)
{
	cp_buf cps = {0};
	clean_stats st;
	bool ok = tokenize_text(q->c.compare, strlen(q->c.compare), "--compare", &cps, &st, err);
	if (ok && cps.n == 0)
		ok = av_fail(err, _("--compare: the text is empty after cleaning"));
	int n = ok ? (int)(cps.n < (size_t)d->n ? cps.n : (size_t)d->n) : 0;
	token *t = ok ? malloc((size_t)n * sizeof *t) : NULL;
	if (ok && !t)
		ok = av_fail(err, _("out of memory"));
	if (ok) {
		vocab_tokenize(&d->m->vocab, cps.v, (size_t)n, t);
		ok = model_attend(d->m, &d->ws, t, n, 0, &d->cmp, err);
	}
	free(t);
	cp_buf_finish(&cps);
	d->x.compare = ok ? &d->cmp : NULL;
	d->x.compare_text = q->c.compare;
	return ok;
}

/* The first `context` tokens of the text (the rest is reported and dropped)
 * through the model, then out as JSON or TSV with what else was asked. */
static int run_dump(dump_request *q, const model *m)
{
	int status = EXIT_RUNTIME;
	av_error err;
	dump_run d;
	memset(&d, 0, sizeof d);
	d.m = m;
	d.x.aggregates = q->aggregates;
	d.x.rollout = q->rollout;
	q->out.x = &d.x;
	if (q->ablate && (status = parse_ablate(q->ablate, &d)) >= 0)
		goto out_quiet;
	status = EXIT_RUNTIME;
	if (!take_text(q, &d, &err) || (q->generate && !generate(q, &d, &err)) ||
	    !attend(q, &d, &err) || !explain(q, &d, &err) || (q->c.words && !words(&d, &err)) ||
	    (q->c.compare && !compare(q, &d, &err)) || (q->why.patch && !patching(q, &d, &err)) ||
	    ((q->why.lens || q->why.dla) && !lens(q, &d, &err)) ||
	    (q->why.circuits &&
	     !(d.x.circuits = circuits_init(&d.circ, m, &err) ? &d.circ : NULL)) ||
	    (q->why.faith && !faithfulness(&d, &err)) || (q->logits && !logits(&d, &err)) ||
	    !dump_write(stdout, m, &d.r, &q->out, &err))
		goto out;
	status = EXIT_OK;
out:
	if (status != EXIT_OK)
		cli_error(err.msg);
out_quiet:
	dump_run_finish(&d);
	return status;
}

/* --dump --timeline: the model's training timeline (dump_timeline). */
static int run_timeline(const dump_request *q, const model *m)
{
	av_error err;
	if (dump_timeline(stdout, m, q->c.model_path ? q->c.model_path : "builtin", &q->out,
			  &err))
		return EXIT_OK;
	cli_error(err.msg);
	return EXIT_RUNTIME;
}

int cli_dump(int argc, char **argv, cli_mode mode)
{
	dump_request q;
	int status = parse_dump_options(argc, argv, mode, &q);
	if (status >= 0)
		return status;
	av_error err;
	model *m = cli_load_model(q.c.model_path, &err);
	if (!m) {
		cli_error(err.msg);
		return EXIT_RUNTIME;
	}
	if (q.info)
		status = run_info(&q, m);
	else if ((status = cli_check_layer_head(&q.c, m)) < 0)
		status = q.why.timeline ? run_timeline(&q, m) : run_dump(&q, m);
	model_destroy(m);
	return status;
}
