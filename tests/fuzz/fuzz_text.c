/* Fuzz targets: the tokenizer (cleaner, tokenize_text) and the corpus reader
 * (corpus_load), two targets because corpus_load costs tens of milliseconds
 * (its tables cover every codepoint) and would slow the cleaner's fuzzing. */
#include "fuzz.h"

#include <string.h>
#include <utf8proc.h>

#include "attnview/corpus.h"
#include "attnview/tokenizer.h"

static bool same_stats(const clean_stats *a, const clean_stats *b)
{
	return a->bytes == b->bytes && a->codepoints == b->codepoints && a->invalid == b->invalid &&
	       a->first_invalid == b->first_invalid && a->escapes == b->escapes &&
	       a->controls == b->controls && a->crlf == b->crlf && a->boms == b->boms;
}

/* What the cleaner promises about its output. */
static void check_clean(const cp_buf *out, const clean_stats *st, size_t n)
{
	FUZZ_CHECK(st->bytes == n, "bytes %llu of %zu", (unsigned long long)st->bytes, n);
	FUZZ_CHECK(st->codepoints == out->n, "codepoints %llu, output %zu",
		   (unsigned long long)st->codepoints, out->n);
	FUZZ_CHECK((st->invalid == 0) == (st->first_invalid == UINT64_MAX),
		   "invalid %llu, first at %llu", (unsigned long long)st->invalid,
		   (unsigned long long)st->first_invalid);
	FUZZ_CHECK(st->invalid == 0 || st->first_invalid < n, "first invalid byte %llu of %zu",
		   (unsigned long long)st->first_invalid, n);
	for (size_t i = 0; i < out->n; i++) {
		uint32_t cp = out->v[i];
		FUZZ_CHECK(cp_is_scalar(cp), "non-scalar U+%X at %zu", cp, i);
		FUZZ_CHECK(cp == '\n' || (cp >= 0x20 && cp != 0x7f && !(cp >= 0x80 && cp < 0xa0)),
			   "control U+%04X left at %zu", cp, i);
		FUZZ_CHECK(cp != 0xfeff, "U+FEFF left at %zu", i);
	}
}

/* Short outputs cannot hold a run long enough for the 1024-codepoint NFC
 * pieces, so they must be exactly NFC. */
static void check_nfc(const cp_buf *out)
{
	if (out->n == 0 || out->n > 1024)
		return;
	utf8proc_int32_t *copy = malloc(out->n * sizeof *copy * 4 + 16);
	if (!copy)
		return;
	for (size_t i = 0; i < out->n; i++)
		copy[i] = (utf8proc_int32_t)out->v[i];
	utf8proc_ssize_t k = utf8proc_normalize_utf32(copy, (utf8proc_ssize_t)out->n,
						      UTF8PROC_STABLE | UTF8PROC_COMPOSE);
	FUZZ_CHECK(k >= 0, "utf8proc: %s", utf8proc_errmsg(k));
	bool same = (size_t)k == out->n;
	for (size_t i = 0; same && i < out->n; i++)
		same = (uint32_t)copy[i] == out->v[i];
	free(copy);
	FUZZ_CHECK(same, "output of %zu codepoints is not NFC", out->n);
}

/* Which cleaned characters the split attnview(1) documents holds out:
 * ceil(5%) of them in P pieces (one per 32 held out, 1 to 16), piece k the
 * end of the k-th of P equal parts of the text. The manual's numbers, not
 * corpus.h's: a change to one of them alone breaks the invariant. */
static bool *held_out(size_t n, uint64_t *nval)
{
	uint64_t v = ((uint64_t)n * 5 + 99) / 100;
	uint64_t P = v / 32;
	P = P < 1 ? 1 : P > 16 ? 16 : P;
	bool *out = calloc(n + 1, sizeof *out);
	if (!out)
		return NULL;
	uint64_t from = 0;
	for (uint64_t k = 0; k < P; k++) {
		uint64_t len = v * (k + 1) / P - v * k / P;
		uint64_t end = (uint64_t)n * (k + 1) / P;
		uint64_t at = end - len < from ? from : end - len;
		for (uint64_t i = at; i < at + len; i++)
			out[i] = true;
		from = at + len;
	}
	*nval = v;
	return out;
}

/* Every cleaned character is in the ids: the training split is the text
 * without the held-out pieces, the validation split the pieces, both in
 * text order. */
static void check_corpus(const char *text, size_t n, const cp_buf *want)
{
	const char *path = fuzz_scratch(text, n);
	if (!path)
		return;
	corpus c;
	corpus_options o = {.min_count = 1, .max_vocab = 0};
	av_error err = {{0}};
	if (!corpus_load(&c, path, &o, &err)) {
		FUZZ_CHECK(strstr(err.msg, path), "refusal does not name the file: %s", err.msg);
		return;
	}
	FUZZ_CHECK(c.ntrain + c.nval == want->n, "corpus has %llu+%llu characters, cleaned %zu",
		   (unsigned long long)c.ntrain, (unsigned long long)c.nval, want->n);
	FUZZ_CHECK(c.ntrain > 0, "empty training split accepted");
	uint64_t nval;
	bool *val = held_out(want->n, &nval);
	if (!val) {
		corpus_finish(&c);
		return;
	}
	FUZZ_CHECK(c.nval == nval, "%llu characters held out of %zu, not %llu",
		   (unsigned long long)c.nval, want->n, (unsigned long long)nval);
	uint64_t t = 0, v = c.ntrain;
	for (size_t i = 0; i < want->n; i++) {
		uint64_t at = val[i] ? v++ : t++;
		int32_t id = corpus_id(&c, at);
		FUZZ_CHECK(id >= 0 && (uint32_t)id < c.vocab.size, "id %d at %llu", id,
			   (unsigned long long)at);
		if (!val[i])
			FUZZ_CHECK(c.vocab.cps[id] == want->v[i],
				   "character %zu (training %llu): U+%X, vocabulary says U+%X", i,
				   (unsigned long long)at, want->v[i], c.vocab.cps[id]);
		else
			FUZZ_CHECK(id == TOK_UNK || c.vocab.cps[id] == want->v[i],
				   "character %zu (validation %llu): U+%X, vocabulary says U+%X", i,
				   (unsigned long long)at, want->v[i], c.vocab.cps[id]);
	}
	free(val);
	corpus_finish(&c);
}

int fuzz_text(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	size_t chunk = (size_t)(data[0] & 0x3f) + 1;
	const char *text = (const char *)data + 1;
	size_t n = size - 1;
	av_error err = {{0}};

	cp_buf whole = {0};
	clean_stats st_whole;
	FUZZ_CHECK(clean_text(text, n, &whole, &st_whole, &err), "%s", err.msg);
	check_clean(&whole, &st_whole, n);
	check_nfc(&whole);

	/* The same stream in chunks: same codepoints, same counts. */
	cleaner *c = cleaner_create();
	FUZZ_CHECK(c, "cleaner_create");
	cp_buf parts = {0};
	for (size_t off = 0; off < n; off += chunk) {
		size_t k = n - off < chunk ? n - off : chunk;
		FUZZ_CHECK(cleaner_feed(c, text + off, k, &parts, &err), "%s", err.msg);
	}
	FUZZ_CHECK(cleaner_finish(c, &parts, &err), "%s", err.msg);
	FUZZ_CHECK(parts.n == whole.n, "chunks of %zu: %zu codepoints, whole: %zu", chunk, parts.n,
		   whole.n);
	for (size_t i = 0; i < whole.n; i++)
		FUZZ_CHECK(parts.v[i] == whole.v[i], "chunks of %zu: U+%X at %zu, whole: U+%X",
			   chunk, parts.v[i], i, whole.v[i]);
	FUZZ_CHECK(same_stats(cleaner_stats(c), &st_whole), "chunks of %zu: counts differ", chunk);
	cleaner_destroy(c);

	/* Typed text: refused exactly when it has invalid UTF-8, else the same. */
	cp_buf typed = {0};
	clean_stats st_typed;
	bool ok = tokenize_text(text, n, "--text", &typed, &st_typed, &err);
	FUZZ_CHECK(ok == (st_whole.invalid == 0), "tokenize_text %s with %llu invalid",
		   ok ? "accepted" : "refused", (unsigned long long)st_whole.invalid);
	if (ok) {
		FUZZ_CHECK(typed.n == whole.n, "tokenize_text: %zu codepoints, clean_text: %zu",
			   typed.n, whole.n);
		FUZZ_CHECK(!typed.n || !memcmp(typed.v, whole.v, typed.n * sizeof *typed.v),
			   "tokenize_text and clean_text differ");
	} else {
		FUZZ_CHECK(typed.n == 0, "refused but left %zu codepoints", typed.n);
		FUZZ_CHECK(strstr(err.msg, "--text") && strstr(err.msg, "byte"), "message: %s",
			   err.msg);
	}

	cp_buf_finish(&typed);
	cp_buf_finish(&parts);
	cp_buf_finish(&whole);
	return 0;
}

int fuzz_corpus(const uint8_t *data, size_t n)
{
	cp_buf want = {0};
	av_error err;
	FUZZ_CHECK(clean_text((const char *)data, n, &want, NULL, &err), "%s", err.msg);
	check_corpus((const char *)data, n, &want);
	cp_buf_finish(&want);
	return 0;
}
