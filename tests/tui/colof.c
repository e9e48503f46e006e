/* Where things stand on a terminal line, for the screen tests: tmux
 * capture-pane prints a wide character once, without its second column, so
 * columns must be recomputed with the terminal's widths (the C library's
 * wcwidth, as tmux uses).
 *   colof -f NEEDLE   column (0-based) of the first NEEDLE on each line, or -1
 *   colof -a COL      the character at column COL of each line ("" if none) */
#define _XOPEN_SOURCE 700
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

static int width(wchar_t c)
{
	int w = wcwidth(c);
	return w < 0 ? 1 : w;
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "-f") != 0 && strcmp(argv[1], "-a") != 0)) {
		fprintf(stderr, "usage: colof -f NEEDLE | -a COLUMN  < lines\n");
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
