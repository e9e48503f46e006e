/* attnview --completions bash|zsh|fish: the shell completion scripts, written
 * from the option table (options.c) and the name tables the parsers read, so
 * that a new option or value is completed without touching this file. The
 * build writes the three scripts and meson install puts them where the
 * shells look (src/meson.build). */
#ifndef ATTNVIEW_CLI_COMPLETIONS_H
#define ATTNVIEW_CLI_COMPLETIONS_H

#include <stdio.h>

/* The script for `shell` ("bash", "zsh", "fish") to out; the exit status
 * (2, with a message, for a shell it does not know). */
int cli_completions(FILE *out, const char *shell);

#endif
