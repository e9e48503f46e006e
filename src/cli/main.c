/* attnview: see multi-head self-attention in a terminal.
 * main() makes sure OpenBLAS runs a fast kernel, then hands argv to the mode
 * the options ask for. */
#include "attnview/blas.h"
#include "attnview/figure.h"
#include "attnview/i18n.h"
#include "cli.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <utf8proc.h>

#ifndef ATTNVIEW_VERSION
#define ATTNVIEW_VERSION "unknown"
#endif

/* The help, a paragraph a message (translated one by one). */
static const char *const help_text[] = {
    N_("Usage: attnview [--model FILE] [--text TEXT] [--layer L] [--head H] [--scale S]\n"
       "                [--colormap R] [--cells C] [--no-panel] [--show WHAT]\n"
       "                [--figure-dir DIR] [--figure-format svg|png|pdf]\n"
       "                [--temperature T] [--top-k K] [--seed S]\n"
       "       attnview --dump [--format json|tsv] (--text TEXT | --input FILE) [--model FILE]\n"
       "                [--layer N] [--head N] [--top K] [--query I --key J] [--contributions]\n"
       "                [--aggregates] [--rollout] [--words] [--compare TEXT2]\n"
       "                [--ablate L.H[,L.H...]] [--generate N [--temperature T] [--top-k K]\n"
       "                [--seed S]]\n"
       "       attnview --export FILE.svg|.png|.pdf (--text TEXT | --input FILE) [--model FILE]\n"
       "                [--layer L] [--head H] [--show S | --overview | --rollout] [--words]\n"
       "                [--compare TEXT2] [--scale S] [--colormap R] [--values] [--title T]\n"
       "                [--force]\n"
       "       attnview --info [--model FILE]\n"
       "       attnview --train CORPUS [CORPUS...] [-o OUT] [options]\n"
       "\n"),
    N_("See multi-head self-attention: type Chinese or English text and watch every\n"
       "head of a small transformer attend, character by character.\n"
       "\n"),
    N_("Interactive view (the default):\n"
       "  --model FILE      model to use (default: the built-in model); reloaded when\n"
       "                    replaced, e.g. by a --train run writing FILE or FILE.ckpt;\n"
       "                    builtin, builtin-causal: the built-in models (the second\n"
       "                    predicts the next character and writes text: Ctrl-G)\n"
       "  --text TEXT       start with this text in the input line\n"
       "  --layer L, --head H  start on this head (numbered from 0, as --dump)\n"
       "  --scale S         colour scale: row (default: each row to its maximum),\n"
       "                    fixed (0..1), head (to the head's maximum), log (.001..1)\n"
       "  --colormap R      viridis (default) or cividis (for colour-blind viewers)\n"
       "  --cells C         fit (default: as large as the screen allows), scroll, compact\n"
       "  --no-panel        start with the details panel hidden\n"
       "  --show WHAT       head (default), or a summary of the layer's heads: mean, max,\n"
       "                    rollout (through the layer), all (every head's mean)\n"
       "  --temperature T, --top-k K, --seed S  how the model writes (Ctrl-G): at\n"
       "                    temperature T (0.8; 0: greedy) among the K most likely\n"
       "                    characters (20; 0: all), seed S (1)\n"
       "  --figure-dir DIR, --figure-format F  where Ctrl-S writes figures of the view,\n"
       "                    and as what: png (default), svg or pdf\n"
       "                    (keys: press F1 in the view, or see attnview(1); a printable\n"
       "                    key always types, Ctrl-Q quits)\n"
       "\n"),
    N_("Non-interactive:\n"
       "  --dump            print the tokens and every attention weight\n"
       "  --format FMT      json (default) or tsv (one row per weight)\n"
       "  --text TEXT       the text to run (invalid UTF-8 is an error)\n"
       "  --input FILE      read the text from FILE, - for standard input (invalid UTF-8\n"
       "                    is replaced; text in another encoding gets an iconv hint)\n"
       "  --layer N, --head N  only this layer / head (numbered from 0)\n"
       "  --top K           top-K predictions per position in JSON (default 5, 0 = none)\n"
       "  --query I --key J the q·k breakdown of that cell in every head shown\n"
       "  --contributions   value norms and contributions A[i][j]·|v_j W_O| of every head\n"
       "  --aggregates, --rollout  the mean/max of each layer's heads; attention rollout\n"
       "  --words           word attention (words at spaces/punctuation and at '|')\n"
       "  --compare TEXT2   this text's weights minus TEXT2's, by position\n"
       "  --ablate L.H,...  switch heads off; adds the loss before and after\n"
       "  --generate N      a causal model writes N characters after the text first\n"
       "                    (with --temperature, --top-k, --seed as in the view)\n"
       "  --info            print the model's header: sizes, vocabulary, training\n"
       "\n"),
    N_("Figures (attnview --export FILE; the format follows the extension):\n"
       "  --export FILE     write FILE.svg, FILE.png or FILE.pdf: a heatmap with its labels,\n"
       "                    colour bar and title, from the numbers --dump prints\n"
       "  --text, --input, --model, --layer, --head   as for --dump\n"
       "  --show S          head (default), mean or max of the layer's heads, rollout\n"
       "                    (through --layer, default the last), all (the mean of every\n"
       "                    head), overview (every head, a tile each, with its role)\n"
       "  --overview, --rollout   the same as --show overview, --show rollout\n"
       "  --words           words instead of characters; '|' in the text marks where a\n"
       "                    word starts (and is not read by the model)\n"
       "  --compare TEXT2   the difference: the text's weights minus TEXT2's, by position\n"
       "  --scale S, --colormap R   as in the view (default row, viridis)\n"
       "  --values          print the weights in the cells\n"
       "  --title T         the figure's title instead of the one made for it\n"
       "  --force           replace FILE if it exists (otherwise it is left untouched)\n"
       "\n"),
    N_("Training (attnview --train CORPUS...; several files are one text, - is standard\n"
       "input; a short text shrinks the options that do not fit it, and says so):\n"
       "  -o, --output FILE   where to write the model (default model.attn)\n"
       "  --objective masked|causal   masked characters (default) or next character\n"
       "  --dim D  --heads N  --layers L  --context T   model size\n"
       "  --batch B  --steps N | --epochs N  --lr X  --warmup N  --seed S  --threads N\n"
       "  --min-count N  --max-vocab N  --val-file FILE  --val-share P  --no-val\n"
       "  --eval-every N  --patience N  --checkpoint-every N  --resume CHECKPOINT\n"
       "  Every evaluation says whether the model beats the unigram baseline.\n"
       "  Ctrl-C writes a checkpoint; --resume continues from it.\n"
       "  attnview --train --help lists the training options with their defaults.\n"
       "\n"),
    N_("  -h, --help        show this help\n"
       "  -V, --version     show the version, OpenBLAS build and kernel\n"
       "\n"),
    N_("Exit status: 0 success, 1 runtime error (bad file or input), 2 usage error.\n"
       "Model file format and the exact computation: man 5 attnview.\n"),
};

static bool is_opt(const char *arg, const char *name)
{
	size_t n = strlen(name);
	return strncmp(arg, name, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

int main(int argc, char **argv)
{
	blas_ensure_fast_kernel(argv);
	/* The locale (LC_NUMERIC stays "C") and the messages' language. */
	i18n_init();

	enum { MODE_VIEW, MODE_DUMP, MODE_TRAIN, MODE_EXPORT } mode = MODE_VIEW;
	const char *mode_opt = NULL;
	bool help = false, version = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0)
			break;
		help |= strcmp(a, "-h") == 0 || is_opt(a, "--help");
		version |= strcmp(a, "-V") == 0 || is_opt(a, "--version");
		int m = is_opt(a, "--train")			   ? MODE_TRAIN
			: is_opt(a, "--export")			   ? MODE_EXPORT
			: is_opt(a, "--dump") || is_opt(a, "--info") ? MODE_DUMP
								   : MODE_VIEW;
		if (m == MODE_VIEW)
			continue;
		if (mode_opt && (m != (int)mode || !is_opt(a, mode_opt))) {
			return cli_usage_error("attnview --help", _("%s and %s cannot be combined"),
					       mode_opt, AV_Q(a));
		}
		mode = m;
		mode_opt = is_opt(a, "--train")	   ? "--train"
			   : is_opt(a, "--export") ? "--export"
			   : is_opt(a, "--dump")   ? "--dump"
						   : "--info";
	}
	if (version) {
		printf("attnview %s\n", ATTNVIEW_VERSION);
		printf("OpenBLAS: %s\n", blas_config());
		printf("OpenBLAS kernel: %s (%d threads)\n", blas_corename(), blas_threads());
		printf("utf8proc: %s (Unicode %s)\n", utf8proc_version(), utf8proc_unicode_version());
		printf("figures: %s\n", fig_formats());
		return EXIT_OK;
	}
	/* Training has many options of its own: its mode prints its own help. */
	if (help && mode != MODE_TRAIN) {
		for (size_t i = 0; i < sizeof help_text / sizeof help_text[0]; i++)
			fputs(_(help_text[i]), stdout);
		return EXIT_OK;
	}
	switch (mode) {
	case MODE_TRAIN:
		return cli_train(argc, argv);
	case MODE_DUMP:
		return cli_dump(argc, argv);
	case MODE_EXPORT:
		return cli_export(argc, argv);
	case MODE_VIEW:
	default:
		return cli_view(argc, argv);
	}
}
