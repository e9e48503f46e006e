/* Writes the generated seed inputs of the fuzz targets (tests/fuzz/seeds/):
 * small valid model files and a checkpoint, so the loader target starts from
 * files that pass every check, and a model whose metadata is terminal
 * commands. Run by hand when the file format changes:
 *   build/tests/fuzz/make_seeds tests/data/corpus/mixed.txt tests/fuzz/seeds
 * The other seeds are written by hand (tests/fuzz/README.md). */
#include <stdio.h>
#include <string.h>

#include "attnview/corpus.h"
#include "attnview/modelfile.h"
#include "attnview/timeline.h"
#include "attnview/checkpoint.h"
#include "attnview/train.h"

static bool write_bytes(const char *dir, const char *name, const byte_buf *b)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/model/%s", dir, name);
	FILE *f = fopen(path, "wb");
	bool ok = f && fwrite(b->v, 1, b->n, f) == b->n;
	if (f)
		ok = fclose(f) == 0 && ok;
	if (!ok)
		fprintf(stderr, "make_seeds: cannot write %s\n", path);
	return ok;
}

static const char hostile_name[] = "x\033]0;pwned\a\033[2J\033[31m\xc2\x9b\x7f\t\n\r\"\\"
				   "\xe2\x80\xae名字";
static const char hostile_corpus[] = "\033]52;c;cHduZWQ=\a\x01\x1f\xc2\x80\xc2\x9f (9 characters)";

/* A causal model and a masked checkpoint with a timeline of three records. */
static bool timeline_seeds(train_options *o, const corpus *c, const char *dir)
{
	av_error err;
	o->timeline_every = 1;
	for (int causal = 0; causal < 2; causal++) {
		o->objective = causal ? OBJ_CAUSAL : OBJ_MASKED;
		trainer *t = trainer_create(o, c, NULL, NULL, "seed", "mixed.txt", NULL, "/dev/null",
					    "/dev/null", &err);
		byte_buf b = {0};
		timeline *tl = t ? t->model->timeline : NULL;
		bool ok = tl && timeline_record(tl, t->model, 1, 2.5f, true, &err) &&
			  timeline_record(tl, t->model, 2, 2.25f, true, &err) &&
			  (causal ? model_serialize(t->model, AV_KIND_MODEL, NULL, &b, &err)
				  : trainer_checkpoint(t, &b, &err));
		trainer_destroy(t);
		const char *name = causal ? "timeline_causal.attn" : "timeline_masked.ckpt";
		ok = ok && write_bytes(dir, name, &b);
		bb_finish(&b);
		if (!ok) {
			fprintf(stderr, "make_seeds: %s\n", err.msg);
			return false;
		}
	}
	return true;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: make_seeds CORPUS SEEDDIR\n");
		return 2;
	}
	av_error err;
	corpus c;
	corpus_options co = {.min_count = 1, .max_vocab = 12};
	if (!corpus_load(&c, argv[1], &co, &err)) {
		fprintf(stderr, "make_seeds: %s\n", err.msg);
		return 1;
	}
	train_options o;
	train_options_default(&o);
	o.dim = 8;
	o.heads = 2;
	o.layers = 1;
	o.context = 8;
	o.batch = 2;
	o.steps = 3;
	o.warmup = 1;
	o.max_vocab = 12;
	o.eval_every = 0;
	o.checkpoint_every = 0;
	o.timeline_every = 0; /* the seeds of before the timeline: files without one */
	int status = 1;
	for (int causal = 0; causal < 2; causal++) {
		o.objective = causal ? OBJ_CAUSAL : OBJ_MASKED;
		trainer *t = trainer_create(&o, &c, NULL, NULL, "seed", "mixed.txt", NULL,
					    "/dev/null", "/dev/null", &err);
		if (!t) {
			fprintf(stderr, "make_seeds: %s\n", err.msg);
			goto out;
		}
		byte_buf m, ck, hm = {0};
		bool ok = model_serialize(t->model, AV_KIND_MODEL, NULL, &m, &err) &&
			  trainer_checkpoint(t, &ck, &err);
		/* Metadata that is all terminal commands: --info must show it. */
		if (ok && !causal)
			ok = model_set_meta_strings(t->model, hostile_name, hostile_corpus, &err) &&
			     model_serialize(t->model, AV_KIND_MODEL, NULL, &hm, &err);
		trainer_destroy(t);
		if (!ok) {
			fprintf(stderr, "make_seeds: %s\n", err.msg);
			goto out;
		}
		ok = write_bytes(argv[2], causal ? "tiny_causal.attn" : "tiny_masked.attn", &m) &&
		     write_bytes(argv[2], causal ? "tiny_causal.ckpt" : "tiny_masked.ckpt", &ck) &&
		     (causal || write_bytes(argv[2], "hostile_meta.attn", &hm));
		bb_finish(&m);
		bb_finish(&ck);
		bb_finish(&hm);
		if (!ok)
			goto out;
	}
	if (!timeline_seeds(&o, &c, argv[2]))
		goto out;
	status = 0;
out:
	corpus_finish(&c);
	return status;
}
