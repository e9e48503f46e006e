/* What --dump and --export share: the text to look at, from --text or
 * --input, and the model run on it. */
#include "attnview/encoding.h"
#include "attnview/explain.h"
#include "attnview/i18n.h"
#include "attnview/infer.h"
#include "attnview/input.h"
#include "attnview/modelfile.h"
#include "attnview/patch.h"
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The most --input reads (only the model's context is looked at). */
#define CLI_INPUT_MAX ((size_t)64 << 20)

static void report_cleaning(const clean_stats *st, const char *what)
{
	if (st->invalid)
		cli_note(_("%s: %llu invalid UTF-8 sequence(s) replaced by U+FFFD, the first at "
			   "byte %llu"),
			 AV_Q(what), (unsigned long long)st->invalid,
			 (unsigned long long)st->first_invalid);
	if (st->escapes || st->controls || st->boms)
		cli_note(_("%s: removed %llu terminal escape sequence(s), %llu control "
			   "character(s) and %llu byte order mark(s)"),
			 AV_Q(what), (unsigned long long)st->escapes,
			 (unsigned long long)st->controls, (unsigned long long)st->boms);
}

/* A FIFO or pipe that keeps us waiting: say what for. */
static void say_waiting(const char *name, void *ctx)
{
	(void)ctx;
	cli_note(_("waiting for %s to give text (Ctrl-C to stop)"), AV_Q(name));
}

/* Read --input FILE ("-": standard input; pipes and FIFOs too): like a
 * corpus, invalid UTF-8 is replaced and reported, text that looks like
 * another encoding gets the same hint as attnview --train gives, and a file
 * that is mostly not text is refused as --train refuses it (unless
 * any_encoding). */
static bool read_input(const char *path, bool any_encoding, cp_buf *cps, av_error *err)
{
	uint8_t *buf;
	size_t n;
	if (strcmp(path, "-") == 0 && isatty(STDIN_FILENO))
		cli_note(_("reading the text from the terminal: end it with Ctrl-D"));
	if (!input_read_all(path, CLI_INPUT_MAX, say_waiting, NULL, &buf, &n, err))
		return false;
	clean_stats st;
	bool ok = clean_text((const char *)buf, n, cps, &st, err);
	text_encoding guess = encoding_guess(buf, n < ENCODING_SAMPLE ? n : ENCODING_SAMPLE);
	free(buf);
	if (!ok)
		return false;
	const char *name = input_name(path);
	if (!any_encoding &&
	    !encoding_check_text(&st, guess, name,
				 _("--any-encoding reads it anyway, what remains after cleaning"),
				 err))
		return false;
	report_cleaning(&st, name);
	char hint[2400];
	if (encoding_hint(guess, &st, name, hint, sizeof hint))
		cli_note(_("warning: %s"), hint);
	/* A text file's final line break is not part of the text. */
	while (cps->n && cps->v[cps->n - 1] == '\n')
		cps->n--;
	return true;
}

static bool not_empty(const cp_buf *cps, av_error *err)
{
	if (cps->n == 0)
		return av_fail(err,
			       _("the text is empty after cleaning; give some characters to look "
				 "at"));
	return true;
}

bool cli_read_arg(const char *s, const char *what, cp_buf *cps, av_error *err)
{
	clean_stats st;
	if (!tokenize_text(s, strlen(s), what, cps, &st, err))
		return false;
	report_cleaning(&st, what);
	return not_empty(cps, err);
}

bool cli_read_text(const struct cli_common *c, cp_buf *cps, av_error *err)
{
	if (c->text)
		return cli_read_arg(c->text, "--text", cps, err);
	return read_input(c->input, c->any_encoding, cps, err) && not_empty(cps, err);
}

/* The value norms of every head need q, k and v of the text: the view's
 * pass (infer_forward, as --dump's), since the predictions' passes have
 * masked a position each. */
static bool attend_norms(const model *m, activations *ws, const token *toks, int n,
			 attn_result *r, av_error *err)
{
	const model_config *c = &m->cfg;
	int32_t *ids = malloc((size_t)n * sizeof *ids);
	r->value_norms = malloc((size_t)c->layers * c->heads * (size_t)n * sizeof(float));
	if (!ids || !r->value_norms) {
		free(ids);
		return av_fail(err, _("out of memory for the value contributions"));
	}
	for (int i = 0; i < n; i++)
		ids[i] = toks[i].id;
	bool ok = infer_forward(m, ws, NULL, ids, n, NULL, NULL, NULL, NULL, err);
	free(ids);
	return ok && value_norms(m, ws, n, r->value_norms, err);
}

bool cli_attend(const model *m, const cp_buf *cps, int topk, bool norms, attn_result *r,
		int *dropped, av_error *err)
{
	int n = (int)(cps->n < m->cfg.context ? cps->n : m->cfg.context);
	int cut = (int)(cps->n - (size_t)n);
	if (dropped)
		*dropped = cut;
	if (cut)
		cli_note(_("the text has %zu tokens; the model's context is %u, so the last %d are "
			   "left out"),
			 cps->n, m->cfg.context, cut);
	token *toks = malloc((size_t)n * sizeof *toks);
	if (!toks)
		return av_fail(err, _("out of memory"));
	vocab_tokenize(&m->vocab, cps->v, (size_t)n, toks);
	activations ws = {0};
	bool ok = activations_init(&ws, &m->cfg, 1, n, n, err) &&
		  model_attend(m, &ws, toks, n, topk, r, err) &&
		  (!norms || attend_norms(m, &ws, toks, n, r, err));
	activations_finish(&ws);
	free(toks);
	return ok;
}

bool cli_patch_targets(const model *m, const struct cli_common *c, const int32_t *ids,
		       const int32_t *ids2, int n, int32_t out[2], const int32_t **targets,
		       int *from, av_error *err)
{
	*targets = out;
	if (c->has_targets) {
		*from = PATCH_GIVEN;
		for (int k = 0; k < 2; k++) {
			out[k] = vocab_id(&m->vocab, c->targets[k]);
			if (out[k] < TOK_NSPECIAL) {
				char g[32];
				cp_glyph(c->targets[k], g);
				return av_fail(
				    err,
				    _("--targets: '%s' is not in the model's vocabulary: "
				      "give characters it knows"),
				    g);
			}
		}
		return true;
	}
	*from = PATCH_DIFFERENCE;
	if (!patch_difference_targets(ids, ids2, n, out)) {
		*targets = NULL;
		*from = PATCH_TOP1;
	}
	return true;
}
