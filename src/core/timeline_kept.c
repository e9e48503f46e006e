/* The models of recorded steps a run keeps (timeline.h, --keep-steps): the
 * view opens them from the timeline screen, --model OUT --step S from the
 * command line. They are whole model files, so every reader takes them. */
#include "attnview/i18n.h"
#include "attnview/modelfile.h"
#include "attnview/timeline.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* A kept model's file name: "step-", at least 6 digits, ".attn". */
static bool kept_name(const char *name)
{
	size_t n = strlen(name);
	return n >= 16 && strncmp(name, "step-", 5) == 0 &&
	       strspn(name + 5, "0123456789") == n - 10 && strcmp(name + n - 5, ".attn") == 0;
}

bool timeline_kept_owner(const char *path, char *buf, size_t size)
{
	const char *slash = strrchr(path, '/');
	if (!slash || !kept_name(slash + 1))
		return false;
	/* The directory's name, OUT.steps, without its suffix: OUT. */
	size_t dir = (size_t)(slash - path), suffix = strlen(TL_KEPT_DIR);
	if (dir <= suffix || strncmp(path + dir - suffix, TL_KEPT_DIR, suffix) != 0 ||
	    path[dir - suffix - 1] == '/')
		return false;
	int n = snprintf(buf, size, "%.*s", (int)(dir - suffix), path);
	return n >= 0 && (size_t)n < size;
}

bool timeline_keep_due(uint64_t every, size_t rec, uint64_t step, uint64_t total)
{
	return every && (rec % every == 0 || step == total);
}

/* A new run (its first record) removes the models an earlier run kept
 * in dir, so that the timeline marks only its own: the files named as
 * timeline_kept_path names them, nothing else. */
static bool clear_earlier(const char *dir, av_error *err)
{
	DIR *d = opendir(dir);
	if (!d)
		return av_fail_errno(err, errno, _("%s: cannot read the directory"), AV_Q(dir));
	bool ok = true;
	struct dirent *e;
	while (ok && (e = readdir(d))) {
		if (!kept_name(e->d_name))
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) != 0 && errno != ENOENT)
			ok = av_fail_errno(err, errno,
					   _("%s/%s: cannot remove the model an earlier run kept"),
					   AV_Q(dir), AV_Q(e->d_name));
	}
	closedir(d);
	return ok;
}

bool timeline_keep(const model *m, const model_meta *meta, const char *out, uint64_t step,
		   bool first, av_error *err)
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
	if (first && !clear_earlier(dir, err))
		return false;
	/* The same parameters, vocabulary and timeline; the step's metadata. */
	model kept = *m;
	kept.meta = *meta;
	kept.meta.val_loss = kept.meta.val_acc = NAN;
	kept.meta.base_loss = kept.meta.base_acc = NAN;
	return model_save(&kept, path, err);
}
