/* The models of recorded steps a run keeps (timeline.h, --keep-steps): the
 * view opens them from the timeline screen, --model OUT --step S from the
 * command line. They are whole model files, so every reader takes them. */
#include "attnview/i18n.h"
#include "attnview/modelfile.h"
#include "attnview/timeline.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <sys/stat.h>

bool timeline_kept_path(const char *out, uint64_t step, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s" TL_KEPT_DIR "/step-%06llu.attn", out,
			 (unsigned long long)step);
	return n >= 0 && (size_t)n < size;
}

bool timeline_kept_exists(const char *out, uint64_t step)
{
	char path[4200];
	struct stat st;
	return timeline_kept_path(out, step, path, sizeof path) && stat(path, &st) == 0 &&
	       S_ISREG(st.st_mode);
}

bool timeline_keep_due(uint64_t every, size_t rec, uint64_t step, uint64_t total)
{
	return every && (rec % every == 0 || step == total);
}

bool timeline_keep(const model *m, const model_meta *meta, const char *out, uint64_t step,
		   av_error *err)
{
	char dir[4200], path[4200];
	int n = snprintf(dir, sizeof dir, "%s" TL_KEPT_DIR, out);
	if (n < 0 || (size_t)n >= sizeof dir || !timeline_kept_path(out, step, path, sizeof path))
		return av_fail(err, _("%s: the path is too long for the kept models of the steps"),
			       AV_Q(out));
	if (mkdir(dir, 0777) != 0 && errno != EEXIST)
		return av_fail_errno(err, errno,
				     _("%s: cannot create the directory of the kept models "
				       "(--keep-steps); choose another -o or make it writable"),
				     AV_Q(dir));
	/* The same parameters, vocabulary and timeline; the step's metadata. */
	model kept = *m;
	kept.meta = *meta;
	kept.meta.val_loss = kept.meta.val_acc = NAN;
	kept.meta.base_loss = kept.meta.base_acc = NAN;
	return model_save(&kept, path, err);
}
