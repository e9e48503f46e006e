/* Streaming a corpus file into vocabulary ids (corpus.h has the plan). */
#include "attnview/corpus.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utf8proc.h>

#define NCP 0x110000u

/* Called with each run of cleaned codepoints a pass produces. */
typedef bool (*cp_sink)(void *ctx, const uint32_t *cps, size_t n, av_error *err);

/* Stream `path` through a fresh cleaner in CORPUS_CHUNK pieces. */
static bool clean_file(const char *path, cp_sink sink, void *ctx, clean_stats *stats, av_error *err)
{
	/* O_NONBLOCK: opening a FIFO must not wait for a writer before the
	 * S_ISREG check refuses it (it has no effect on regular files). */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
	if (!f) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return av_fail_errno(err, e, "cannot open corpus %s", path);
	}
	struct stat st;
	if (fstat(fileno(f), &st) != 0) {
		int e = errno;
		fclose(f);
		return av_fail_errno(err, e, "cannot stat corpus %s", path);
	}
	if (!S_ISREG(st.st_mode)) {
		fclose(f);
		return av_fail(err,
			       "%s is not a regular file: the corpus is read twice, so give "
			       "a file (save a pipe's output to a file first)",
			       path);
	}
	char *buf = malloc(CORPUS_CHUNK);
	cleaner *cl = cleaner_create();
	cp_buf out = {0};
	bool ok = buf && cl;
	if (!ok)
		av_fail(err, "out of memory reading %s", path);
	while (ok) {
		size_t got = fread(buf, 1, CORPUS_CHUNK, f);
		if (got == 0) {
			if (ferror(f))
				ok = av_fail_errno(err, errno, "cannot read corpus %s", path);
			break;
		}
		out.n = 0;
		ok = cleaner_feed(cl, buf, got, &out, err) && sink(ctx, out.v, out.n, err);
	}
	if (ok) {
		out.n = 0;
		ok = cleaner_finish(cl, &out, err) && sink(ctx, out.v, out.n, err);
	}
	if (ok && stats)
		*stats = *cleaner_stats(cl);
	cp_buf_free(&out);
	cleaner_destroy(cl);
	free(buf);
	fclose(f);
	return ok;
}

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
			       "%s changed while it was being read: it grew; train on a file "
			       "that nothing is writing to",
			       d->path);
	for (size_t i = 0; i < n; i++) {
		uint32_t x = cps[i] < NCP ? d->dense_of[cps[i]] : UINT32_MAX;
		if (x == UINT32_MAX)
			return av_fail(err,
				       "%s changed while it was being read: a new character "
				       "appeared; train on a file that nothing is writing to",
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
			return av_fail(err,
				       "out of memory storing the validation file (%" PRIu64
				       " characters)",
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

/* What corpus_load carries from one phase to the next. */
typedef struct load_state {
	vocab_counter counter; /* occurrences of every codepoint */
	uint32_t *dense_of;    /* [NCP]: codepoint -> dense index, UINT32_MAX if unseen */
	uint32_t *dense_cp;    /* [ndense]: dense index -> codepoint */
	uint32_t ndense;       /* distinct characters in the file */
	uint64_t n;	       /* characters in the file */
} load_state;

/* Pass 1: how many characters, which ones; a file with nothing to learn is
 * refused. */
static bool count_pass(corpus *c, load_state *s, const char *path, av_error *err)
{
	count_ctx cc = {.counter = &s->counter};
	if (!clean_file(path, count_sink, &cc, &c->stats, err))
		return false;
	s->n = s->counter.total;
	if (c->stats.bytes == 0)
		return av_fail(err,
			       "%s is empty: there is nothing to train on; give a UTF-8 text file "
			       "(a few MB of prose trains a model worth looking at)",
			       path);
	if (s->n == 0)
		return av_fail(err,
			       "%s has no text left after cleaning (%" PRIu64 " bytes: %" PRIu64
			       " escape sequences, %" PRIu64 " control characters and %" PRIu64
			       " byte order marks removed); give a UTF-8 text file",
			       path, c->stats.bytes, c->stats.escapes, c->stats.controls,
			       c->stats.boms);
	if (cc.nonblank == 0)
		return av_fail(err,
			       "%s contains only whitespace (%" PRIu64 " characters): there is "
			       "nothing to learn; give a text file with words in it",
			       path, s->n);
	return true;
}

/* Dense indices, in codepoint order, of the characters actually seen. */
static bool dense_tables(load_state *s, av_error *err)
{
	s->dense_of = malloc(NCP * sizeof *s->dense_of);
	if (!s->dense_of)
		return av_fail(err, "out of memory");
	s->ndense = 0;
	for (uint32_t cp = 0; cp < NCP; cp++)
		s->dense_of[cp] = s->counter.count[cp] ? s->ndense++ : UINT32_MAX;
	s->dense_cp = malloc((size_t)s->ndense * sizeof *s->dense_cp);
	if (!s->dense_cp)
		return av_fail(err, "out of memory");
	for (uint32_t cp = 0; cp < NCP; cp++)
		if (s->dense_of[cp] != UINT32_MAX)
			s->dense_cp[s->dense_of[cp]] = cp;
	return true;
}

/* Pass 2: the text as dense indices, in c->ids. */
static bool encode_pass(corpus *c, load_state *s, const char *path, av_error *err)
{
	/* The vocabulary has at most ndense + specials ids, so the width chosen
	 * here holds both the dense indices and the final ids. */
	c->width = (uint64_t)s->ndense + TOK_NSPECIAL <= 65536u ? 2 : 4;
	if (s->n > SIZE_MAX / (size_t)c->width)
		return av_fail(err, "%s is too large to hold in memory (%" PRIu64 " characters)",
			       path, s->n);
	dense_ctx dc = {.dense_of = s->dense_of, .width = c->width, .cap = s->n, .path = path};
	dc.ids = malloc((size_t)s->n * (size_t)c->width);
	if (!dc.ids)
		return av_fail(err,
			       "out of memory: %s has %" PRIu64 " characters, which need %" PRIu64
			       " MB as ids",
			       path, s->n, s->n * (uint64_t)c->width >> 20);
	c->ids = dc.ids;
	clean_stats again;
	if (!clean_file(path, dense_sink, &dc, &again, err))
		return false;
	if (dc.n != s->n)
		return av_fail(err,
			       "%s changed while it was being read (%" PRIu64
			       " characters, then %" PRIu64
			       "); train on a file that nothing is writing to",
			       path, s->n, dc.n);
	return true;
}

/* The split; the validation tail's characters leave the counts. */
static void split(corpus *c, load_state *s, bool val_file)
{
	if (val_file) {
		c->ntrain = s->n;
	} else {
		c->nval = (s->n + 19) / 20;
		c->ntrain = s->n - c->nval;
		for (uint64_t i = c->ntrain; i < s->n; i++) {
			uint32_t cp = s->dense_cp[corpus_id(c, i)];
			s->counter.count[cp]--;
			s->counter.total--;
		}
	}
	for (uint32_t cp = 0; cp < NCP; cp++)
		c->distinct += s->counter.count[cp] != 0;
}

/* The vocabulary from the training split's counts. */
static bool build_vocab(corpus *c, load_state *s, const corpus_options *o, const char *path,
			av_error *err)
{
	if (!vocab_build(&c->vocab, &s->counter, o->min_count ? o->min_count : 1, o->max_vocab,
			 err))
		return false;
	if (c->vocab.size <= TOK_NSPECIAL)
		return av_fail(err,
			       "%s: no character occurs at least --min-count %" PRIu64 " times in "
			       "the training split; lower --min-count",
			       path, o->min_count);
	return true;
}

/* Dense index -> vocabulary id, in place; then the training split's counts
 * per id and the validation characters outside the vocabulary. */
static bool remap_ids(corpus *c, const load_state *s, av_error *err)
{
	uint32_t *remap = malloc((size_t)s->ndense * sizeof *remap);
	c->id_count = calloc(c->vocab.size, sizeof *c->id_count);
	if (!remap || !c->id_count) {
		free(remap);
		return av_fail(err, "out of memory");
	}
	for (uint32_t k = 0; k < s->ndense; k++)
		remap[k] = (uint32_t)vocab_id(&c->vocab, s->dense_cp[k]);
	for (uint64_t i = 0; i < s->n; i++) {
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
	for (uint64_t i = c->ntrain; i < s->n; i++)
		c->unk_val += corpus_id(c, i) == TOK_UNK;
	return true;
}

/* --val-file: its text straight to vocabulary ids after the training split. */
static bool read_val_file(corpus *c, const char *val_path, uint64_t cap, av_error *err)
{
	val_ctx vc = {.v = &c->vocab, .c = c, .cap = cap};
	if (!clean_file(val_path, val_sink, &vc, &c->val_stats, err))
		return false;
	if (c->nval == 0)
		return av_fail(err,
			       "validation file %s has no text after cleaning; give a non-empty "
			       "--val-file",
			       val_path);
	return true;
}

bool corpus_load(corpus *c, const char *path, const corpus_options *o, av_error *err)
{
	memset(c, 0, sizeof *c);
	load_state s = {0};
	if (!vocab_counter_init(&s.counter, err))
		return false;
	bool ok =
	    count_pass(c, &s, path, err) && dense_tables(&s, err) && encode_pass(c, &s, path, err);
	if (ok) {
		split(c, &s, o->val_path != NULL);
		ok = build_vocab(c, &s, o, path, err) && remap_ids(c, &s, err) &&
		     (!o->val_path || read_val_file(c, o->val_path, s.n, err));
	}
	if (ok)
		corpus_hash(c);
	free(s.dense_cp);
	free(s.dense_of);
	vocab_counter_finish(&s.counter);
	if (!ok)
		corpus_finish(c);
	return ok;
}

void corpus_finish(corpus *c)
{
	if (!c)
		return;
	if (c->vocab.cps)
		vocab_finish(&c->vocab);
	free(c->ids);
	free(c->id_count);
	memset(c, 0, sizeof *c);
}

static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

void clean_stats_summary(const clean_stats *s, const char *what, char *buf, size_t n)
{
	size_t k = 0;
#define ADD(...)                                                                                   \
	do {                                                                                       \
		if (k < n) {                                                                       \
			int r_ = snprintf(buf + k, n - k, __VA_ARGS__);                            \
			k += r_ > 0 ? (size_t)r_ : 0;                                              \
		}                                                                                  \
	} while (0)
	ADD("%s: %" PRIu64 " %s, %" PRIu64 " %s", what, s->bytes, plural(s->bytes, "byte", "bytes"),
	    s->codepoints, plural(s->codepoints, "character", "characters"));
	if (s->escapes || s->controls) {
		ADD("; removed");
		if (s->escapes)
			ADD(" %" PRIu64 " ANSI escape %s", s->escapes,
			    plural(s->escapes, "sequence", "sequences"));
		if (s->escapes && s->controls)
			ADD(" and");
		if (s->controls)
			ADD(" %" PRIu64 " control %s", s->controls,
			    plural(s->controls, "character", "characters"));
	}
	if (s->crlf)
		ADD("; %" PRIu64 " CR or CRLF line %s made LF", s->crlf,
		    plural(s->crlf, "end", "ends"));
	if (s->invalid)
		ADD("; %" PRIu64 " invalid UTF-8 %s replaced by U+FFFD (first at byte %" PRIu64 ")",
		    s->invalid, plural(s->invalid, "sequence", "sequences"), s->first_invalid);
	if (s->boms == 1)
		ADD("; byte order mark removed");
	else if (s->boms)
		ADD("; %" PRIu64 " byte order marks removed", s->boms);
	if (!s->escapes && !s->controls && !s->crlf && !s->invalid && !s->boms)
		ADD("; clean");
#undef ADD
	if (k >= n && n > 0)
		buf[n - 1] = '\0';
}

void corpus_summary(const corpus *c, const char *path, char *buf, size_t n)
{
	char line[512];
	size_t k = 0;
	if (n == 0)
		return;
	buf[0] = '\0';
	clean_stats_summary(&c->stats, path, line, sizeof line);
	k += (size_t)snprintf(buf + k, n - k, "%s\n", line);
	if (k < n && c->val_stats.bytes) {
		clean_stats_summary(&c->val_stats, "validation file", line, sizeof line);
		k += (size_t)snprintf(buf + k, n - k, "%s\n", line);
	}
	uint64_t kept = 0;
	for (uint32_t i = TOK_NSPECIAL; i < c->vocab.size; i++)
		kept += c->id_count[i];
	if (k < n)
		k += (size_t)snprintf(buf + k, n - k,
				      "split: %" PRIu64 " training and %" PRIu64 " validation "
				      "characters%s; vocabulary: %u ids (%u characters of %" PRIu64
				      " distinct, covering %.2f%% of the training text)\n",
				      c->ntrain, c->nval,
				      c->val_stats.bytes ? " (from the validation file)"
							 : " (last 5%)",
				      c->vocab.size, c->vocab.size - TOK_NSPECIAL, c->distinct,
				      c->ntrain ? 100.0 * (double)kept / (double)c->ntrain : 0.0);
	if (k < n && c->unk_val) {
		int r = snprintf(buf + k, n - k,
				 "%" PRIu64
				 " validation characters are outside the vocabulary (unknown)\n",
				 c->unk_val);
		k += r > 0 ? (size_t)r : 0;
	}
	/* Many replacements mean a legacy encoding, not a few damaged bytes. */
	if (k < n && c->stats.invalid * 100 > c->stats.codepoints)
		snprintf(buf + k, n - k,
			 "warning: %.0f%% of the characters of %s were invalid UTF-8: if it is in "
			 "another encoding, convert it first (iconv -f LATIN1 -t UTF-8, or GB18030 "
			 "for Chinese)\n",
			 100.0 * (double)c->stats.invalid / (double)c->stats.codepoints, path);
}
