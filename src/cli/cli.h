/* Entry points of the program's modes. main.c picks the mode from the first
 * mode option it finds (--train, --dump, --info; otherwise the view) and hands
 * the whole argv to that mode, which parses its own options with getopt_long.
 * Each returns the process exit status. */
#ifndef ATTNVIEW_CLI_H
#define ATTNVIEW_CLI_H

#include "attnview/model.h"

/* Exit statuses (documented in attnview(1)). */
enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

int cli_dump(int argc, char **argv);  /* --dump and --info */
int cli_train(int argc, char **argv); /* --train */
int cli_view(int argc, char **argv);  /* the interactive view */

/* --model PATH, or the built-in model when path is NULL. */
model *cli_load_model(const char *path, av_error *err);

/* Print "attnview: <msg>" to stderr. */
void cli_error(const char *msg);

/* Print "attnview: <message>" and "Try '<help>'." to stderr; returns
 * EXIT_USAGE. */
int cli_usage_error(const char *help, const char *fmt, ...) AV_PRINTF(2, 3);

#endif
