/* The model file (modelfile.h, man 5 attnview): building, validating and
 * atomically writing it. Parsing never trusts a length before checking it
 * against what is left, so a damaged file gets a message, never a crash.
 * A checkpoint's training state is decoded in training_state.c. */
#include "attnview/modelfile.h"
#include "attnview/i18n.h"
#include "attnview/timeline.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utf8proc.h>

/* ---- serialise ---- */

static void bb_string(byte_buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n > AV_MAX_STRING)
		n = AV_MAX_STRING; /* the loader's limit; never write what it refuses */
	bb_u32(b, (uint32_t)n);
	bb_bytes(b, s, n);
}

static bool arch_zero(const model_arch *a)
{
	for (int i = 0; i < ARCH_NFIELDS; i++)
		if (arch_value(a, &model_arch_fields[i]))
			return false;
	return true;
}

bool model_serialize(const model *m, uint32_t kind, const byte_buf *extra, byte_buf *out,
		     av_error *err)
{
	const model_config *c = &m->cfg;
	const bool v2 = !arch_zero(&c->arch);
	memset(out, 0, sizeof *out);
	bb_bytes(out, AV_MAGIC, 8);
	bb_u32(out, v2 ? AV_FORMAT_VERSION_ARCH : AV_FORMAT_VERSION);
	bb_u32(out, kind);
	bb_u64(out, 0); /* file size, patched below */
	bb_u32(out, c->objective);
	bb_u32(out, c->vocab_size);
	bb_u32(out, c->dim);
	bb_u32(out, c->heads);
	bb_u32(out, c->layers);
	bb_u32(out, c->context);
	bb_u64(out, m->meta.steps);
	bb_u64(out, m->meta.tokens);
	bb_u64(out, (uint64_t)m->meta.created);
	bb_u64(out, m->meta.seed);
	bb_f32(out, m->meta.val_loss);
	bb_f32(out, m->meta.val_acc);
	bb_f32(out, m->meta.base_loss);
	bb_f32(out, m->meta.base_acc);
	for (int i = 0; v2 && i < ARCH_NFIELDS; i++)
		bb_u32(out, arch_value(&c->arch, &model_arch_fields[i]));
	bb_string(out, m->meta.name);
	bb_string(out, m->meta.corpus);
	for (uint32_t i = 0; i < c->vocab_size; i++)
		bb_u32(out, m->vocab.cps[i]);
	/* The parameters, tensor after tensor in the size table's order. */
	tensor_iter it = tensor_iter_start(c);
	tensor_info t;
	while (tensor_iter_next(&it, &t))
		bb_f32s(out, m->params + t.offset, t.size);
	if (m->timeline)
		timeline_serialize(m->timeline, out);
	if (extra)
		bb_bytes(out, extra->v, extra->n);
	if (!bb_reserve(out, 4)) {
		bb_finish(out);
		return av_fail(err, _("out of memory while building the model file"));
	}
	uint64_t size = out->n + 4;
	for (int i = 0; i < 8; i++)
		out->v[16 + i] = (uint8_t)(size >> (8 * i));
	bb_u32(out, av_crc32(0, out->v, out->n));
	return true;
}

/* ---- parse and validate ---- */

/* The offset of the first byte that is not valid UTF-8, n if there is none. */
static size_t utf8_valid_prefix(const uint8_t *s, size_t n)
{
	utf8proc_int32_t cp;
	size_t off = 0;
	while (off < n) {
		utf8proc_ssize_t k = utf8proc_iterate(s + off, (utf8proc_ssize_t)(n - off), &cp);
		if (k <= 0)
			return off;
		off += (size_t)k;
	}
	return n;
}

static bool read_string(byte_reader *r, char **out, const char *field, const char *what,
			av_error *err)
{
	uint32_t n;
	size_t at = r->off;
	if (!br_u32(r, &n))
		return av_fail(err,
			       _("%s: truncated at byte %zu (the %s length): the file is "
				 "incomplete; copy it again or retrain"),
			       AV_Q(what), at, field);
	if (n > AV_MAX_STRING)
		return av_fail(err,
			       _("%s: the %s at byte %zu claims %u bytes, more than the limit "
				 "of %u: the file is damaged"),
			       AV_Q(what), field, at, n, AV_MAX_STRING);
	char *s = malloc((size_t)n + 1);
	if (!s)
		return av_fail(err, _("out of memory"));
	if (!br_bytes(r, s, n)) {
		free(s);
		return av_fail(err, _("%s: truncated at byte %zu (inside the %s)"), AV_Q(what),
			       r->n, field);
	}
	s[n] = '\0';
	/* Two rules: UTF-8, and no NUL (which is valid UTF-8, but would end the
	 * string early for every C reader). */
	size_t bad = utf8_valid_prefix((const uint8_t *)s, n);
	size_t nul = strlen(s); /* n if there is none */
	if (bad < n || nul < n) {
		free(s);
		if (bad < n)
			return av_fail(err,
				       _("%s: the %s at byte %zu is not valid UTF-8 (byte %zu): "
					 "the file is damaged"),
				       AV_Q(what), field, at + 4, at + 4 + bad);
		return av_fail(err,
			       _("%s: the %s at byte %zu contains a NUL byte (byte %zu), which "
				 "a string of the file may not hold: the file is damaged"),
			       AV_Q(what), field, at + 4, at + 4 + nul);
	}
	*out = s;
	return true;
}

#define TRUNCATED_HEADER                                                                           \
	"%s: truncated at byte %zu, inside the header: the file is incomplete; copy it again or "  \
	"retrain"

/* Magic, version, kind, size and checksum: is this a whole attnview file? */
static bool check_envelope(byte_reader *r, const char *what, uint32_t *kind, uint32_t *version,
			   av_error *err)
{
	const uint8_t *buf = r->p;
	const size_t n = r->n;
	uint8_t magic[8];
	uint64_t size;
	if (n == 0)
		return av_fail(err,
			       _("%s: the file is empty: it is not a model; give a file written by "
				 "attnview --train"),
			       AV_Q(what));
	if (!br_bytes(r, magic, 8) || memcmp(magic, AV_MAGIC, 8) != 0) {
		if (n < 8 && memcmp(buf, AV_MAGIC, n) == 0)
			return av_fail(err, TRUNCATED_HEADER, AV_Q(what), n);
		return av_fail(err,
			       _("%s: not an attnview model (the file does not start with "
				 "\"ATTNVIEW\"); give a file written by attnview --train"),
			       AV_Q(what));
	}
	if (!br_u32(r, version))
		return av_fail(err, TRUNCATED_HEADER, AV_Q(what), n);
	if (*version != AV_FORMAT_VERSION && *version != AV_FORMAT_VERSION_ARCH)
		return av_fail(
		    err, _("%s: model format version %u, but this attnview reads version %u%s"),
		    AV_Q(what), *version, AV_FORMAT_VERSION_ARCH,
		    *version > AV_FORMAT_VERSION_ARCH ? _(": upgrade attnview to read it")
						      : _(": the file is damaged"));
	if (!br_u32(r, kind) || !br_u64(r, &size))
		return av_fail(err, TRUNCATED_HEADER, AV_Q(what), n);
	if (*kind != AV_KIND_MODEL && *kind != AV_KIND_CHECKPOINT)
		return av_fail(err,
			       _("%s: unknown file kind %u at byte 12: the file is damaged or from "
				 "a newer attnview"),
			       AV_Q(what), *kind);
	if (size > n)
		return av_fail(err,
			       _("%s: truncated: the header says %llu bytes but the file has %zu "
				 "(it ends at byte %zu); copy it again or retrain"),
			       AV_Q(what), (unsigned long long)size, n, n);
	if (size < n)
		return av_fail(err,
			       _("%s: the header says %llu bytes but the file has %zu: it was "
				 "damaged or something was appended; restore it or retrain"),
			       AV_Q(what), (unsigned long long)size, n);
	if (n <
	    AV_HEADER_FIXED + (*version == AV_FORMAT_VERSION_ARCH ? AV_ARCH_BYTES : 0) + 4 + 4 + 4)
		return av_fail(err, _("%s: only %zu bytes, too short for a model header"),
			       AV_Q(what), n);
	uint32_t stored = (uint32_t)buf[n - 4] | (uint32_t)buf[n - 3] << 8 |
			  (uint32_t)buf[n - 2] << 16 | (uint32_t)buf[n - 1] << 24;
	uint32_t actual = av_crc32(0, buf, n - 4);
	if (stored != actual)
		return av_fail(err,
			       _("%s: checksum mismatch (stored %08x, computed %08x over bytes "
				 "0..%zu): the file is damaged; restore it or retrain"),
			       AV_Q(what), stored, actual, n - 4);
	r->n = n - 4; /* the checksum is not content */
	return true;
}

/* The architecture of a version-2 file (bytes 96..123), each field within
 * its values. */
static bool read_arch(byte_reader *r, model_arch *a, const char *what, av_error *err)
{
	for (int i = 0; i < ARCH_NFIELDS; i++) {
		const arch_field *f = &model_arch_fields[i];
		size_t at = r->off;
		uint32_t *v = (uint32_t *)(void *)((char *)a + f->offset);
		br_u32(r, v); /* the envelope checked that the bytes are there */
		if (*v >= f->count)
			return av_fail(
			    err,
			    _("%s: the architecture's %s at byte %zu is %u, which this "
			      "attnview does not know (0..%u): the file is damaged or from "
			      "a newer attnview"),
			    AV_Q(what), f->name, at, *v, f->count - 1);
	}
	return true;
}

/* Hyperparameters, metadata, the architecture (version 2) and the two
 * strings (bytes 24 on). On failure nothing is left allocated in meta. */
static bool read_header(byte_reader *r, uint32_t version, model_config *cfg, model_meta *meta,
			const char *what, av_error *err)
{
	uint64_t created;
	memset(&cfg->arch, 0, sizeof cfg->arch);
	/* The envelope was checked: these bytes are there. */
	br_u32(r, &cfg->objective);
	br_u32(r, &cfg->vocab_size);
	br_u32(r, &cfg->dim);
	br_u32(r, &cfg->heads);
	br_u32(r, &cfg->layers);
	br_u32(r, &cfg->context);
	br_u64(r, &meta->steps);
	br_u64(r, &meta->tokens);
	br_u64(r, &created);
	meta->created = (int64_t)created;
	br_u64(r, &meta->seed);
	br_f32(r, &meta->val_loss);
	br_f32(r, &meta->val_acc);
	br_f32(r, &meta->base_loss);
	br_f32(r, &meta->base_acc);
	if (version == AV_FORMAT_VERSION_ARCH && !read_arch(r, &cfg->arch, what, err))
		return false;
	av_error cerr;
	if (!model_config_check(cfg, &cerr))
		return av_fail(err,
			       _("%s: impossible hyperparameters in the header (bytes 24..47): %s; "
				 "the file is damaged"),
			       AV_Q(what), cerr.msg);
	if (!read_string(r, &meta->name, _("model name"), what, err))
		return false;
	if (!read_string(r, &meta->corpus, _("corpus description"), what, err)) {
		free(meta->name);
		meta->name = NULL;
		return false;
	}
	return true;
}

/* The vocabulary's codepoints, checked as vocab_init checks them; *cps is
 * the caller's to free, even on failure. */
static bool read_vocab(byte_reader *r, const model_config *cfg, uint32_t **cps, const char *what,
		       av_error *err)
{
	size_t voc_off = r->off;
	*cps = malloc((size_t)cfg->vocab_size * sizeof **cps);
	if (!*cps)
		return av_fail(err, _("out of memory"));
	for (uint32_t i = 0; i < cfg->vocab_size; i++)
		if (!br_u32(r, &(*cps)[i]))
			return av_fail(
			    err, _("%s: truncated in the vocabulary (entry %u of %u, byte %zu)"),
			    AV_Q(what), i, cfg->vocab_size, voc_off + 4 * (size_t)i);
	vocab check;
	if (!vocab_init(&check, *cps, cfg->vocab_size, what, err))
		return false;
	vocab_finish(&check);
	return true;
}

/* Before anything is allocated for them: are the parameters there? */
static bool params_fit(const byte_reader *r, const model_config *cfg, const char *what,
		       av_error *err)
{
	size_t np = model_num_params(cfg);
	if (np > (r->n - r->off) / 4)
		return av_fail(err,
			       _("%s: the parameters need %zu bytes from byte %zu but only %zu "
				 "remain: the header does not match the file; it is damaged"),
			       AV_Q(what), np * 4, r->off, r->n - r->off);
	return true;
}

/* The parameters, tensor by tensor in the size table's order; every one must
 * be a finite number. */
static bool read_params(byte_reader *r, model *m, const char *what, av_error *err)
{
	tensor_iter it = tensor_iter_start(&m->cfg);
	tensor_info t;
	while (tensor_iter_next(&it, &t)) {
		size_t at = r->off;
		float *x = m->params + t.offset;
		br_f32s(r, x, t.size);
		for (size_t i = 0; i < t.size; i++)
			if (!isfinite(x[i]))
				return av_fail(err,
					       _("%s: parameter %zu (%s[%zu], byte %zu) is not a "
						 "finite number: the model diverged or the file "
						 "is damaged; retrain it"),
					       AV_Q(what), t.offset + i, t.name, i, at + 4 * i);
	}
	return true;
}

/* The zeros an architecture promises (attnview(5), Architecture): a model
 * without the special tokens has none of their rows (ids 0..2 of wte, out_w
 * and out_b), a model without biases none of them (the tensors the table
 * initialises to zero: every bias and LayerNorm shift). end: the byte after
 * the parameters. */
static bool check_zeros(const model *m, size_t end, const char *what, av_error *err)
{
	const model_arch *a = &m->cfg.arch;
	const size_t start = end - 4 * m->nparams;
	const uint32_t d = m->cfg.dim;
	tensor_iter it = tensor_iter_start(&m->cfg);
	tensor_info t;
	while (tensor_iter_next(&it, &t)) {
		const float *x = m->params + t.offset;
		bool bias = t.init == INIT_ZERO;
		bool vrows = strcmp(t.name, "wte") == 0 || strcmp(t.name, "out_w") == 0 ||
			     strcmp(t.name, "out_b") == 0;
		size_t k = 0;
		if (a->biases == BIASES_NONE && bias)
			k = t.size;
		if (a->specials == SPECIALS_NONE && vrows && k == 0)
			k = (size_t)TOK_NSPECIAL * (t.cols == 1 ? 1 : d);
		for (size_t i = 0; i < k; i++)
			if (x[i] != 0.0f)
				return av_fail(
				    err,
				    _("%s: parameter %s[%zu] (byte %zu) is not 0, but the "
				      "architecture says %s: the file is damaged; convert the "
				      "model again"),
				    AV_Q(what), t.name, i, start + 4 * (t.offset + i),
				    a->biases == BIASES_NONE && bias ? _("the model has no biases")
								     : _("ids 0..2 have no rows"));
	}
	return true;
}

model *model_parse(const uint8_t *buf, size_t n, const char *what, uint32_t *kind_out,
		   size_t *extra_off, size_t *extra_len, av_error *err)
{
	byte_reader r = {buf, n, 0};
	uint32_t kind, version;
	model_config cfg;
	model_meta meta = {0};
	uint32_t *cps = NULL;
	model *m = NULL;
	if (!check_envelope(&r, what, &kind, &version, err) ||
	    !read_header(&r, version, &cfg, &meta, what, err))
		return NULL;
	if (!read_vocab(&r, &cfg, &cps, what, err) || !params_fit(&r, &cfg, what, err) ||
	    !(m = model_create(&cfg, cps, err)) || !read_params(&r, m, what, err) ||
	    !check_zeros(m, r.off, what, err))
		goto fail;
	if (timeline_present(buf, r.off, r.n - r.off)) {
		size_t used;
		m->timeline = timeline_parse(buf, r.off, r.n - r.off, &cfg, what, &used, err);
		if (!m->timeline)
			goto fail;
		r.off += used;
	}
	if (kind == AV_KIND_MODEL && r.off != r.n) {
		av_fail(err,
			_("%s: %zu unexpected bytes after the parameters at byte %zu: the file "
			  "is damaged"),
			AV_Q(what), r.n - r.off, r.off);
		goto fail;
	}
	training_state st;
	if (kind == AV_KIND_CHECKPOINT &&
	    !training_state_parse(buf, r.off, r.n - r.off, &cfg, what, &st, err))
		goto fail;
	/* model_create set the defaults; the file's metadata replaces them. */
	m->meta = meta;
	if (kind_out)
		*kind_out = kind;
	if (extra_off)
		*extra_off = r.off;
	if (extra_len)
		*extra_len = r.n - r.off;
	free(cps);
	return m;
fail:
	free(cps);
	free(meta.name);
	free(meta.corpus);
	model_destroy(m);
	return NULL;
}

/* ---- files ---- */

model *model_load(const char *path, av_error *err)
{
	uint8_t *buf;
	size_t n;
	if (!binio_read_file(path, &buf, &n, err))
		return NULL;
	model *m = model_parse(buf, n, path, NULL, NULL, NULL, err);
	free(buf);
	return m;
}

static bool is_attnview_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	char magic[8];
	ssize_t k = read(fd, magic, 8);
	close(fd);
	return k == 8 && memcmp(magic, AV_MAGIC, 8) == 0;
}

bool may_replace_file(const char *path, av_error *err)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return true;
	if (S_ISDIR(st.st_mode))
		return av_fail(err, _("%s: is a directory; give a file name"), AV_Q(path));
	if (st.st_size > 0 && !is_attnview_file(path))
		return av_fail(err,
			       _("%s: exists and is not an attnview model; it was left "
				 "untouched: choose another output file"),
			       AV_Q(path));
	return true;
}

bool write_file_atomic(const char *path, const byte_buf *b, bool force, av_error *err)
{
	if (!force && !may_replace_file(path, err))
		return false;
	return binio_write_file(path, b, ATOMIC_REPLACE, err);
}

bool model_save(const model *m, const char *path, av_error *err)
{
	byte_buf b;
	if (!model_serialize(m, AV_KIND_MODEL, NULL, &b, err))
		return false;
	bool ok = write_file_atomic(path, &b, false, err);
	bb_finish(&b);
	return ok;
}

/* Generated by tools/embed_model from assets/builtin.attn and
 * assets/builtin-causal.attn (empty if absent). */
extern const unsigned char av_builtin_model[], av_builtin_causal_model[];
extern const size_t av_builtin_model_len, av_builtin_causal_model_len;

static model *builtin_parse(const unsigned char *buf, size_t len, const char *name, av_error *err)
{
	if (len == 0) {
		av_fail(err,
			_("this attnview was built without the built-in model %s; give one with "
			  "--model FILE (train one with attnview --train corpus.txt)"),
			name);
		return NULL;
	}
	return model_parse(buf, len, name, NULL, NULL, NULL, err);
}

model *model_builtin(av_error *err)
{
	return builtin_parse(av_builtin_model, av_builtin_model_len, "builtin", err);
}

const char *const model_builtins[MODEL_NBUILTINS] = {"builtin", "builtin-causal"};

bool model_builtin_name(const char *name)
{
	for (int i = 0; name && i < MODEL_NBUILTINS; i++)
		if (strcmp(name, model_builtins[i]) == 0)
			return true;
	return false;
}

model *model_builtin_named(const char *name, av_error *err)
{
	if (name && strcmp(name, model_builtins[1]) == 0)
		return builtin_parse(av_builtin_causal_model, av_builtin_causal_model_len,
				     model_builtins[1], err);
	return model_builtin(err);
}
