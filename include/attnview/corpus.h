/* A training corpus: a UTF-8 file streamed through the cleaner (tokenizer.h),
 * a vocabulary built from its training split, and the whole text encoded as
 * vocabulary ids in memory (2 bytes per character while V <= 65536, else 4).
 *
 * Splits: the training split is the first 95% of the cleaned characters and
 * the validation split the last 5% (rounded up), or, with a validation file,
 * the training split is the whole corpus and the validation split that file.
 * The vocabulary comes from the training split only; validation characters
 * outside it become TOK_UNK.
 *
 * The file is read twice in chunks (it is never held whole): pass 1 counts
 * characters, pass 2 stores each one as a dense index into the distinct
 * characters of pass 1, which is remapped in place to vocabulary ids once the
 * training-split counts are known. Peak memory is the ids plus ~14 MB of
 * tables, whatever the size of the file. */
#ifndef ATTNVIEW_CORPUS_H
#define ATTNVIEW_CORPUS_H

#include "attnview/common.h"
#include "attnview/tokenizer.h"
#include "attnview/vocab.h"

#define CORPUS_CHUNK (1u << 20) /* bytes read and cleaned at a time */

typedef struct corpus_options {
	const char *val_path; /* validation file, or NULL for the last 5% */
	uint64_t min_count;   /* keep characters seen at least this often (>= 1) */
	uint32_t max_vocab;   /* at most this many ids, specials included; 0 = no limit */
} corpus_options;

typedef struct corpus {
	vocab vocab;
	int width; /* bytes per id: 2 or 4 */
	void *ids; /* [ntrain + nval] ids: training split, then validation */
	uint64_t ntrain, nval;
	uint64_t distinct;     /* distinct characters in the training split */
	uint64_t *id_count;    /* [vocab.size] occurrences in the training split */
	uint64_t unk_val;      /* validation characters not in the vocabulary */
	clean_stats stats;     /* cleaning of the corpus file */
	clean_stats val_stats; /* of the validation file (zero without one) */
	uint64_t hash;	       /* FNV-1a over the id values: identifies the data */
} corpus;

/* Read, clean, split and encode `path`. Refuses (false, message saying what to
 * change): an unreadable or non-regular file, an empty file, text that is empty
 * or only whitespace after cleaning, a vocabulary with no character (min_count
 * too high). A corpus of a single distinct character is accepted. */
bool corpus_load(corpus *c, const char *path, const corpus_options *o, av_error *err);
void corpus_finish(corpus *c);

static inline int32_t corpus_id(const corpus *c, uint64_t i)
{
	return c->width == 2 ? (int32_t)((const uint16_t *)c->ids)[i]
			     : (int32_t)((const uint32_t *)c->ids)[i];
}

/* A human-readable account of the cleaning of one file, one sentence, no
 * trailing newline: "corpus.txt: 1234 bytes, 1200 characters; removed 3 ANSI
 * escape sequences and 1 control character; 2 CRLF line ends made LF; ...". */
void clean_stats_summary(const clean_stats *s, const char *what, char *buf, size_t n);

/* Cleaning and split summary of the whole corpus, several lines, each ending
 * in a newline. */
void corpus_summary(const corpus *c, const char *path, char *buf, size_t n);

#endif
