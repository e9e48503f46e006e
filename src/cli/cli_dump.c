/* attnview --dump and --info: every number the view shows, for scripts. */
#include "attnview/dump.h"
#include "attnview/modelfile.h"
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define usage_error(...) cli_usage_error("attnview --help", __VA_ARGS__)

/* What --dump or --info was asked for: parse_dump_options fills it, the
 * other phases read it. */
typedef struct dump_request {
	bool info, dump;
	const char *text, *input, *model_path;
	dump_options out; /* format, layer and head; `dropped` is set by run_dump */
	int topk;
} dump_request;

enum {
	OPT_DUMP = 256,
	OPT_INFO,
	OPT_FORMAT,
	OPT_TEXT,
	OPT_INPUT,
	OPT_MODEL,
	OPT_LAYER,
	OPT_HEAD,
	OPT_TOP
};

static const struct option dump_opts[] = {
    {"dump", no_argument, NULL, OPT_DUMP},	     {"info", no_argument, NULL, OPT_INFO},
    {"format", required_argument, NULL, OPT_FORMAT}, {"text", required_argument, NULL, OPT_TEXT},
    {"input", required_argument, NULL, OPT_INPUT},   {"model", required_argument, NULL, OPT_MODEL},
    {"layer", required_argument, NULL, OPT_LAYER},   {"head", required_argument, NULL, OPT_HEAD},
    {"top", required_argument, NULL, OPT_TOP},	     {NULL, 0, NULL, 0},
};

/* One option into q; returns -1, or the exit status of a usage error. */
static int take_option(int c, dump_request *q, char **argv)
{
	switch (c) {
	case OPT_DUMP:
		q->dump = true;
		break;
	case OPT_INFO:
		q->info = true;
		break;
	case OPT_FORMAT:
		if (strcmp(optarg, "json") == 0)
			q->out.format = DUMP_JSON;
		else if (strcmp(optarg, "tsv") == 0)
			q->out.format = DUMP_TSV;
		else
			return usage_error("--format must be json or tsv, not '%s'", optarg);
		break;
	case OPT_TEXT:
		q->text = optarg;
		break;
	case OPT_INPUT:
		q->input = optarg;
		break;
	case OPT_MODEL:
		q->model_path = optarg;
		break;
	case OPT_LAYER:
		if (!cli_parse_int(optarg, 0, AV_MAX_LAYERS - 1, &q->out.layer))
			return usage_error("--layer takes a layer number from 0, not '%s'", optarg);
		break;
	case OPT_HEAD:
		if (!cli_parse_int(optarg, 0, AV_MAX_HEADS - 1, &q->out.head))
			return usage_error("--head takes a head number from 0, not '%s'", optarg);
		break;
	case OPT_TOP:
		if (!cli_parse_int(optarg, 0, 100, &q->topk))
			return usage_error("--top takes a number from 0 to 100, not '%s'", optarg);
		break;
	default:
		return usage_error("unknown or incomplete option '%s' for --dump/--info",
				   argv[optind - 1]);
	}
	return -1;
}

/* The command line into q, and the combinations checked; returns -1, or
 * the exit status of a usage error. */
static int parse_dump_options(int argc, char **argv, dump_request *q)
{
	*q = (dump_request){.out = {DUMP_JSON, -1, -1, 0}, .topk = 5};
	int c, st;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", dump_opts, NULL)) != -1)
		if ((st = take_option(c, q, argv)) >= 0)
			return st;
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (q->info && q->dump)
		return usage_error("%s", "--info and --dump cannot be combined");
	if (q->dump && !!q->text == !!q->input)
		return usage_error("%s", "--dump needs exactly one of --text TEXT or --input FILE");
	if (q->info && (q->text || q->input))
		return usage_error("%s", "--info takes only --model");
	return -1;
}

static int run_info(const dump_request *q, const model *m)
{
	dump_info(stdout, m, q->model_path ? q->model_path : "(built-in)");
	return fflush(stdout) == 0 ? EXIT_OK : EXIT_RUNTIME;
}

/* --layer and --head against this model; EXIT_USAGE when out of range. */
static int check_layer_head(const dump_request *q, const model *m)
{
	if ((q->out.layer >= 0 && (uint32_t)q->out.layer >= m->cfg.layers) ||
	    (q->out.head >= 0 && (uint32_t)q->out.head >= m->cfg.heads)) {
		fprintf(stderr,
			"attnview: this model has layers 0..%u and heads 0..%u; --layer/--head is "
			"out of range\n",
			m->cfg.layers - 1, m->cfg.heads - 1);
		return EXIT_USAGE;
	}
	return -1;
}

/* The first `context` tokens of the text (the rest is reported and dropped)
 * through the model, then out as JSON or TSV. */
static int run_dump(dump_request *q, const model *m)
{
	av_error err;
	cp_buf cps = {0};
	attn_result r = {0};
	bool ok = cli_read_text(q->text, q->input, &cps, &err) &&
		  cli_attend(m, &cps, q->topk, &r, &q->out.dropped, &err) &&
		  dump_write(stdout, m, &r, &q->out, &err);
	if (!ok)
		cli_error(err.msg);
	attn_result_free(&r);
	cp_buf_free(&cps);
	return ok ? EXIT_OK : EXIT_RUNTIME;
}

int cli_dump(int argc, char **argv)
{
	dump_request q;
	int status = parse_dump_options(argc, argv, &q);
	if (status >= 0)
		return status;
	av_error err;
	model *m = cli_load_model(q.model_path, &err);
	if (!m) {
		cli_error(err.msg);
		return EXIT_RUNTIME;
	}
	if (q.info)
		status = run_info(&q, m);
	else if ((status = check_layer_head(&q, m)) < 0)
		status = run_dump(&q, m);
	model_destroy(m);
	return status;
}
