/* Streaming a corpus file into vocabulary ids (corpus.h has the plan; the
 * passes over the files are in corpus_pass.c). */
#include "attnview/corpus.h"
#include "attnview/i18n.h"
#include "corpus_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <utf8proc.h>

#define NCP 0x110000u

/* What corpus_read carries to corpus_split. */
struct corpus_pending {
	vocab_counter counter; /* occurrences of every codepoint */
	uint32_t *dense_of;    /* [NCP]: codepoint -> dense index, UINT32_MAX if unseen */
	uint32_t *dense_cp;    /* [ndense]: dense index -> codepoint */
	uint32_t ndense;       /* distinct characters in the files */
	char *val_path;
	uint64_t min_count;
	uint32_t max_vocab;
	bool any_encoding;
	const vocab *fixed; /* corpus_options.fixed_vocab */
	input_wait_fn waiting;
	void *wait_ctx;
};

static bool is_blank(uint32_t cp)
{
	return cp == '\n' || cp == ' ' ||
	       utf8proc_category((utf8proc_int32_t)cp) == UTF8PROC_CATEGORY_ZS;
}

/* Pass 1: counts of every codepoint. */
typedef struct count_ctx {
	vocab_counter *counter;
	uint64_t nonblank;
} count_ctx;

static bool count_sink(void *ctx, const uint32_t *cps, size_t n, av_error *err)
{
	count_ctx *c = ctx;
	vocab_counter_add(c->counter, cps, n);
	for (size_t i = 0; i < n; i++)
		c->nonblank += !is_blank(cps[i]);
	return true;
}

/* Pass 2: store the dense index of every codepoint. */
typedef struct dense_ctx {
	const uint32_t *dense_of; /* [NCP] */
	void *ids;
	int width;
	uint64_t n, cap;
	const char *path;
} dense_ctx;

static bool dense_sink(void *ctx, const uint32_t *cps, size_t n, av_error *err)
{
	dense_ctx *d = ctx;
	if (d->n + n > d->cap)
		return av_fail(err,
			       _("%s changed while it was being read: it grew; train on a file "
				 "that nothing is writing to"),
			       d->path);
	for (size_t i = 0; i < n; i++) {
		uint32_t x = cps[i] < NCP ? d->dense_of[cps[i]] : UINT32_MAX;
		if (x == UINT32_MAX)
			return av_fail(err,
				       _("%s changed while it was being read: a new character "
					 "appeared; train on a file that nothing is writing to"),
				       d->path);
		if (d->width == 2)
			((uint16_t *)d->ids)[d->n + i] = (uint16_t)x;
		else
			((uint32_t *)d->ids)[d->n + i] = x;
	}
	d->n += n;
	return true;
}

/* The validation file: codepoints straight to vocabulary ids, growing. */
typedef struct val_ctx {
	const vocab *v;
	corpus *c;
	uint64_t cap;
} val_ctx;

static bool val_sink(void *ctx, const uint32_t *cps, size_t n, av_error *err)
{
	val_ctx *vc = ctx;
	corpus *c = vc->c;
	uint64_t need = c->ntrain + c->nval + n;
	if (need > vc->cap) {
		uint64_t cap = vc->cap * 2 > need ? vc->cap * 2 : need;
		void *p = realloc(c->ids, (size_t)cap * (size_t)c->width);
		if (!p)
			return av_fail(
			    err,
			    _("out of memory storing the validation file (%" PRIu64 " characters)"),
			    need);
		c->ids = p;
		vc->cap = cap;
	}
	for (size_t i = 0; i < n; i++) {
		int32_t id = vocab_id(vc->v, cps[i]);
		uint64_t at = c->ntrain + c->nval + i;
		c->unk_val += id == TOK_UNK;
		if (c->width == 2)
			((uint16_t *)c->ids)[at] = (uint16_t)id;
		else
			((uint32_t *)c->ids)[at] = (uint32_t)id;
	}
	c->nval += n;
	return true;
}

static void corpus_hash(corpus *c)
{
	uint64_t h = 0xcbf29ce484222325ull;
	uint64_t n = c->ntrain + c->nval;
	for (uint64_t i = 0; i < n; i++) {
		uint32_t x = (uint32_t)corpus_id(c, i);
		for (int k = 0; k < 4; k++) {
			h ^= (x >> (8 * k)) & 0xff;
			h *= 0x100000001b3ull;
		}
	}
	h ^= c->ntrain;
	h *= 0x100000001b3ull;
	c->hash = h;
}

/* How the corpus is named in messages: its file, or "the corpus (N files)". */
static void corpus_what(const corpus *c, char *buf, size_t n)
{
	if (c->nfiles == 1)
		snprintf(buf, n, "%s", AV_Q(c->files[0].name));
	else
		snprintf(buf, n, _("the corpus (%zu files)"), c->nfiles);
}

/* The files' cleaning added up (offsets are per file: the first invalid
 * byte is kept only for a single file). */
static void total_stats(corpus *c)
{
	clean_stats *t = &c->stats;
	memset(t, 0, sizeof *t);
	t->first_invalid = c->nfiles == 1 ? c->files[0].stats.first_invalid : UINT64_MAX;
	for (size_t i = 0; i < c->nfiles; i++) {
		const clean_stats *f = &c->files[i].stats;
		t->bytes += f->bytes;
		t->codepoints += f->codepoints;
		t->invalid += f->invalid;
		t->escapes += f->escapes;
		t->controls += f->controls;
		t->crlf += f->crlf;
		t->boms += f->boms;
	}
}

bool corpus_not_text(const clean_stats *st)
{
	return encoding_not_text(st);
}

/* Refuses the file f if it is mostly not text: what was found and what to do. */
static bool check_text(const corpus_file *f, bool any_encoding, av_error *err)
{
	return any_encoding ||
	       encoding_check_text(&f->stats, f->guess, f->name,
				   _("--any-encoding trains on it anyway, on what remains after "
				     "cleaning"),
				   err);
}

/* Pass 1: how many characters, which ones; a corpus with nothing to learn
 * is refused. */
static bool count_pass(corpus *c, pass_source *src, pass_io *io, av_error *err)
{
	struct corpus_pending *s = c->pending;
	count_ctx cc = {.counter = &s->counter};
	if (!read_pass(c, src, true, io, count_sink, &cc, err))
		return false;
	total_stats(c);
	c->n = s->counter.total;
	char what[4200];
	corpus_what(c, what, sizeof what);
	if (c->stats.bytes == 0)
		return av_fail(
		    err,
		    _("%s is empty: there is nothing to train on; give a UTF-8 text file "
		      "(a few MB of prose trains a model worth looking at)"),
		    what);
	if (c->n == 0)
		return av_fail(err,
			       _("%s has no text left after cleaning (%" PRIu64 " bytes: %" PRIu64
				 " escape sequences, %" PRIu64 " control characters and %" PRIu64
				 " byte order marks removed); give a UTF-8 text file"),
			       what, c->stats.bytes, c->stats.escapes, c->stats.controls,
			       c->stats.boms);
	for (size_t i = 0; i < c->nfiles; i++)
		if (!check_text(&c->files[i], s->any_encoding, err))
			return false;
	if (cc.nonblank == 0)
		return av_fail(err,
			       _("%s contains only whitespace (%" PRIu64 " characters): there is "
				 "nothing to learn; give a text file with words in it"),
			       what, c->n);
	return true;
}

/* Dense indices, in codepoint order, of the characters actually seen. */
static bool dense_tables(struct corpus_pending *s, av_error *err)
{
	s->dense_of = malloc(NCP * sizeof *s->dense_of);
	if (!s->dense_of)
		return av_fail(err, _("out of memory"));
	s->ndense = 0;
	for (uint32_t cp = 0; cp < NCP; cp++)
		s->dense_of[cp] = s->counter.count[cp] ? s->ndense++ : UINT32_MAX;
	s->dense_cp = malloc((size_t)s->ndense * sizeof *s->dense_cp);
	if (!s->dense_cp)
		return av_fail(err, _("out of memory"));
	for (uint32_t cp = 0; cp < NCP; cp++)
		if (s->dense_of[cp] != UINT32_MAX)
			s->dense_cp[s->dense_of[cp]] = cp;
	return true;
}

/* Pass 2: the text as dense indices, in c->ids. */
static bool encode_pass(corpus *c, pass_source *src, pass_io *io, av_error *err)
{
	struct corpus_pending *s = c->pending;
	char what[4200];
	corpus_what(c, what, sizeof what);
	/* The vocabulary has at most ndense + specials ids, so the width chosen
	 * here holds both the dense indices and the final ids (a fixed one: at
	 * most its size). */
	uint64_t most = (uint64_t)s->ndense + TOK_NSPECIAL;
	if (s->fixed && s->fixed->size > most)
		most = s->fixed->size;
	c->width = most <= 65536u ? 2 : 4;
	if (c->n > SIZE_MAX / (size_t)c->width)
		return av_fail(err, _("%s is too large to hold in memory (%" PRIu64 " characters)"),
			       what, c->n);
	dense_ctx dc = {.dense_of = s->dense_of, .width = c->width, .cap = c->n, .path = what};
	dc.ids = malloc((size_t)c->n * (size_t)c->width);
	if (!dc.ids)
		return av_fail(err,
			       _("out of memory: %s has %" PRIu64 " characters, which need %" PRIu64
				 " MB as ids"),
			       what, c->n, c->n * (uint64_t)c->width >> 20);
	c->ids = dc.ids;
	if (!read_pass(c, src, false, io, dense_sink, &dc, err))
		return false;
	if (dc.n != c->n)
		return av_fail(err,
			       _("%s changed while it was being read (%" PRIu64
				 " characters, then %" PRIu64
				 "); train on a file that nothing is writing to"),
			       what, c->n, dc.n);
	return true;
}

/* The files' names, and the options corpus_split needs. */
static bool take_inputs(corpus *c, const char *const *paths, size_t npaths, const corpus_options *o,
			av_error *err)
{
	c->pending = calloc(1, sizeof *c->pending);
	c->files = calloc(npaths ? npaths : 1, sizeof *c->files);
	if (!c->pending || !c->files)
		return av_fail(err, _("out of memory"));
	struct corpus_pending *s = c->pending;
	for (size_t i = 0; i < npaths; i++) {
		if (!(c->files[i].path = strdup(paths[i])))
			return av_fail(err, _("out of memory"));
		c->files[i].name = input_name(c->files[i].path);
		c->nfiles = i + 1;
	}
	s->min_count = o->min_count ? o->min_count : 1;
	s->max_vocab = o->max_vocab;
	s->any_encoding = o->any_encoding;
	s->fixed = o->fixed_vocab;
	if (o->fixed_vocab_from && !(c->vocab_from = strdup(o->fixed_vocab_from)))
		return av_fail(err, _("out of memory"));
	s->waiting = o->waiting;
	s->wait_ctx = o->wait_ctx;
	if (o->val_path && !(s->val_path = strdup(o->val_path)))
		return av_fail(err, _("out of memory"));
	return vocab_counter_init(&s->counter, err);
}

bool corpus_read(corpus *c, const char *const *paths, size_t npaths, const corpus_options *o,
		 av_error *err)
{
	memset(c, 0, sizeof *c);
	if (npaths == 0)
		return av_fail(err, _("no corpus file given"));
	pass_source *src = malloc(npaths * sizeof *src);
	pass_io io;
	bool ok = pass_io_init(&io, o, err) && src && take_inputs(c, paths, npaths, o, err);
	if (!src)
		ok = av_fail(err, _("out of memory"));
	for (size_t i = 0; ok && i < npaths; i++)
		src[i] = (pass_source){.spool = -1};
	ok = ok && count_pass(c, src, &io, err) && dense_tables(c->pending, err) &&
	     encode_pass(c, src, &io, err);
	for (size_t i = 0; src && i < c->nfiles; i++)
		if (src[i].spool >= 0)
			close(src[i].spool);
	free(src);
	pass_io_finish(&io);
	if (!ok)
		corpus_finish(c);
	return ok;
}

uint64_t corpus_val_chars(uint64_t n, uint32_t percent)
{
	/* ceil(n * percent / 100) without overflow for any n */
	return n / 100 * percent + (n % 100 * percent + 99) / 100;
}

/* The split; the validation tail's characters leave the counts. */
uint64_t corpus_val_pieces(uint64_t nval)
{
	uint64_t p = nval / CORPUS_PIECE_MIN;
	return p < 1 ? 1 : p > CORPUS_PIECES ? CORPUS_PIECES : p;
}

/* Piece k of the validation split: the end of part k of P equal parts of the
 * text, nval * (k + 1) / P - nval * k / P characters long. */
static void piece(uint64_t n, uint64_t nval, uint64_t P, uint64_t k, uint64_t *at, uint64_t *len)
{
	*len = nval * (k + 1) / P - nval * k / P;
	*at = n * (k + 1) / P - *len;
}

/* The pieces moved after the training text, both in text order. */
static bool gather_pieces(corpus *c, uint64_t nval, av_error *err)
{
	uint64_t P = corpus_val_pieces(nval), w = (uint64_t)c->width;
	uint8_t *ids = c->ids, *val = malloc(nval * w + 1);
	if (!val)
		return av_fail(err, _("out of memory"));
	uint64_t from = 0, to = 0, v = 0; /* in characters */
	for (uint64_t k = 0; k < P; k++) {
		uint64_t at, len;
		piece(c->n, nval, P, k, &at, &len);
		at = at < from ? from : at; /* rounding, when nval is nearly n */
		memmove(ids + to * w, ids + from * w, (at - from) * w);
		to += at - from;
		memcpy(val + v * w, ids + at * w, len * w);
		v += len;
		from = at + len;
	}
	memmove(ids + to * w, ids + from * w, (c->n - from) * w);
	memcpy(ids + (c->n - nval) * w, val, nval * w);
	free(val);
	return true;
}

static bool split(corpus *c, uint64_t nval, av_error *err)
{
	struct corpus_pending *s = c->pending;
	if (nval && !gather_pieces(c, nval, err))
		return false;
	c->nval = nval;
	c->ntrain = c->n - nval;
	for (uint64_t i = c->ntrain; i < c->n; i++) {
		uint32_t cp = s->dense_cp[corpus_id(c, i)];
		s->counter.count[cp]--;
		s->counter.total--;
	}
	for (uint32_t cp = 0; cp < NCP; cp++)
		c->distinct += s->counter.count[cp] != 0;
	return true;
}

/* A fixed vocabulary's unknown training characters: how many, how many
 * distinct, the most frequent (insertion into a short sorted list). */
static void count_unknown(corpus *c)
{
	const struct corpus_pending *s = c->pending;
	uint64_t top_n[CORPUS_UNK_TOP] = {0};
	for (uint32_t k = 0; k < s->ndense; k++) {
		uint32_t cp = s->dense_cp[k];
		uint64_t n = s->counter.count[cp];
		if (!n || vocab_id(&c->vocab, cp) != TOK_UNK)
			continue;
		c->unk_train += n;
		c->unk_distinct++;
		int i = c->nunk_top < CORPUS_UNK_TOP ? c->nunk_top++ : CORPUS_UNK_TOP;
		for (; i > 0 && top_n[i - 1] < n; i--)
			if (i < CORPUS_UNK_TOP) {
				top_n[i] = top_n[i - 1];
				c->unk_top[i] = c->unk_top[i - 1];
			}
		if (i < CORPUS_UNK_TOP) {
			top_n[i] = n;
			c->unk_top[i] = cp;
		}
	}
}

/* The vocabulary from the training split's counts, or the fixed one. */
static bool build_vocab(corpus *c, av_error *err)
{
	struct corpus_pending *s = c->pending;
	if (s->fixed) {
		if (!vocab_init(&c->vocab, s->fixed->cps, s->fixed->size, "vocabulary", err))
			return false;
		count_unknown(c);
		return true;
	}
	if (!vocab_build(&c->vocab, &s->counter, s->min_count, s->max_vocab, err))
		return false;
	if (c->vocab.size <= TOK_NSPECIAL) {
		char what[4200];
		corpus_what(c, what, sizeof what);
		return av_fail(err,
			       _("%s: no character occurs at least --min-count %" PRIu64
				 " times in "
				 "the training split; lower --min-count"),
			       what, s->min_count);
	}
	return true;
}

/* Dense index -> vocabulary id, in place; then the training split's counts
 * per id and the validation characters outside the vocabulary. */
static bool remap_ids(corpus *c, av_error *err)
{
	const struct corpus_pending *s = c->pending;
	uint32_t *remap = malloc((size_t)s->ndense * sizeof *remap);
	c->id_count = calloc(c->vocab.size, sizeof *c->id_count);
	if (!remap || !c->id_count) {
		free(remap);
		return av_fail(err, _("out of memory"));
	}
	for (uint32_t k = 0; k < s->ndense; k++)
		remap[k] = (uint32_t)vocab_id(&c->vocab, s->dense_cp[k]);
	for (uint64_t i = 0; i < c->n; i++) {
		if (c->width == 2) {
			uint16_t *p = (uint16_t *)c->ids + i;
			*p = (uint16_t)remap[*p];
		} else {
			uint32_t *p = (uint32_t *)c->ids + i;
			*p = remap[*p];
		}
	}
	free(remap);
	for (uint64_t i = 0; i < c->ntrain; i++)
		c->id_count[corpus_id(c, i)]++;
	for (uint64_t i = c->ntrain; i < c->n; i++)
		c->unk_val += corpus_id(c, i) == TOK_UNK;
	return true;
}

/* --val-file: its text straight to vocabulary ids after the training split. */
static bool read_val_file(corpus *c, av_error *err)
{
	const struct corpus_pending *s = c->pending;
	corpus_file vf = {.path = s->val_path, .name = input_name(s->val_path)};
	pass_source src = {.spool = -1};
	corpus_options o = {.waiting = s->waiting, .wait_ctx = s->wait_ctx};
	pass_io io;
	val_ctx vc = {.v = &c->vocab, .c = c, .cap = c->n};
	uint32_t last;
	uint64_t count;
	/* One pass, no copy kept: a stream is read as it comes. */
	bool ok = pass_io_init(&io, &o, err);
	if (ok) {
		io.limit = UINT64_MAX;
		ok = clean_source(&vf, &src, true, &io, val_sink, &vc, &last, &count, err);
	}
	if (src.spool >= 0)
		close(src.spool);
	pass_io_finish(&io);
	if (!ok)
		return false;
	c->val_stats = vf.stats;
	c->val_guess = vf.guess;
	if (!check_text(&vf, s->any_encoding, err))
		return false;
	if (c->nval == 0)
		return av_fail(err,
			       _("validation file %s has no text after cleaning; give a non-empty "
				 "--val-file"),
			       AV_Q(vf.name));
	return true;
}

bool corpus_split(corpus *c, uint64_t nval, av_error *err)
{
	struct corpus_pending *s = c->pending;
	if (!s)
		return av_fail(err, _("the corpus was not read (corpus_read) or is already split"));
	if (nval >= c->n || (s->val_path && nval)) {
		char what[4200];
		corpus_what(c, what, sizeof what);
		av_fail(err,
			_("%s: cannot hold out %" PRIu64 " of its %" PRIu64
			  " characters for validation; give a longer text, a smaller --val-share "
			  "or --no-val"),
			what, nval, c->n);
		corpus_finish(c);
		return false;
	}
	c->val_file = s->val_path != NULL;
	bool ok = split(c, nval, err) && build_vocab(c, err) && remap_ids(c, err) &&
		  (!s->val_path || read_val_file(c, err));
	if (ok)
		corpus_hash(c);
	free(s->dense_cp);
	free(s->dense_of);
	free(s->val_path);
	vocab_counter_finish(&s->counter);
	free(s);
	c->pending = NULL;
	if (!ok)
		corpus_finish(c);
	return ok;
}

bool corpus_split_percent(corpus *c, uint32_t percent, av_error *err)
{
	bool val_file = c->pending && c->pending->val_path;
	if (!corpus_split(c, val_file ? 0 : corpus_val_chars(c->n, percent), err))
		return false;
	c->val_percent = val_file ? 0 : percent;
	return true;
}

bool corpus_load(corpus *c, const char *path, const corpus_options *o, av_error *err)
{
	return corpus_read(c, &path, 1, o, err) && corpus_split_percent(c, 5, err);
}

void corpus_finish(corpus *c)
{
	if (!c)
		return;
	if (c->vocab.cps)
		vocab_finish(&c->vocab);
	free(c->ids);
	free(c->id_count);
	free(c->vocab_from);
	for (size_t i = 0; c->files && i < c->nfiles; i++)
		free(c->files[i].path);
	free(c->files);
	if (c->pending) {
		free(c->pending->dense_cp);
		free(c->pending->dense_of);
		free(c->pending->val_path);
		vocab_counter_finish(&c->pending->counter);
		free(c->pending);
	}
	memset(c, 0, sizeof *c);
}
