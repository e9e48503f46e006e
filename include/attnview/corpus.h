/* A training corpus: one or more UTF-8 texts streamed through the cleaner
 * (tokenizer.h), a vocabulary built from its training split, and the whole
 * text encoded as vocabulary ids in memory (2 bytes per character while
 * V <= 65536, else 4).
 *
 * Several files are one text, in the order given: each is cleaned on its
 * own (a byte order mark, an escape sequence or a UTF-8 sequence never spans
 * two files), and a file boundary is a line break: one is added after a file
 * whose text does not end in one (and has a file after it). The added line
 * breaks are characters of the corpus like any other.
 *
 * Inputs: a path, or "-" for standard input; anything that is not a regular
 * file (standard input, a pipe, a FIFO, /dev/stdin, a terminal) is read once
 * as a stream (input.h) and what it gives is kept in an unlinked temporary
 * file in $TMPDIR (else /tmp) for the second pass, at most spool_limit bytes.
 *
 * Splits: nval characters are held out for validation, chosen by
 * corpus_split (corpus_load: 5%, rounded up), as P = corpus_val_pieces(nval)
 * pieces spread over the text: piece k (from 0) is the last
 * nval*(k+1)/P - nval*k/P characters of the part [n*k/P, n*(k+1)/P) of the
 * text, so that a text whose end differs from its start (another language,
 * another author) is validated on all of it. The ids hold the rest, the
 * training split, in text order, then the pieces, in text order (P = 1: the
 * last nval characters). Or, with a validation file, the training split is the
 * whole corpus and the validation split that file. The vocabulary comes from the
 * training split only; validation characters outside it become TOK_UNK.
 *
 * Each file is read twice in chunks (it is never held whole): pass 1 counts
 * characters, pass 2 stores each one as a dense index into the distinct
 * characters of pass 1, which is remapped in place to vocabulary ids once the
 * training-split counts are known. Peak memory is the ids plus ~14 MB of
 * tables, whatever the size of the files. */
#ifndef ATTNVIEW_CORPUS_H
#define ATTNVIEW_CORPUS_H

#include "attnview/common.h"
#include "attnview/encoding.h"
#include "attnview/input.h"
#include "attnview/tokenizer.h"
#include "attnview/vocab.h"

#define CORPUS_UNK_TOP 8	  /* unknown training characters named */
#define CORPUS_CHUNK (1u << 20) /* bytes read and cleaned at a time */
/* The most a stream may give (kept in a temporary file for pass 2). */
#define CORPUS_SPOOL_MAX ((uint64_t)4 << 30)

typedef struct corpus_options {
	const char *val_path;  /* validation file ("-": standard input), or NULL */
	uint64_t min_count;    /* keep characters seen at least this often (>= 1) */
	uint32_t max_vocab;    /* at most this many ids, specials included; 0 = no limit */
	uint64_t spool_limit;  /* bytes kept of each stream; 0: CORPUS_SPOOL_MAX */
	bool any_encoding;     /* train on a file that is mostly not UTF-8 text */
	/* A vocabulary to read the text with instead of building one from the
	 * training split (a model trained on from its weights, --init; a
	 * checkpoint resumed): min_count and max_vocab do not apply, and
	 * characters outside it become TOK_UNK, counted in unk_train. */
	const vocab *fixed_vocab;
	/* Where it comes from, for the summary (a model file); NULL: the
	 * summary reads as for a vocabulary built from the text. */
	const char *fixed_vocab_from;
	input_wait_fn waiting; /* told when a FIFO or pipe keeps us waiting (may be NULL) */
	void *wait_ctx;
} corpus_options;

/* One input of the corpus. */
typedef struct corpus_file {
	char *path;	     /* as given ("-": standard input) */
	const char *name;    /* for messages: the path, or "standard input" */
	clean_stats stats;   /* its cleaning */
	text_encoding guess; /* what its first bytes look like (encoding.h) */
	bool stream;	     /* read once and kept in a temporary file */
} corpus_file;

struct corpus_pending;

typedef struct corpus {
	vocab vocab;
	int width; /* bytes per id: 2 or 4 */
	void *ids; /* [ntrain + nval] ids: training split, then validation */
	uint64_t ntrain, nval;
	uint64_t n;	    /* characters of the corpus files (both splits without a
			       validation file), line breaks between files included */
	uint64_t distinct;  /* distinct characters in the training split */
	uint64_t *id_count; /* [vocab.size] occurrences in the training split */
	uint64_t unk_val;   /* validation characters not in the vocabulary */
	/* With a fixed vocabulary: the training characters outside it, how many
	 * distinct ones, and the most frequent of them (by decreasing count,
	 * ties by codepoint). */
	uint64_t unk_train, unk_distinct;
	uint32_t unk_top[CORPUS_UNK_TOP];
	int nunk_top;
	char *vocab_from;   /* corpus_options.fixed_vocab_from, copied */
	corpus_file *files; /* [nfiles], in order */
	size_t nfiles;
	uint64_t separators;   /* line breaks added between files */
	clean_stats stats;     /* cleaning of all corpus files together */
	clean_stats val_stats; /* of the validation file (zero without one) */
	text_encoding val_guess;
	bool val_file;			/* the validation split is the validation file */
	uint32_t val_percent;		/* the share held out, as corpus_split_percent was asked;
					   0 when corpus_split was given a count */
	uint64_t hash;			/* FNV-1a over the id values: identifies the data */
	struct corpus_pending *pending; /* between corpus_read and corpus_split */
} corpus;

/* Read, clean and encode the corpus files (paths[0..npaths), "-" for standard
 * input) up to the split: c->n is then known, for the caller to choose the
 * split. Refuses (false, message saying what to change): an unreadable file,
 * a directory, a stream beyond spool_limit, a corpus with no bytes, a file
 * that is mostly not UTF-8 text (corpus_not_text; unless o->any_encoding),
 * text that is empty or only whitespace after cleaning. */
bool corpus_read(corpus *c, const char *const *paths, size_t npaths, const corpus_options *o,
		 av_error *err);
/* nval characters (1 <= nval < n, or 0 for no validation) held out in pieces,
 * or with the options' validation file, that file (nval must be 0); then the
 * vocabulary and the ids. Refuses, naming the corpus, an nval out of that
 * range, a vocabulary with no character (min_count too high) and an empty
 * validation file; a refused split releases the corpus. Without corpus_split
 * the corpus is released by corpus_finish. */
bool corpus_split(corpus *c, uint64_t nval, av_error *err);
/* corpus_split of ceil(n * percent / 100) characters (0: none), or
 * of the validation file. */
bool corpus_split_percent(corpus *c, uint32_t percent, av_error *err);
/* The pieces of a validation split of nval characters: one per
 * CORPUS_PIECE_MIN characters, at least 1, at most CORPUS_PIECES. */
#define CORPUS_PIECES	 16
#define CORPUS_PIECE_MIN 32
uint64_t corpus_val_pieces(uint64_t nval);
/* ceil(n * percent / 100). */
uint64_t corpus_val_chars(uint64_t n, uint32_t percent);

/* corpus_read of one file and corpus_split of the last 5% (or the options'
 * validation file). A corpus of a single distinct character is accepted. */
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

/* A file is mostly not UTF-8 text (encoding_not_text, encoding.h): a binary
 * file, or text in another encoding that would train on replacement
 * characters. */
bool corpus_not_text(const clean_stats *st);

/* The encoding warnings of the corpus summary ("warning: ..." lines, each
 * ending in a newline; "" when every file is UTF-8), for repeating beside
 * the verdict. */
void corpus_encoding_warnings(const corpus *c, char *buf, size_t n);

/* With validation text and letters of two writing systems or more (Latin,
 * Han, Cyrillic...), one line ending in a newline: each one's share of the
 * validation split's letters against the training split's ("validation
 * letters by script: Latin 48% (training 51%), Han 52% (training 49%)");
 * else "". */
void corpus_script_shares(const corpus *c, char *buf, size_t n);

/* Cleaning and split summary of the whole corpus, several lines, each ending
 * in a newline: a line per file (and one for all of them when there are
 * several), the validation file's, the split and vocabulary, unknown
 * validation characters, and a warning per file that looks like another
 * encoding than UTF-8 (encoding_hint). */
void corpus_summary(const corpus *c, char *buf, size_t n);

#endif
