/* Corpus loading: the edge cases a user's file can have, each with the
 * message or the counts the user is shown. */
#include "harness.h"

#include "attnview/corpus.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];

static const char *write_tmp(const char *name, const void *data, size_t n)
{
	static char path[256];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, n, f) != n) {
		perror(path);
		exit(1);
	}
	fclose(f);
	return path;
}

static const corpus_options defaults = {.min_count = 1, .max_vocab = 0};

/* Load `text`, expect failure with a message containing `want`. */
static void expect_refused(const char *name, const char *text, size_t n, const char *want)
{
	corpus c;
	av_error err = {{0}};
	const char *p = write_tmp(name, text, n);
	bool ok = corpus_load(&c, p, &defaults, &err);
	CHECKF(!ok, "%s was accepted", name);
	CHECKF(strstr(err.msg, want) != NULL, "%s: message '%s' lacks '%s'", name, err.msg, want);
	CHECKF(strstr(err.msg, p) != NULL, "%s: message '%s' does not name the file", name,
	       err.msg);
	if (ok)
		corpus_finish(&c);
}

static bool load(corpus *c, const char *name, const char *text, size_t n)
{
	av_error err = {{0}};
	bool ok = corpus_load(c, write_tmp(name, text, n), &defaults, &err);
	CHECKF(ok, "%s refused: %s", name, err.msg);
	return ok;
}

/* The whole text as codepoints (ids mapped back through the vocabulary). */
static size_t decode(const corpus *c, uint32_t *out, size_t max)
{
	uint64_t n = c->ntrain + c->nval;
	for (uint64_t i = 0; i < n && i < max; i++)
		out[i] = c->vocab.cps[corpus_id(c, i)];
	return (size_t)n;
}

static void test_refusals(void)
{
	expect_refused("empty.txt", "", 0, "is empty");
	const char blank[] = "  \n\t \n\r\n   \xe3\x80\x80\n";
	expect_refused("blank.txt", blank, sizeof blank - 1, "only whitespace");
	const char esc[] = "\x1b[31m\x1b[0m\x01\x02";
	expect_refused("escapes-only.txt", esc, sizeof esc - 1, "no text left after cleaning");

	corpus c;
	av_error err = {{0}};
	corpus_options hi = {.min_count = 1000, .max_vocab = 0};
	const char *p = write_tmp("rare.txt", "abcabc", 6);
	CHECK(!corpus_load(&c, p, &hi, &err));
	CHECKF(strstr(err.msg, "lower --min-count") != NULL, "message: %s", err.msg);

	CHECK(!corpus_load(&c, dir, &defaults, &err));
	CHECKF(strstr(err.msg, "is a directory") != NULL, "message: %s", err.msg);
	snprintf(err.msg, sizeof err.msg, "%s", "");
	CHECK(!corpus_load(&c, "/nonexistent/corpus.txt", &defaults, &err));
	CHECKF(strstr(err.msg, "/nonexistent/corpus.txt") && strstr(err.msg, "No such file"),
	       "message: %s", err.msg);
}

/* Mostly not text: a binary file and GB18030 text are refused (saying what
 * was found and what to do) unless the caller insists; Latin-1 with a few
 * accents is text with a warning. */
static void test_not_text(void)
{
	uint8_t bin[2000];
	for (size_t i = 0; i < sizeof bin; i++)
		bin[i] = (uint8_t)(i * 37 % 251); /* zeros, controls, high bytes */
	expect_refused("prog.bin", (const char *)bin, sizeof bin, "looks like a binary file");
	const char gb[] = "\xb4\xb2\xc7\xb0\xc3\xf7\xd4\xc2\xb9\xe2\xa3\xac\xd2\xc9\xca"
			  "\xc7\xb5\xd8\xc9\xcf\xcb\xaa\xa1\xa3\n";
	expect_refused("gb.txt", gb, sizeof gb - 1, "is mostly not text");
	expect_refused("gb.txt", gb, sizeof gb - 1, "iconv -f GB18030");
	corpus c;
	av_error err = {{0}};
	corpus_options insist = {.min_count = 1, .any_encoding = true};
	bool ok = corpus_load(&c, write_tmp("gb.txt", gb, sizeof gb - 1), &insist, &err);
	CHECKF(ok, "--any-encoding: %s", err.msg);
	if (ok)
		corpus_finish(&c);
	const char latin[] = "Caf\xe9 cr\xe8me br\xfbl\xe9"
			     "e, na\xefve fa\xe7"
			     "ade.\n";
	CHECK(corpus_not_text(&(clean_stats){.codepoints = 4, .invalid = 2}));
	if (load(&c, "latin.txt", latin, sizeof latin - 1))
		corpus_finish(&c);
}

static void test_one_character(void)
{
	char text[1000];
	memset(text, 'a', sizeof text);
	corpus c;
	if (!load(&c, "one.txt", text, sizeof text))
		return;
	CHECK(c.vocab.size == TOK_NSPECIAL + 1);
	CHECK(c.ntrain == 950 && c.nval == 50);
	CHECK(c.id_count[TOK_NSPECIAL] == 950);
	CHECK(corpus_id(&c, 999) == TOK_NSPECIAL);
	CHECK(c.unk_val == 0);
	corpus_finish(&c);
}

static void test_invalid_utf8(void)
{
	/* 0xff at byte 3, a truncated 2-byte sequence at byte 7. */
	const char text[] = "abc\xff"
			    "def\xc3(gh";
	corpus c;
	if (!load(&c, "invalid.txt", text, sizeof text - 1))
		return;
	CHECK(c.stats.invalid == 2);
	CHECK(c.stats.first_invalid == 3);
	CHECK(vocab_id(&c.vocab, 0xFFFD) >= TOK_NSPECIAL);
	uint32_t cps[32];
	size_t n = decode(&c, cps, 32);
	CHECK(n == 11);
	CHECK(cps[3] == 0xFFFD && cps[7] == 0xFFFD && cps[8] == '(');
	char sum[1024];
	corpus_summary(&c, sum, sizeof sum);
	CHECKF(strstr(sum, "2 invalid UTF-8 sequences replaced by U+FFFD (first at byte 3)"),
	       "summary: %s", sum);
	CHECKF(strstr(sum, "warning: 18% of the characters of ") &&
		   strstr(sum, "/invalid.txt were invalid UTF-8") && strstr(sum, "iconv"),
	       "summary: %s", sum);
	corpus_finish(&c);
}

static void test_escapes_crlf_bom(void)
{
	const char text[] = "\xef\xbb\xbf"
			    "\x1b[1;31mred\x1b[0m text\r\nline\rend\x07\r\n"
			    "\xef\xbb\xbf"; /* a second file's BOM */
	corpus c;
	if (!load(&c, "mixed-bad.txt", text, sizeof text - 1))
		return;
	CHECK(c.stats.boms == 2);
	CHECK(c.stats.escapes == 2);
	CHECK(c.stats.crlf == 3);
	CHECK(c.stats.controls == 1);
	uint32_t cps[64];
	size_t n = decode(&c, cps, 64);
	const char *want = "red text\nline\nend\n";
	CHECK(n == strlen(want));
	bool same = n == strlen(want);
	for (size_t i = 0; same && i < n; i++)
		same = cps[i] == (uint32_t)(unsigned char)want[i];
	CHECKF(same, "cleaned text differs from '%s'", want);
	CHECK(vocab_id(&c.vocab, '\r') == TOK_UNK);
	CHECK(vocab_id(&c.vocab, 0xFEFF) == TOK_UNK);
	char sum[1024];
	corpus_summary(&c, sum, sizeof sum);
	CHECKF(strstr(sum, "removed 2 ANSI escape sequences and 1 control character") &&
		   strstr(sum, "3 CR or CRLF line ends made LF") &&
		   strstr(sum, "2 byte order marks removed"),
	       "summary: %s", sum);
	corpus_finish(&c);
}

/* The split, the vocabulary from the training part only, unknowns in the
 * validation part. */
static void test_split(void)
{
	char text[100];
	memset(text, 'x', 95);
	memcpy(text + 95, "yyyyz", 5);
	corpus c;
	if (!load(&c, "split.txt", text, 100))
		return;
	CHECK(c.ntrain == 95 && c.nval == 5);
	CHECK(c.vocab.size == TOK_NSPECIAL + 1);
	CHECK(c.unk_val == 5);
	CHECK(corpus_id(&c, 99) == TOK_UNK);
	corpus_finish(&c);

	/* Held out in pieces over the whole text: a text in English, then in
	 * Chinese, is validated on both, and the summary says so. */
	char bi[4000];
	size_t nb = 0;
	for (int i = 0; i < 1000; i++)
		bi[nb++] = "ab"[i % 2];
	for (int i = 0; i < 1000; i++, nb += 3)
		memcpy(bi + nb, "\xe6\x9c\x88", 3); /* 月 */
	if (!load(&c, "bilingual.txt", bi, nb))
		return;
	CHECK(c.nval == 100 && corpus_val_pieces(c.nval) == 3);
	uint64_t latin = 0, han = 0;
	for (uint64_t i = c.ntrain; i < c.ntrain + c.nval; i++) {
		latin += c.vocab.cps[corpus_id(&c, i)] < 0x80;
		han += c.vocab.cps[corpus_id(&c, i)] == 0x6708;
	}
	CHECKF(latin >= 33 && han >= 33, "validation: %" PRIu64 " Latin, %" PRIu64 " Han", latin,
	       han);
	CHECK(corpus_id(&c, 0) == vocab_id(&c.vocab, 'a') &&
	      corpus_id(&c, c.ntrain - 1) == vocab_id(&c.vocab, 0x6708));
	char sum[2048];
	corpus_summary(&c, sum, sizeof sum);
	CHECKF(strstr(sum, "(5%, in 3 pieces spread evenly over the text)") &&
		   strstr(sum, "validation letters by script: Latin 33% (training 51%), Han 67%"),
	       "summary: %s", sum);
	corpus_finish(&c);

	/* --val-file: the whole corpus trains, the file validates. */
	char vpath[256];
	snprintf(vpath, sizeof vpath, "%s", write_tmp("val.txt", "xxyq", 4));
	corpus_options vo = {.val_path = vpath, .min_count = 1, .max_vocab = 0};
	av_error err;
	bool ok = corpus_load(&c, write_tmp("train.txt", "xxxxy", 5), &vo, &err);
	CHECKF(ok, "val file: %s", err.msg);
	if (ok) {
		CHECK(c.ntrain == 5 && c.nval == 4);
		CHECK(c.unk_val == 1);
		CHECK(corpus_id(&c, 5) == vocab_id(&c.vocab, 'x'));
		CHECK(corpus_id(&c, 8) == TOK_UNK);
		corpus_finish(&c);
	}
	corpus_options bad = {.val_path = "/nonexistent/v", .min_count = 1, .max_vocab = 0};
	ok = corpus_load(&c, write_tmp("train.txt", "xxxxy", 5), &bad, &err);
	CHECK(!ok && strstr(err.msg, "/nonexistent/v"));

	/* One character cannot give 5% to validation and keep a training text:
	 * refused, naming the file and the ways out, the corpus released (the
	 * fuzz target found the name missing). */
	const char *one = write_tmp("one.txt", "z", 1);
	corpus_options dflt = {.min_count = 1, .max_vocab = 0};
	ok = corpus_load(&c, one, &dflt, &err);
	CHECKF(!ok && strstr(err.msg, one) && strstr(err.msg, "cannot hold out 1 of its 1") &&
		   strstr(err.msg, "--no-val"),
	       "%s", ok ? "accepted" : err.msg);
	CHECK(!c.pending && !c.files);

	/* --max-vocab and --min-count cut the rarest characters. */
	corpus_options lim = {.min_count = 1, .max_vocab = TOK_NSPECIAL + 2};
	ok = corpus_load(&c, write_tmp("lim.txt", "aaaabbbccd\n\n\n\n\n", 15), &lim, &err);
	CHECKF(ok, "max-vocab: %s", err.msg);
	if (ok) {
		CHECK(c.vocab.size == TOK_NSPECIAL + 2);
		CHECK(vocab_id(&c.vocab, 'a') != TOK_UNK && vocab_id(&c.vocab, '\n') != TOK_UNK);
		CHECK(c.id_count[TOK_UNK] == 6);
		corpus_finish(&c);
	}
}

/* Several files are one text: each cleaned on its own, a line break after a
 * file that does not end in one (not after the last, not after an empty
 * one), every character in the vocabulary's counts; the summary has a line
 * per file and one for all. */
static void test_several_files(void)
{
	char p1[256], p2[256], p3[256], p4[256];
	snprintf(p1, sizeof p1, "%s", write_tmp("f1.txt", "ab", 2));
	snprintf(p2, sizeof p2, "%s",
		 write_tmp("f2.txt",
			   "\xef\xbb\xbf"
			   "cd\n",
			   6));
	snprintf(p3, sizeof p3, "%s", write_tmp("f3.txt", "", 0));
	snprintf(p4, sizeof p4, "%s", write_tmp("f4.txt", "\x1b[1mef", 6));
	const char *paths[] = {p1, p2, p3, p4};
	corpus c;
	av_error err = {{0}};
	bool ok = corpus_read(&c, paths, 4, &defaults, &err) && corpus_split(&c, 0, &err);
	CHECKF(ok, "%s", err.msg);
	if (!ok)
		return;
	uint32_t cps[16];
	size_t n = decode(&c, cps, 16);
	const char *want = "ab\ncd\nef";
	CHECK(n == strlen(want) && c.n == n && c.separators == 1 && c.nval == 0);
	bool same = n == strlen(want);
	for (size_t i = 0; same && i < n; i++)
		same = cps[i] == (uint32_t)want[i];
	CHECKF(same, "the text differs from 'ab\\ncd\\nef'");
	CHECK(c.nfiles == 4 && c.files[1].stats.boms == 1 && c.files[3].stats.escapes == 1);
	CHECK(c.stats.boms == 1 && c.stats.escapes == 1 && c.stats.bytes == 14);
	CHECK(c.id_count[vocab_id(&c.vocab, '\n')] == 2);
	char sum[4096];
	corpus_summary(&c, sum, sizeof sum);
	CHECKF(strstr(sum, "f1.txt: 2 bytes") && strstr(sum, "f4.txt: 6 bytes") &&
		   strstr(sum, "corpus: 4 files, 8 characters in all (1 line break added "
			       "between files)") &&
		   strstr(sum, "split: 8 training characters, no validation text"),
	       "summary: %s", sum);
	corpus_finish(&c);

	/* an empty corpus of several files is refused as a whole */
	const char *empty[] = {p3, p3};
	CHECK(!corpus_read(&c, empty, 2, &defaults, &err));
	CHECKF(strstr(err.msg, "the corpus (2 files) is empty"), "%s", err.msg);
	CHECK(corpus_val_chars(29891, 5) == 1495 && corpus_val_chars(100, 5) == 5 &&
	      corpus_val_chars(1, 5) == 1 && corpus_val_chars(301, 0) == 0);
}

/* A stream (a pipe by name, as standard input or <(...) give it) is kept
 * for the second pass: the same corpus as from a file; beyond the limit it
 * is refused, saying so. */
static void test_stream(void)
{
	const char text[] = "streamed text, streamed twice\n";
	int p[2];
	if (pipe(p) != 0)
		return;
	CHECK(write(p[1], text, sizeof text - 1) == (ssize_t)(sizeof text - 1));
	close(p[1]);
	char path[64];
	snprintf(path, sizeof path, "/dev/fd/%d", p[0]);
	const char *paths[] = {path};
	corpus c, f;
	av_error err = {{0}};
	bool ok = corpus_read(&c, paths, 1, &defaults, &err) && corpus_split_percent(&c, 5, &err);
	CHECKF(ok, "%s", err.msg);
	close(p[0]);
	if (ok && load(&f, "stream.txt", text, sizeof text - 1)) {
		CHECK(c.files[0].stream && !f.files[0].stream);
		CHECK(c.hash == f.hash && c.ntrain == f.ntrain && c.nval == f.nval);
		corpus_finish(&f);
	}
	if (ok)
		corpus_finish(&c);

	if (pipe(p) != 0)
		return;
	char big[3000];
	memset(big, 'x', sizeof big);
	CHECK(write(p[1], big, sizeof big) == (ssize_t)sizeof big);
	close(p[1]);
	snprintf(path, sizeof path, "/dev/fd/%d", p[0]);
	corpus_options lim = {.min_count = 1, .spool_limit = 1000};
	CHECK(!corpus_read(&c, paths, 1, &lim, &err));
	CHECKF(strstr(err.msg, "gave more than") && strstr(err.msg, "save the text to a file"),
	       "%s", err.msg);
	close(p[0]);
}

/* Characters that straddle the 1 MiB chunks come out whole. */
static void test_chunks(void)
{
	const char unit[] = "你好世界 "; /* 4 x 3 bytes + 1: 13 bytes, 5 characters */
	size_t reps = (CORPUS_CHUNK * 2) / 13 + 7;
	size_t n = reps * 13 + 2;
	char *text = malloc(n);
	text[0] = 'a';
	text[1] = 'b'; /* shifts the units off the chunk boundary */
	for (size_t i = 0; i < reps; i++)
		memcpy(text + 2 + i * 13, unit, 13);
	corpus c;
	if (load(&c, "big.txt", text, n)) {
		CHECK(c.ntrain + c.nval == reps * 5 + 2);
		CHECK(c.stats.invalid == 0);
		CHECK(c.vocab.size == TOK_NSPECIAL + 7);
		CHECK(c.width == 2);
		uint32_t cps[16];
		decode(&c, cps, 16);
		CHECK(cps[2] == 0x4F60 && cps[6] == ' ');
		corpus_finish(&c);
	}
	free(text);
}

/* More than 65533 distinct characters: ids need 4 bytes. */
static void test_wide_vocab(void)
{
	size_t cap = 80000 * 4 * 3, n = 0;
	char *text = malloc(cap);
	for (uint32_t cp = 0x20000; cp < 0x2A6D0; cp++)
		n += cp_to_utf8(cp, text + n);
	for (uint32_t cp = 0x4E00; cp < 0x9FA0; cp++)
		n += cp_to_utf8(cp, text + n);
	for (uint32_t cp = 0x2A700; cp < 0x2B700; cp++)
		n += cp_to_utf8(cp, text + n);
	/* Three times: each character of a validation piece also occurs a third
	 * of the text away, outside every piece, so none is unknown. */
	memcpy(text + n, text, n);
	memcpy(text + 2 * n, text, n);
	n *= 3;
	corpus c;
	if (load(&c, "wide.txt", text, n)) {
		CHECK(c.width == 4);
		CHECK(c.vocab.size > 65536);
		CHECK(c.unk_val == 0);
		uint32_t first[2];
		decode(&c, first, 2);
		CHECK(first[0] == 0x20000 && first[1] == 0x20001);
		CHECK(c.vocab.cps[corpus_id(&c, c.ntrain + c.nval - 1)] != 0);
		corpus_finish(&c);
	}
	free(text);
}

int main(void)
{
	snprintf(dir, sizeof dir, "/tmp/attnview-corpus-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_refusals();
	test_not_text();
	test_one_character();
	test_invalid_utf8();
	test_escapes_crlf_bom();
	test_split();
	test_several_files();
	test_stream();
	test_chunks();
	test_wide_vocab();
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return test_summary("corpus");
}
