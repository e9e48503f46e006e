/* Helpers of tests/cli/hostile.sh (names and model files must not
 * write control sequences to the terminal).
 *
 *   hostile check [--lines] FILE...
 *     Fails (1), naming the file, the byte and what is there, when a file
 *     holds a byte sequence a terminal could take as a command: a C0
 *     control other than line feed and tab, DEL, a C1 control
 *     (U+0080..U+009F), or anything that is not valid UTF-8. --lines: tabs
 *     fail too (the --info output is "key: value" lines).
 *   hostile model IN OUT
 *     IN with hostile metadata: every C0 control, DEL, every C1 control,
 *     a bidirectional override, quotes, backslashes and Chinese in its name
 *     and corpus description, saved as OUT. The check is textcheck.c's. */
#include "attnview/modelfile.h"
#include "textcheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The bytes around offset i, with every byte outside printable ASCII as
 * <xx>, for the failure message. */
static void context(const unsigned char *s, size_t n, size_t i)
{
	size_t a = i > 24 ? i - 24 : 0, b = i + 24 < n ? i + 24 : n;
	for (size_t k = a; k < b; k++)
		if (s[k] >= 0x20 && s[k] < 0x7F)
			fputc(s[k], stderr);
		else
			fprintf(stderr, "<%02x>", s[k]);
	fputc('\n', stderr);
}

static int check_file(const char *path, bool lines)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "hostile: cannot open %s\n", path);
		return 2;
	}
	size_t cap = 1 << 16, n = 0;
	unsigned char *s = malloc(cap);
	size_t got;
	while (s && (got = fread(s + n, 1, cap - n, f)) > 0)
		if ((n += got) == cap)
			s = realloc(s, cap *= 2);
	fclose(f);
	if (!s)
		return 2;
	const char *bad;
	size_t i = text_check((const char *)s, n, !lines, &bad);
	if (i < n) {
		fprintf(stderr, "%s: byte %zu is %s (0x%02x): ", path, i, bad, s[i]);
		context(s, n, i);
		free(s);
		return 1;
	}
	free(s);
	return 0;
}

static int write_model(const char *in, const char *out)
{
	char name[512], corpus[512];
	size_t k = 0;
	k += (size_t)snprintf(name, sizeof name, "evil\"\\name 名字 ");
	for (int c = 1; c < 0x20; c++)
		name[k++] = (char)c;
	name[k++] = 0x7F;
	memcpy(name + k, "\xe2\x80\xae" "txt.sh", 9);
	k += 9;
	name[k] = '\0';
	k = (size_t)snprintf(corpus, sizeof corpus, "\033]52;c;cHduZWQ=\a\033[2J\033[31m");
	for (int c = 0x80; c <= 0x9F; c++) {
		corpus[k++] = (char)0xC2;
		corpus[k++] = (char)c;
	}
	snprintf(corpus + k, sizeof corpus - k, "\r\n\tcorpus.txt\x1b[0m");
	av_error err;
	model *m = model_load(in, &err);
	if (!m || !model_set_meta_strings(m, name, corpus, &err) || !model_save(m, out, &err)) {
		fprintf(stderr, "hostile: %s\n", err.msg);
		model_destroy(m);
		return 2;
	}
	model_destroy(m);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "model") == 0)
		return write_model(argv[2], argv[3]);
	if (argc < 3 || strcmp(argv[1], "check") != 0) {
		fprintf(stderr, "usage: hostile check [--lines] FILE... | hostile model IN OUT\n");
		return 2;
	}
	bool lines = strcmp(argv[2], "--lines") == 0;
	int status = 0;
	for (int i = lines ? 3 : 2; i < argc; i++) {
		int s = check_file(argv[i], lines);
		status = s > status ? s : status;
	}
	return status;
}
