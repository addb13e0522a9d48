/*
 * lazyfs: a small FUSE passthrough that loses unsynced writes on command, after Jepsen's LazyFS.
 *
 *   lazyfs <backing-dir> <mountpoint> [-f] [fuse options]
 *
 * Every write to a regular file lands in a volatile per-file log (offset, bytes), not in the backing
 * file. Reads, and the size getattr reports, see the log (a process sees its own writes). fsync and
 * fdatasync on any descriptor of a file apply that file's log to the backing file in write order and
 * fsync it. A write of a command to the control file <mountpoint>/.lazyfs "cuts the power":
 *
 *   crash [seed]    drop every file's unsynced writes
 *   torn [seed]     per file, keep a random prefix of its unsynced writes (in write order), the last
 *                   one kept cut at a random byte: a torn, in-order writeback
 *   reorder [seed]  per file, keep a random subset of the 4 KiB pages its unsynced writes touched:
 *                   an out-of-order writeback
 *   sync            apply every file's log (as sync(2) would)
 *
 * Reading .lazyfs gives counters (pending files and bytes, power cuts, bytes dropped, fsyncs).
 * Only cut the power while nothing has the mount's files open (kill the server first): the model is
 * the state after a reboot, and a process that kept running would keep its own idea of the files.
 *
 * Not modelled (durable at once): directory operations (create, mkdir, rename, unlink, link,
 * symlink), truncate (it trims the log and sets the backing size at once), chmod/chown/utimens.
 * Not supported: fallocate, mmap of files (files are opened direct_io so that no kernel page cache
 * holds data the power cut dropped), xattrs. syncfs/sync(2) do not reach a FUSE filesystem, so only
 * fsync/fdatasync on a file make its data durable (write "sync" to .lazyfs to model a sync(2)).
 *
 * One global lock: this is a fault injector, not a fast filesystem.
 */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE
#include <fuse.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define CONTROL "/.lazyfs"
#define PAGE 4096

struct record {
    off_t off;
    size_t len;
    size_t cap;
    char *data;
};

/* The unsynced writes of one backing inode. */
struct file {
    dev_t dev;
    ino_t ino;
    struct record *recs;
    size_t nrecs, caprecs;
    size_t pending;
    struct file *next;
};

static char backing[PATH_MAX];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct file *files;
static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t cuts, dropped_bytes, kept_bytes, fsyncs;

static uint64_t next_random(void)
{
    /* xorshift64*: seeded by the command, so a run can be replayed. */
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 2685821657736338717ULL;
}

static void full_path(char out[PATH_MAX], const char *path)
{
    snprintf(out, PATH_MAX, "%s%s", backing, path);
}

static struct file *find(dev_t dev, ino_t ino, int create)
{
    for (struct file *f = files; f; f = f->next)
        if (f->dev == dev && f->ino == ino)
            return f;
    if (!create)
        return NULL;
    struct file *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->dev = dev;
    f->ino = ino;
    f->next = files;
    files = f;
    return f;
}

static void clear_records(struct file *f)
{
    for (size_t i = 0; i < f->nrecs; i++)
        free(f->recs[i].data);
    f->nrecs = 0;
    f->pending = 0;
}

static void forget(dev_t dev, ino_t ino)
{
    for (struct file **p = &files; *p; p = &(*p)->next) {
        if ((*p)->dev == dev && (*p)->ino == ino) {
            struct file *f = *p;
            *p = f->next;
            clear_records(f);
            free(f->recs);
            free(f);
            return;
        }
    }
}

static off_t logical_end(const struct file *f)
{
    off_t end = 0;
    for (size_t i = 0; i < f->nrecs; i++)
        if (f->recs[i].off + (off_t)f->recs[i].len > end)
            end = f->recs[i].off + (off_t)f->recs[i].len;
    return end;
}

static int add_record(struct file *f, const char *buf, size_t size, off_t off)
{
    /* An append right after the last write extends it, so a sequential writer keeps one record. */
    if (f->nrecs > 0) {
        struct record *last = &f->recs[f->nrecs - 1];
        if (last->off + (off_t)last->len == off) {
            if (last->len + size > last->cap) {
                size_t cap = last->cap * 2 > last->len + size ? last->cap * 2 : last->len + size;
                char *d = realloc(last->data, cap);
                if (!d)
                    return -ENOMEM;
                last->data = d;
                last->cap = cap;
            }
            memcpy(last->data + last->len, buf, size);
            last->len += size;
            f->pending += size;
            return 0;
        }
    }
    if (f->nrecs == f->caprecs) {
        size_t cap = f->caprecs ? f->caprecs * 2 : 8;
        struct record *r = realloc(f->recs, cap * sizeof *r);
        if (!r)
            return -ENOMEM;
        f->recs = r;
        f->caprecs = cap;
    }
    char *d = malloc(size ? size : 1);
    if (!d)
        return -ENOMEM;
    memcpy(d, buf, size);
    f->recs[f->nrecs++] = (struct record){off, size, size ? size : 1, d};
    f->pending += size;
    return 0;
}

static int write_all(int fd, const char *buf, size_t len, off_t off)
{
    while (len > 0) {
        ssize_t n = pwrite(fd, buf, len, off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        buf += n;
        len -= (size_t)n;
        off += n;
    }
    return 0;
}

/* Applies a file's log to the backing file (opened by path: the file may have no open handle). */
static int apply(struct file *f, int fd)
{
    for (size_t i = 0; i < f->nrecs; i++) {
        int rc = write_all(fd, f->recs[i].data, f->recs[i].len, f->recs[i].off);
        if (rc)
            return rc;
    }
    clear_records(f);
    return 0;
}

/* Opens the backing file of an inode for the power cut, which has no path: through /proc of a handle
 * would need one open, so the cut walks the backing tree instead. */
static int open_by_inode(const char *dir, dev_t dev, ino_t ino)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *e;
    int fd = -1;
    while (fd < 0 && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st))
            continue;
        if (S_ISDIR(st.st_mode))
            fd = open_by_inode(p, dev, ino);
        else if (S_ISREG(st.st_mode) && st.st_dev == dev && st.st_ino == ino)
            fd = open(p, O_WRONLY);
    }
    closedir(d);
    return fd;
}

enum cut { CUT_DROP, CUT_TORN, CUT_REORDER, CUT_SYNC };

static void power_cut(enum cut mode)
{
    for (struct file *f = files; f; f = f->next) {
        if (f->nrecs == 0)
            continue;
        int fd = mode == CUT_DROP ? -1 : open_by_inode(backing, f->dev, f->ino);
        size_t total = f->pending, kept = 0;
        if (fd >= 0) {
            if (mode == CUT_SYNC) {
                apply(f, fd);
                fsync(fd);
                kept = total;
            } else if (mode == CUT_TORN) {
                size_t upto = (size_t)(next_random() % (f->nrecs + 1));
                for (size_t i = 0; i < upto && i < f->nrecs; i++) {
                    size_t len = f->recs[i].len;
                    if (i + 1 == upto)
                        len = (size_t)(next_random() % (len + 1));
                    write_all(fd, f->recs[i].data, len, f->recs[i].off);
                    kept += len;
                }
            } else {
                for (size_t i = 0; i < f->nrecs; i++) {
                    struct record *r = &f->recs[i];
                    off_t pos = r->off;
                    while (pos < r->off + (off_t)r->len) {
                        off_t page_end = (pos / PAGE + 1) * PAGE;
                        off_t end = page_end < r->off + (off_t)r->len ? page_end : r->off + (off_t)r->len;
                        if (next_random() & 1) {
                            write_all(fd, r->data + (pos - r->off), (size_t)(end - pos), pos);
                            kept += (size_t)(end - pos);
                        }
                        pos = end;
                    }
                }
            }
            if (mode != CUT_SYNC)
                fsync(fd);
            close(fd);
        }
        if (mode != CUT_SYNC) {
            kept_bytes += kept;
            dropped_bytes += total - kept;
        }
        clear_records(f);
    }
    if (mode != CUT_SYNC)
        cuts++;
}

static int control_write(const char *buf, size_t size)
{
    char cmd[64] = {0};
    memcpy(cmd, buf, size < sizeof cmd - 1 ? size : sizeof cmd - 1);
    char word[16] = {0};
    unsigned long long seed = 0;
    int n = sscanf(cmd, "%15s %llu", word, &seed);
    if (n < 1)
        return -EINVAL;
    enum cut mode;
    if (!strcmp(word, "crash"))
        mode = CUT_DROP;
    else if (!strcmp(word, "torn"))
        mode = CUT_TORN;
    else if (!strcmp(word, "reorder"))
        mode = CUT_REORDER;
    else if (!strcmp(word, "sync"))
        mode = CUT_SYNC;
    else
        return -EINVAL;
    pthread_mutex_lock(&lock);
    if (n == 2)
        rng = seed * 2 + 1;
    power_cut(mode);
    pthread_mutex_unlock(&lock);
    fprintf(stderr, "lazyfs: %s\n", word);
    return (int)size;
}

static int control_text(char *out, size_t cap)
{
    size_t nfiles = 0, bytes = 0;
    for (struct file *f = files; f; f = f->next) {
        if (f->nrecs) {
            nfiles++;
            bytes += f->pending;
        }
    }
    return snprintf(out, cap,
                    "pending_files %zu\npending_bytes %zu\npower_cuts %" PRIu64 "\ndropped_bytes %" PRIu64
                    "\nkept_bytes %" PRIu64 "\nfsyncs %" PRIu64 "\n",
                    nfiles, bytes, cuts, dropped_bytes, kept_bytes, fsyncs);
}

static void *lazy_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
    (void)conn;
    cfg->use_ino = 1;
    cfg->direct_io = 1;        /* no kernel page cache: every read and write reaches the log */
    cfg->attr_timeout = 0;     /* sizes come from the log */
    cfg->entry_timeout = 0;
    cfg->negative_timeout = 0;
    return NULL;
}

static int lazy_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
    if (!strcmp(path, CONTROL)) {
        memset(st, 0, sizeof *st);
        st->st_mode = S_IFREG | 0666;
        st->st_nlink = 1;
        st->st_size = 0;
        return 0;
    }
    int rc = fi ? fstat((int)fi->fh, st) : ({
        char p[PATH_MAX];
        full_path(p, path);
        lstat(p, st);
    });
    if (rc)
        return -errno;
    if (S_ISREG(st->st_mode)) {
        pthread_mutex_lock(&lock);
        struct file *f = find(st->st_dev, st->st_ino, 0);
        if (f) {
            off_t end = logical_end(f);
            if (end > st->st_size)
                st->st_size = end;
        }
        pthread_mutex_unlock(&lock);
    }
    return 0;
}

static int lazy_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi,
                        enum fuse_readdir_flags flags)
{
    (void)off;
    (void)fi;
    (void)flags;
    char p[PATH_MAX];
    full_path(p, path);
    DIR *d = opendir(p);
    if (!d)
        return -errno;
    struct dirent *e;
    while ((e = readdir(d))) {
        struct stat st = {0};
        st.st_ino = e->d_ino;
        st.st_mode = (mode_t)(e->d_type << 12);
        if (fill(buf, e->d_name, &st, 0, 0))
            break;
    }
    closedir(d);
    return 0;
}

static int lazy_open(const char *path, struct fuse_file_info *fi)
{
    if (!strcmp(path, CONTROL)) {
        fi->fh = (uint64_t)-1;
        fi->direct_io = 1;
        return 0;
    }
    char p[PATH_MAX];
    full_path(p, path);
    /* The log decides where an append lands; the backing descriptor must be able to read for it. */
    int flags = fi->flags & ~(O_APPEND | O_WRONLY | O_TRUNC);
    flags = (flags & ~O_ACCMODE) | O_RDWR;
    int fd = open(p, flags);
    if (fd < 0)
        return -errno;
    if (fi->flags & O_TRUNC) {
        struct stat st;
        fstat(fd, &st);
        pthread_mutex_lock(&lock);
        struct file *f = find(st.st_dev, st.st_ino, 0);
        if (f)
            clear_records(f);
        pthread_mutex_unlock(&lock);
        if (ftruncate(fd, 0)) {
            int err = errno;
            close(fd);
            return -err;
        }
    }
    fi->fh = (uint64_t)fd;
    fi->direct_io = 1;
    return 0;
}

static int lazy_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    if (!strcmp(path, CONTROL))
        return lazy_open(path, fi);
    char p[PATH_MAX];
    full_path(p, path);
    int flags = (fi->flags & ~(O_APPEND | O_ACCMODE)) | O_RDWR;
    int fd = open(p, flags, mode);
    if (fd < 0)
        return -errno;
    fi->fh = (uint64_t)fd;
    fi->direct_io = 1;
    return 0;
}

static int lazy_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
    if (fi->fh == (uint64_t)-1) {
        char text[512];
        pthread_mutex_lock(&lock);
        int n = control_text(text, sizeof text);
        pthread_mutex_unlock(&lock);
        if (off >= n)
            return 0;
        size_t len = (size_t)(n - off) < size ? (size_t)(n - off) : size;
        memcpy(buf, text + off, len);
        return (int)len;
    }
    (void)path;
    int fd = (int)fi->fh;
    struct stat st;
    if (fstat(fd, &st))
        return -errno;
    pthread_mutex_lock(&lock);
    struct file *f = find(st.st_dev, st.st_ino, 0);
    off_t size_now = st.st_size;
    if (f && logical_end(f) > size_now)
        size_now = logical_end(f);
    if (off >= size_now) {
        pthread_mutex_unlock(&lock);
        return 0;
    }
    if ((off_t)size > size_now - off)
        size = (size_t)(size_now - off);
    ssize_t got = pread(fd, buf, size, off);
    if (got < 0) {
        int err = errno;
        pthread_mutex_unlock(&lock);
        return -err;
    }
    if ((size_t)got < size)
        memset(buf + got, 0, size - (size_t)got);
    /* Later writes win: overlay the log in write order. */
    for (size_t i = 0; f && i < f->nrecs; i++) {
        struct record *r = &f->recs[i];
        off_t a = r->off > off ? r->off : off;
        off_t b = r->off + (off_t)r->len < off + (off_t)size ? r->off + (off_t)r->len : off + (off_t)size;
        if (a < b)
            memcpy(buf + (a - off), r->data + (a - r->off), (size_t)(b - a));
    }
    pthread_mutex_unlock(&lock);
    return (int)size;
}

static int lazy_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
    (void)path;
    if (fi->fh == (uint64_t)-1)
        return control_write(buf, size);
    int fd = (int)fi->fh;
    struct stat st;
    if (fstat(fd, &st))
        return -errno;
    pthread_mutex_lock(&lock);
    struct file *f = find(st.st_dev, st.st_ino, 1);
    if (!f) {
        pthread_mutex_unlock(&lock);
        return -ENOMEM;
    }
    if (fi->flags & O_APPEND) {
        off = st.st_size;
        if (logical_end(f) > off)
            off = logical_end(f);
    }
    int rc = add_record(f, buf, size, off);
    pthread_mutex_unlock(&lock);
    return rc ? rc : (int)size;
}

static int lazy_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
    (void)path;
    if (fi->fh == (uint64_t)-1)
        return 0;
    int fd = (int)fi->fh;
    struct stat st;
    if (fstat(fd, &st))
        return -errno;
    pthread_mutex_lock(&lock);
    fsyncs++;
    struct file *f = find(st.st_dev, st.st_ino, 0);
    int rc = f ? apply(f, fd) : 0;
    pthread_mutex_unlock(&lock);
    if (rc)
        return rc;
    return (datasync ? fdatasync(fd) : fsync(fd)) ? -errno : 0;
}

static int lazy_release(const char *path, struct fuse_file_info *fi)
{
    (void)path;
    if (fi->fh == (uint64_t)-1)
        return 0;
    int fd = (int)fi->fh;
    struct stat st;
    /* The last handle of an unlinked file: its log can never be read or synced again. */
    if (!fstat(fd, &st) && st.st_nlink == 0) {
        pthread_mutex_lock(&lock);
        forget(st.st_dev, st.st_ino);
        pthread_mutex_unlock(&lock);
    }
    close(fd);
    return 0;
}

static int lazy_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
    if (!strcmp(path, CONTROL))
        return 0; /* echo crash > .lazyfs truncates it first */
    char p[PATH_MAX];
    full_path(p, path);
    int fd = fi ? (int)fi->fh : open(p, O_WRONLY);
    if (fd < 0)
        return -errno;
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st)) {
        rc = -errno;
        goto out;
    }
    pthread_mutex_lock(&lock);
    struct file *f = find(st.st_dev, st.st_ino, 0);
    for (size_t i = 0; f && i < f->nrecs; i++) {
        struct record *r = &f->recs[i];
        if (r->off >= size) {
            f->pending -= r->len;
            r->len = 0;
        } else if (r->off + (off_t)r->len > size) {
            f->pending -= (size_t)(r->off + (off_t)r->len - size);
            r->len = (size_t)(size - r->off);
        }
    }
    pthread_mutex_unlock(&lock);
    if (ftruncate(fd, size))
        rc = -errno;
out:
    if (!fi)
        close(fd);
    return rc;
}

static int lazy_unlink(const char *path)
{
    char p[PATH_MAX];
    full_path(p, path);
    struct stat st;
    int had = !lstat(p, &st);
    if (unlink(p))
        return -errno;
    /* Inode numbers are reused: a log must not outlive its file. (An open handle of the unlinked
     * file then reads only what was synced.) */
    if (had && S_ISREG(st.st_mode) && st.st_nlink <= 1) {
        pthread_mutex_lock(&lock);
        forget(st.st_dev, st.st_ino);
        pthread_mutex_unlock(&lock);
    }
    return 0;
}

static int lazy_rename(const char *from, const char *to, unsigned int flags)
{
    if (flags)
        return -EINVAL;
    char a[PATH_MAX], b[PATH_MAX];
    full_path(a, from);
    full_path(b, to);
    struct stat st;
    int had = !lstat(b, &st);
    if (rename(a, b))
        return -errno;
    if (had && S_ISREG(st.st_mode) && st.st_nlink <= 1) {
        pthread_mutex_lock(&lock);
        forget(st.st_dev, st.st_ino);
        pthread_mutex_unlock(&lock);
    }
    return 0;
}

static int lazy_mkdir(const char *path, mode_t mode)
{
    char p[PATH_MAX];
    full_path(p, path);
    return mkdir(p, mode) ? -errno : 0;
}

static int lazy_rmdir(const char *path)
{
    char p[PATH_MAX];
    full_path(p, path);
    return rmdir(p) ? -errno : 0;
}

static int lazy_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    (void)fi;
    char p[PATH_MAX];
    full_path(p, path);
    return chmod(p, mode) ? -errno : 0;
}

static int lazy_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
    (void)fi;
    char p[PATH_MAX];
    full_path(p, path);
    return utimensat(AT_FDCWD, p, tv, AT_SYMLINK_NOFOLLOW) ? -errno : 0;
}

static int lazy_statfs(const char *path, struct statvfs *st)
{
    (void)path;
    return statvfs(backing, st) ? -errno : 0;
}

static int lazy_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi)
{
    (void)path;
    (void)datasync;
    (void)fi;
    return 0; /* directory operations are durable at once */
}

static int lazy_access(const char *path, int mask)
{
    if (!strcmp(path, CONTROL))
        return 0;
    char p[PATH_MAX];
    full_path(p, path);
    return access(p, mask) ? -errno : 0;
}

static const struct fuse_operations ops = {
    .init = lazy_init,
    .getattr = lazy_getattr,
    .readdir = lazy_readdir,
    .open = lazy_open,
    .create = lazy_create,
    .read = lazy_read,
    .write = lazy_write,
    .fsync = lazy_fsync,
    .release = lazy_release,
    .truncate = lazy_truncate,
    .unlink = lazy_unlink,
    .rename = lazy_rename,
    .mkdir = lazy_mkdir,
    .rmdir = lazy_rmdir,
    .chmod = lazy_chmod,
    .utimens = lazy_utimens,
    .statfs = lazy_statfs,
    .fsyncdir = lazy_fsyncdir,
    .access = lazy_access,
};

int main(int argc, char *argv[])
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s <backing-dir> <mountpoint> [-f] [fuse options]\n", argv[0]);
        return 2;
    }
    if (!realpath(argv[1], backing)) {
        perror(argv[1]);
        return 2;
    }
    /* FUSE sees argv without the backing directory. */
    argv[1] = argv[0];
    return fuse_main(argc - 1, argv + 1, &ops, NULL);
}
