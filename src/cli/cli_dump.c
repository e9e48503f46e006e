/* attnview --dump and --info: every number the view shows, for scripts. */
#include "cli.h"
#include "attnview/dump.h"
#include "attnview/modelfile.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define usage_error(...) cli_usage_error("attnview --help", __VA_ARGS__)

static bool parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (end == s || *end || v < lo || v > hi)
		return false;
	*out = (int)v;
	return true;
}

static void report_cleaning(const clean_stats *st, const char *what)
{
	if (st->invalid)
		fprintf(stderr,
			"attnview: %s: %llu invalid UTF-8 sequence(s) replaced by U+FFFD, the "
			"first at byte %llu\n",
			what, (unsigned long long)st->invalid,
			(unsigned long long)st->first_invalid);
	if (st->escapes || st->controls)
		fprintf(stderr,
			"attnview: %s: removed %llu terminal escape sequence(s) and %llu control "
			"character(s)\n",
			what, (unsigned long long)st->escapes, (unsigned long long)st->controls);
}

/* Read --input FILE: like a corpus, invalid UTF-8 is replaced and reported. */
static bool read_input(const char *path, cp_buf *cps, av_error *err)
{
	uint8_t *buf;
	size_t n;
	if (!read_file(path, &buf, &n, err))
		return false;
	clean_stats st;
	bool ok = clean_text((const char *)buf, n, cps, &st, err);
	free(buf);
	if (!ok)
		return false;
	report_cleaning(&st, path);
	/* A text file's final line break is not part of the text. */
	while (cps->n && cps->v[cps->n - 1] == '\n')
		cps->n--;
	return true;
}

int cli_dump(int argc, char **argv)
{
	enum { OPT_DUMP = 256, OPT_INFO, OPT_FORMAT, OPT_TEXT, OPT_INPUT, OPT_MODEL, OPT_LAYER,
	       OPT_HEAD, OPT_TOP };
	static const struct option opts[] = {
		{"dump", no_argument, NULL, OPT_DUMP},
		{"info", no_argument, NULL, OPT_INFO},
		{"format", required_argument, NULL, OPT_FORMAT},
		{"text", required_argument, NULL, OPT_TEXT},
		{"input", required_argument, NULL, OPT_INPUT},
		{"model", required_argument, NULL, OPT_MODEL},
		{"layer", required_argument, NULL, OPT_LAYER},
		{"head", required_argument, NULL, OPT_HEAD},
		{"top", required_argument, NULL, OPT_TOP},
		{NULL, 0, NULL, 0},
	};
	bool info = false, dump = false;
	const char *text = NULL, *input = NULL, *model_path = NULL;
	dump_options o = {DUMP_JSON, -1, -1, 0};
	int topk = 5;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case OPT_DUMP:
			dump = true;
			break;
		case OPT_INFO:
			info = true;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "json") == 0)
				o.format = DUMP_JSON;
			else if (strcmp(optarg, "tsv") == 0)
				o.format = DUMP_TSV;
			else
				return usage_error("--format must be json or tsv, not '%s'", optarg);
			break;
		case OPT_TEXT:
			text = optarg;
			break;
		case OPT_INPUT:
			input = optarg;
			break;
		case OPT_MODEL:
			model_path = optarg;
			break;
		case OPT_LAYER:
			if (!parse_int(optarg, 0, AV_MAX_LAYERS - 1, &o.layer))
				return usage_error("--layer takes a layer number from 0, not '%s'",
						   optarg);
			break;
		case OPT_HEAD:
			if (!parse_int(optarg, 0, AV_MAX_HEADS - 1, &o.head))
				return usage_error("--head takes a head number from 0, not '%s'",
						   optarg);
			break;
		case OPT_TOP:
			if (!parse_int(optarg, 0, 100, &topk))
				return usage_error("--top takes a number from 0 to 100, not '%s'",
						   optarg);
			break;
		default:
			return usage_error("unknown or incomplete option '%s' for --dump/--info",
					   argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (info && dump)
		return usage_error("%s", "--info and --dump cannot be combined");
	if (dump && !!text == !!input)
		return usage_error("%s", "--dump needs exactly one of --text TEXT or --input FILE");
	if (info && (text || input))
		return usage_error("%s", "--info takes only --model");

	av_error err;
	model *m = cli_load_model(model_path, &err);
	if (!m) {
		cli_error(err.msg);
		return EXIT_RUNTIME;
	}
	if (info) {
		dump_info(stdout, m, model_path ? model_path : "(built-in)");
		model_destroy(m);
		return fflush(stdout) == 0 ? EXIT_OK : EXIT_RUNTIME;
	}
	if ((o.layer >= 0 && (uint32_t)o.layer >= m->cfg.layers) ||
	    (o.head >= 0 && (uint32_t)o.head >= m->cfg.heads)) {
		fprintf(stderr,
			"attnview: this model has layers 0..%u and heads 0..%u; --layer/--head is "
			"out of range\n",
			m->cfg.layers - 1, m->cfg.heads - 1);
		model_destroy(m);
		return EXIT_USAGE;
	}

	int status = EXIT_RUNTIME;
	cp_buf cps = {0};
	token *toks = NULL;
	activations ws = {0};
	attn_result r = {0};
	clean_stats st;
	bool ok = text ? tokenize_text(text, strlen(text), "--text", &cps, &st, &err)
		       : read_input(input, &cps, &err);
	if (!ok)
		goto out;
	if (text)
		report_cleaning(&st, "--text");
	if (cps.n == 0) {
		cli_error("the text is empty after cleaning; give some characters to look at");
		goto out;
	}
	int n = (int)(cps.n < m->cfg.context ? cps.n : m->cfg.context);
	o.dropped = (int)(cps.n - (size_t)n);
	if (o.dropped)
		fprintf(stderr,
			"attnview: the text has %zu tokens; the model's context is %u, so the last "
			"%d are left out\n",
			cps.n, m->cfg.context, o.dropped);
	toks = malloc((size_t)n * sizeof *toks);
	if (!toks) {
		av_fail(&err, "out of memory");
		goto out;
	}
	vocab_tokenize(&m->vocab, cps.v, (size_t)n, toks);
	if (!activations_init(&ws, &m->cfg, 1, n, n, &err) ||
	    !model_attend(m, &ws, toks, n, topk, &r, &err))
		goto out;
	if (!dump_write(stdout, m, &r, &o)) {
		av_fail(&err, "writing the dump to standard output failed");
		goto out;
	}
	status = EXIT_OK;
out:
	if (status != EXIT_OK)
		cli_error(err.msg);
	attn_result_free(&r);
	activations_finish(&ws);
	free(toks);
	cp_buf_free(&cps);
	model_destroy(m);
	return status;
}
