/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * paths.c - the path calls that reach the fake sysfs tree (sysfs.c) besides
 * open and stat (preload.c): links and names, the working directory,
 * extended attributes and directories.  glibc resolves realpath() and
 * walks scandir(), glob() and nftw() inside itself, past any interposer of
 * readlink() or opendir(), so those calls are taken whole; each rewrites
 * the paths into the tree and hands back /sys/... names.
 */
#include <dirent.h>
#include <ftw.h>
#include <glob.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "interpose.h"
#include "base/real.h"

REAL(ssize_t, readlink, const char *, char *, size_t)
REAL(ssize_t, readlinkat, int, const char *, char *, size_t)
REAL(char *, realpath, const char *, char *)
REAL(char *, canonicalize_file_name, const char *)
REAL(char *, __realpath_chk, const char *, char *, size_t)
REAL(ssize_t, __readlink_chk, const char *, char *, size_t, size_t)
REAL(ssize_t, __readlinkat_chk, int, const char *, char *, size_t, size_t)
REAL(char *, __getcwd_chk, char *, size_t, size_t)
REAL(DIR *, opendir, const char *)
REAL(int, chdir, const char *)
REAL(char *, getcwd, char *, size_t)
REAL(ssize_t, getxattr, const char *, const char *, void *, size_t)
REAL(ssize_t, lgetxattr, const char *, const char *, void *, size_t)
REAL(ssize_t, listxattr, const char *, char *, size_t)
REAL(ssize_t, llistxattr, const char *, char *, size_t)
REAL(int, scandir, const char *, struct dirent ***,
     int (*)(const struct dirent *),
     int (*)(const struct dirent **, const struct dirent **))
REAL(int, scandir64, const char *, struct dirent64 ***,
     int (*)(const struct dirent64 *),
     int (*)(const struct dirent64 **, const struct dirent64 **))
REAL(int, glob, const char *, int, int (*)(const char *, int), glob_t *)
REAL(int, glob64, const char *, int, int (*)(const char *, int), glob64_t *)
REAL(int, nftw, const char *, __nftw_func_t, int, int)
REAL(int, nftw64, const char *, __nftw64_func_t, int, int)

/* ------------------------------------------------------------------------ */
/* Links and names: the tree's symlinks are relative, so what readlink()   */
/* reads is what the kernel's say; realpath() hands back /sys/... names    */

ssize_t readlink(const char *path, char *out, size_t len)
{
	char buf[PATH_MAX];
	const char *alt = emu_sysfs_redirect(path, buf, sizeof(buf));

	return get_readlink()(alt ? alt : path, out, len);
}

ssize_t readlinkat(int dirfd, const char *path, char *out, size_t len)
{
	char buf[PATH_MAX];
	const char *alt = emu_sysfs_redirect(path, buf, sizeof(buf));

	return get_readlinkat()(dirfd, alt ? alt : path, out, len);
}

/* libc resolves inside itself, past readlink(): the whole call is taken */
char *realpath(const char *path, char *resolved)
{
	char buf[PATH_MAX];
	const char *alt = emu_sysfs_redirect(path, buf, sizeof(buf));
	char *r = get_realpath()(alt ? alt : path, resolved);

	if (r && alt)
		emu_sysfs_unredirect(r);
	return r;
}

/* what code built with _FORTIFY_SOURCE calls (UCX does, for realpath) */
char *__realpath_chk(const char *path, char *resolved, size_t resolvedlen)
{
	char buf[PATH_MAX];
	const char *alt = emu_sysfs_redirect(path, buf, sizeof(buf));
	char *r = get___realpath_chk()(alt ? alt : path, resolved, resolvedlen);

	if (r && alt)
		emu_sysfs_unredirect(r);
	return r;
}

ssize_t __readlink_chk(const char *path, char *out, size_t len, size_t outlen)
{
	char buf[PATH_MAX];
	const char *alt = emu_sysfs_redirect(path, buf, sizeof(buf));

	return get___readlink_chk()(alt ? alt : path, out, len, outlen);
}

ssize_t __readlinkat_chk(int dirfd, const char *path, char *out, size_t len,
			 size_t outlen)
{
	char buf[PATH_MAX];
	const char *alt = emu_sysfs_redirect(path, buf, sizeof(buf));

	return get___readlinkat_chk()(dirfd, alt ? alt : path, out, len, outlen);
}

char *canonicalize_file_name(const char *path)
{
	char buf[PATH_MAX];
	const char *alt = emu_sysfs_redirect(path, buf, sizeof(buf));
	char *r = get_canonicalize_file_name()(alt ? alt : path);

	if (r && alt)
		emu_sysfs_unredirect(r);
	return r;
}

/* a shell's cd: the working directory is then in the tree, named /sys/... */
int chdir(const char *path)
{
	char buf[PATH_MAX];
	const char *alt = emu_sysfs_redirect(path, buf, sizeof(buf));

	return get_chdir()(alt ? alt : path);
}

char *getcwd(char *out, size_t len)
{
	char *r = get_getcwd()(out, len);

	emu_sysfs_unredirect(r);
	return r;
}

char *__getcwd_chk(char *out, size_t len, size_t outlen)
{
	char *r = get___getcwd_chk()(out, len, outlen);

	emu_sysfs_unredirect(r);
	return r;
}

/* ls -l asks for ACLs and security labels */
ssize_t getxattr(const char *path, const char *name, void *v, size_t len)
{
	char buf[PATH_MAX];
	const char *alt = emu_sysfs_redirect(path, buf, sizeof(buf));

	return get_getxattr()(alt ? alt : path, name, v, len);
}

ssize_t lgetxattr(const char *path, const char *name, void *v, size_t len)
{
	char buf[PATH_MAX];
	const char *alt = emu_sysfs_redirect(path, buf, sizeof(buf));

	return get_lgetxattr()(alt ? alt : path, name, v, len);
}

ssize_t listxattr(const char *path, char *list, size_t len)
{
	char buf[PATH_MAX];
	const char *alt = emu_sysfs_redirect(path, buf, sizeof(buf));

	return get_listxattr()(alt ? alt : path, list, len);
}

ssize_t llistxattr(const char *path, char *list, size_t len)
{
	char buf[PATH_MAX];
	const char *alt = emu_sysfs_redirect(path, buf, sizeof(buf));

	return get_llistxattr()(alt ? alt : path, list, len);
}

/* ------------------------------------------------------------------------ */
/* Directories: libc's scandir, glob and nftw open theirs internally       */

DIR *opendir(const char *path)
{
	char buf[PATH_MAX];
	const char *alt = emu_sysfs_redirect(path, buf, sizeof(buf));

	return get_opendir()(alt ? alt : path);
}

int scandir(const char *path, struct dirent ***list,
	    int (*filter)(const struct dirent *),
	    int (*cmp)(const struct dirent **, const struct dirent **))
{
	char buf[PATH_MAX];
	const char *alt = emu_sysfs_redirect(path, buf, sizeof(buf));

	return get_scandir()(alt ? alt : path, list, filter, cmp);
}

int scandir64(const char *path, struct dirent64 ***list,
	      int (*filter)(const struct dirent64 *),
	      int (*cmp)(const struct dirent64 **, const struct dirent64 **))
{
	char buf[PATH_MAX];
	const char *alt = emu_sysfs_redirect(path, buf, sizeof(buf));

	return get_scandir64()(alt ? alt : path, list, filter, cmp);
}

/*
 * glob() builds its results from the pattern, so it runs on the /sys names
 * with directory functions that rewrite (GLOB_ALTDIRFUNC); a caller's own
 * directory functions are left alone.
 */
static void *glob_opendir(const char *path)
{
	return opendir(path);
}

static struct dirent *glob_readdir(void *d)
{
	return readdir(d);
}

static struct dirent64 *glob_readdir64(void *d)
{
	return readdir64(d);
}

static void glob_closedir(void *d)
{
	closedir(d);
}

static bool glob_may_reach(const char *pattern, int flags)
{
	return !(flags & GLOB_ALTDIRFUNC) && pattern &&
	       (!strncmp(pattern, "/sys/", 5) || !strncmp(pattern, "/dev/", 5));
}

int glob(const char *pattern, int flags, int (*errfn)(const char *, int),
	 glob_t *g)
{
	if (glob_may_reach(pattern, flags)) {
		g->gl_opendir = glob_opendir;
		g->gl_readdir = glob_readdir;
		g->gl_closedir = glob_closedir;
		g->gl_stat = stat;
		g->gl_lstat = lstat;
		flags |= GLOB_ALTDIRFUNC;
	}
	return get_glob()(pattern, flags, errfn, g);
}

int glob64(const char *pattern, int flags, int (*errfn)(const char *, int),
	   glob64_t *g)
{
	if (glob_may_reach(pattern, flags)) {
		g->gl_opendir = glob_opendir;
		g->gl_readdir = glob_readdir64;
		g->gl_closedir = glob_closedir;
		g->gl_stat = stat64;
		g->gl_lstat = lstat64;
		flags |= GLOB_ALTDIRFUNC;
	}
	return get_glob64()(pattern, flags, errfn, g);
}

/*
 * nftw() walks the rewritten path and hands the caller the /sys names:
 * its callback has no context argument, so the walk's is thread-local
 * (a callback that starts another walk of our tree runs it unrewritten).
 */
static _Thread_local struct {
	__nftw_func_t fn;
	__nftw64_func_t fn64;
	size_t cut;		/* strlen(host dir): what to drop from a path */
} walk;

static int walk_fn(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	struct FTW g = { .base = f->base - (int)walk.cut, .level = f->level };

	return walk.fn(path + walk.cut, st, flag, &g);
}

static int walk_fn64(const char *path, const struct stat64 *st, int flag,
		     struct FTW *f)
{
	struct FTW g = { .base = f->base - (int)walk.cut, .level = f->level };

	return walk.fn64(path + walk.cut, st, flag, &g);
}

int nftw(const char *path, __nftw_func_t fn, int fds, int flags)
{
	char buf[PATH_MAX];
	const char *alt = emu_sysfs_redirect(path, buf, sizeof(buf));
	int r;

	if (!alt || walk.fn || walk.fn64)
		return get_nftw()(path, fn, fds, flags);
	walk.fn = fn;
	walk.cut = strlen(alt) - strlen(path);
	r = get_nftw()(alt, walk_fn, fds, flags);
	walk.fn = NULL;
	return r;
}

int nftw64(const char *path, __nftw64_func_t fn, int fds, int flags)
{
	char buf[PATH_MAX];
	const char *alt = emu_sysfs_redirect(path, buf, sizeof(buf));
	int r;

	if (!alt || walk.fn || walk.fn64)
		return get_nftw64()(path, fn, fds, flags);
	walk.fn64 = fn;
	walk.cut = strlen(alt) - strlen(path);
	r = get_nftw64()(alt, walk_fn64, fds, flags);
	walk.fn64 = NULL;
	return r;
}
