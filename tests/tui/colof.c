/* Where things stand on a terminal line, for the screen tests: tmux
 * capture-pane prints a wide character once, without its second column, so
 * columns must be recomputed with the terminal's widths (the C library's
 * wcwidth, as tmux uses).
 *   colof -f NEEDLE   column (0-based) of the first NEEDLE on each line, or -1
 *   colof -a COL      the character at column COL of each line ("" if none)
 *   colof -b FROM TO  from lines with their colours (capture-pane -e): the
 *                     background of each cell in columns [FROM, TO), as
 *                     "5:N" (256 colours), "2:R,G,B" (24-bit), "a:N" (ANSI) or
 *                     "-" (default), space-separated, a line per line */
#define _XOPEN_SOURCE 700
#include <locale.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

static int width(wchar_t c)
{
	int w = wcwidth(c);
	return w < 0 ? 1 : w;
}

/* SGR parameters p[0..n) change the background bg. */
static void sgr(const long *p, int n, char *bg, size_t size)
{
	if (n == 0) {
		snprintf(bg, size, "-");
		return;
	}
	for (int i = 0; i < n; i++) {
		if (p[i] == 0 || p[i] == 49) {
			snprintf(bg, size, "-");
		} else if ((p[i] >= 40 && p[i] <= 47) || (p[i] >= 100 && p[i] <= 107)) {
			snprintf(bg, size, "a:%ld", p[i]);
		} else if ((p[i] == 38 || p[i] == 48) && i + 1 < n) {
			bool back = p[i] == 48;
			if (p[i + 1] == 5 && i + 2 < n) {
				if (back)
					snprintf(bg, size, "5:%ld", p[i + 2]);
				i += 2;
			} else if (p[i + 1] == 2 && i + 4 < n) {
				if (back)
					snprintf(bg, size, "2:%ld,%ld,%ld", p[i + 2], p[i + 3],
						 p[i + 4]);
				i += 4;
			}
		}
	}
}

/* Backgrounds of the cells in [from, to) of one line with its escapes. */
static void backgrounds(const char *line, long from, long to)
{
	char bg[32] = "-";
	long x = 0;
	const char *s = line;
	mbstate_t ms;
	memset(&ms, 0, sizeof ms);
	bool first = true;
	while (*s && x < to) {
		if (s[0] == '\033' && s[1] == '[') {
			long p[32];
			int n = 0;
			s += 2;
			while (*s && (*s == ';' || (*s >= '0' && *s <= '9'))) {
				char *end;
				long v = strtol(s, &end, 10);
				if (end == s)
					v = 0;
				if (n < 32)
					p[n++] = v;
				s = *end == ';' ? end + 1 : end;
			}
			if (*s == 'm')
				sgr(p, n, bg, sizeof bg);
			if (*s)
				s++;
			continue;
		}
		wchar_t wc;
		size_t len = mbrtowc(&wc, s, strlen(s), &ms);
		if (len == (size_t)-1 || len == (size_t)-2 || len == 0) {
			memset(&ms, 0, sizeof ms);
			len = 1;
			wc = L'?';
		}
		s += len;
		int w = width(wc);
		for (int i = 0; i < w; i++, x++)
			if (x >= from && x < to) {
				printf("%s%s", first ? "" : " ", bg);
				first = false;
			}
	}
	/* Trailing cells tmux did not print have the default background. */
	for (; x < to; x++)
		if (x >= from) {
			printf("%s-", first ? "" : " ");
			first = false;
		}
	printf("\n");
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "-b") == 0) {
		if (!setlocale(LC_ALL, "C.UTF-8") && !setlocale(LC_ALL, ""))
			return 2;
		char line[65536];
		while (fgets(line, sizeof line, stdin)) {
			line[strcspn(line, "\n")] = '\0';
			backgrounds(line, strtol(argv[2], NULL, 10), strtol(argv[3], NULL, 10));
		}
		return 0;
	}
	if (argc != 3 || (strcmp(argv[1], "-f") != 0 && strcmp(argv[1], "-a") != 0)) {
		fprintf(stderr, "usage: colof -f NEEDLE | -a COLUMN | -b FROM TO  < lines\n");
		return 2;
	}
	if (!setlocale(LC_ALL, "C.UTF-8") && !setlocale(LC_ALL, ""))
		return 2;
	wchar_t needle[256];
	if (mbstowcs(needle, argv[2], 256) == (size_t)-1)
		return 2;
	long col = strtol(argv[2], NULL, 10);
	char line[8192];
	wchar_t w[8192];
	while (fgets(line, sizeof line, stdin)) {
		line[strcspn(line, "\n")] = '\0';
		size_t n = mbstowcs(w, line, 8191);
		if (n == (size_t)-1)
			n = 0;
		w[n] = 0;
		if (argv[1][1] == 'f') {
			wchar_t *hit = wcsstr(w, needle);
			long x = -1;
			if (hit) {
				x = 0;
				for (wchar_t *p = w; p < hit; p++)
					x += width(*p);
			}
			printf("%ld\n", x);
		} else {
			long x = 0;
			size_t i = 0;
			while (i < n && x + width(w[i]) <= col) {
				x += width(w[i]);
				i++;
			}
			if (i < n && x == col)
				printf("%lc\n", (wint_t)w[i]);
			else
				printf("\n");
		}
	}
	return 0;
}
