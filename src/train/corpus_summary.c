/* What a corpus read says about itself (corpus.h): the cleaning of each
 * file, the split and vocabulary, and the encoding warnings. */
#include "attnview/corpus.h"
#include "attnview/i18n.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <utf8proc.h>

/* printf at buf[*k] within n bytes, moving *k past what it wrote (past n
 * when cut: the caller terminates). ADD(...) in the summaries below. */
static void appendf(char *buf, size_t n, size_t *k, const char *fmt, ...) AV_PRINTF(4, 5);
static void appendf(char *buf, size_t n, size_t *k, const char *fmt, ...)
{
	if (*k >= n)
		return;
	va_list ap;
	va_start(ap, fmt);
	int r = vsnprintf(buf + *k, n - *k, fmt, ap);
	va_end(ap);
	*k += r > 0 ? (size_t)r : 0;
}
#define ADD(...) appendf(buf, n, &k, __VA_ARGS__)

void clean_stats_summary(const clean_stats *s, const char *what, char *buf, size_t n)
{
	size_t k = 0;
	ADD(_("%s: %" PRIu64 " %s, %" PRIu64 " %s"), AV_Q(what), s->bytes,
	    ngettext("byte", "bytes", s->bytes), s->codepoints,
	    ngettext("character", "characters", s->codepoints));
	if (s->escapes || s->controls) {
		ADD(_("; removed"));
		if (s->escapes)
			ADD(_(" %" PRIu64 " ANSI escape %s"), s->escapes,
			    ngettext("sequence", "sequences", s->escapes));
		if (s->escapes && s->controls)
			ADD(_(" and"));
		if (s->controls)
			ADD(_(" %" PRIu64 " control %s"), s->controls,
			    ngettext("character", "characters", s->controls));
	}
	if (s->crlf)
		ADD(_("; %" PRIu64 " CR or CRLF line %s made LF"), s->crlf,
		    ngettext("end", "ends", s->crlf));
	if (s->invalid)
		ADD(_("; %" PRIu64 " invalid UTF-8 %s replaced by U+FFFD (first at byte %" PRIu64
		      ")"),
		    s->invalid, ngettext("sequence", "sequences", s->invalid), s->first_invalid);
	if (s->boms == 1)
		ADD(_("; byte order mark removed"));
	else if (s->boms)
		ADD(_("; %" PRIu64 " byte order marks removed"), s->boms);
	if (!s->escapes && !s->controls && !s->crlf && !s->invalid && !s->boms)
		ADD(_("; clean"));
	if (k >= n && n > 0)
		buf[n - 1] = '\0';
}

void corpus_encoding_warnings(const corpus *c, char *buf, size_t n)
{
	char line[4800];
	size_t k = 0;
	if (n == 0)
		return;
	buf[0] = '\0';
	for (size_t i = 0; i < c->nfiles; i++)
		if (encoding_hint(c->files[i].guess, &c->files[i].stats, c->files[i].name, line,
				  sizeof line))
			ADD(_("warning: %s\n"), line);
	if (c->val_file &&
	    encoding_hint(c->val_guess, &c->val_stats, _("the validation file"), line, sizeof line))
		ADD(_("warning: %s\n"), line);
	if (k >= n)
		buf[n - 1] = '\0';
}

/* A fixed vocabulary's unknown training characters, with the most frequent
 * (quoted as a terminal shows them). */
static void unknown_line(const corpus *c, char *buf, size_t n, size_t *kp)
{
	size_t k = *kp;
	char chars[CORPUS_UNK_TOP * 16] = "";
	size_t m = 0;
	for (int i = 0; i < c->nunk_top && m + 16 < sizeof chars; i++) {
		uint8_t u[4];
		utf8proc_ssize_t l = utf8proc_encode_char((utf8proc_int32_t)c->unk_top[i], u);
		char one[8];
		snprintf(one, sizeof one, "%.*s", (int)l, (const char *)u);
		m += (size_t)snprintf(chars + m, sizeof chars - m, "%s'%s'", i ? " " : "",
				      c->unk_top[i] == '\n' ? "\\n" : AV_Q(one));
	}
	ADD(ngettext("%" PRIu64 " training character (%" PRIu64
		     " distinct: %s) is not in it: it is read as the unknown character, and the "
		     "model cannot learn to predict it\n",
		     "%" PRIu64 " training characters (%" PRIu64
		     " distinct, the most frequent: %s) are not in it: they are read as the "
		     "unknown character, and the model cannot learn to predict them\n",
		     c->unk_train),
	    c->unk_train, c->unk_distinct, chars);
	*kp = k;
}

void corpus_summary(const corpus *c, char *buf, size_t n)
{
	char line[4800];
	size_t k = 0;
	if (n == 0)
		return;
	buf[0] = '\0';
	for (size_t i = 0; i < c->nfiles; i++) {
		clean_stats_summary(&c->files[i].stats, c->files[i].name, line, sizeof line);
		ADD("%s\n", line);
	}
	if (c->nfiles > 1)
		ADD(_("corpus: %zu files, %" PRIu64 " characters in all (%" PRIu64
		      " line %s added between files)\n"),
		    c->nfiles, c->n, c->separators, ngettext("break", "breaks", c->separators));
	if (c->val_file) {
		clean_stats_summary(&c->val_stats, _("validation file"), line, sizeof line);
		ADD("%s\n", line);
	}
	uint64_t kept = 0;
	for (uint32_t i = TOK_NSPECIAL; i < c->vocab.size; i++)
		kept += c->id_count[i];
	char share[160], pct[32];
	uint64_t pieces = corpus_val_pieces(c->nval);
	if (c->val_percent)
		snprintf(pct, sizeof pct, "%u%%", c->val_percent);
	else
		snprintf(pct, sizeof pct, "%.1f%%",
			 100.0 * (double)c->nval / (double)(c->ntrain + c->nval));
	if (c->val_file)
		snprintf(share, sizeof share, _(" (from the validation file)"));
	else if (c->nval && pieces == 1)
		snprintf(share, sizeof share, _(" (the last %s)"), pct);
	else if (c->nval)
		snprintf(share, sizeof share,
			 _(" (%s, in %" PRIu64 " pieces spread evenly over the text)"), pct,
			 pieces);
	if (c->nval || c->val_file)
		ADD(_("split: %" PRIu64 " training and %" PRIu64 " validation characters%s; "),
		    c->ntrain, c->nval, share);
	else
		ADD(_("split: %" PRIu64 " training characters, no validation text; "), c->ntrain);
	double cover = c->ntrain ? 100.0 * (double)kept / (double)c->ntrain : 0.0;
	if (c->vocab_from)
		ADD(_("vocabulary: %s's, %u ids, covering %.2f%% of the training text\n"),
		    AV_Q(c->vocab_from), c->vocab.size, cover);
	else
		ADD(_("vocabulary: %u ids (%u characters of %" PRIu64
		      " distinct, covering %.2f%% of the "
		      "training text)\n"),
		    c->vocab.size, c->vocab.size - TOK_NSPECIAL, c->distinct, cover);
	if (c->vocab_from && c->unk_train)
		unknown_line(c, buf, n, &k);
	if (c->unk_val)
		ADD(_("%" PRIu64 " validation characters are outside the vocabulary (unknown)\n"),
		    c->unk_val);
	if (k < n && !c->val_file) {
		corpus_script_shares(c, buf + k, n - k);
		k += strlen(buf + k);
	}
	/* Text in another encoding: what it looks like and how to convert it. */
	if (k < n)
		corpus_encoding_warnings(c, buf + k, n - k);
	if (k >= n)
		buf[n - 1] = '\0';
}
