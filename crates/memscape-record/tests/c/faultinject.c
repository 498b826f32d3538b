/* Test helper, preloaded into memscape's own process (not the recorded program's):
 *
 * - MEMSCAPE_TEST_FULL_DIR=DIR: every write to a file directly in DIR fails with ENOSPC once
 *   the file holds 4096 bytes, as on a disk that fills up during memscape's final write. Files
 *   in subdirectories (the raw recording) are written normally.
 * - MEMSCAPE_TEST_MKDIR_LOG=FILE: every mkdir/mkdirat appends "MODE PATH\n" (octal) to FILE,
 *   so a test sees the mode a directory was created with, before any chmod.
 *
 * Raw system calls only: no allocation, no dlsym (memscape's process has no shim, but the
 * recorded program inherits LD_PRELOAD and has). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define FULL_AT 4096

static size_t put(char *out, size_t at, size_t cap, const char *s) {
    while (*s && at + 1 < cap) out[at++] = *s++;
    out[at] = 0;
    return at;
}

/* Whether fd is a file directly inside $MEMSCAPE_TEST_FULL_DIR. */
static int in_full_dir(int fd) {
    const char *dir = getenv("MEMSCAPE_TEST_FULL_DIR");
    if (!dir || !*dir) return 0;
    char link[64], num[16], path[4096];
    int n = 0;
    unsigned v = (unsigned)fd;
    do num[n++] = (char)('0' + v % 10); while ((v /= 10) && n < 15);
    size_t at = put(link, 0, sizeof link, "/proc/self/fd/");
    while (n > 0 && at + 1 < sizeof link) link[at++] = num[--n];
    link[at] = 0;
    long len = syscall(SYS_readlinkat, AT_FDCWD, link, path, sizeof path - 1);
    if (len <= 0) return 0;
    path[len] = 0;
    size_t d = strlen(dir);
    while (d > 1 && dir[d - 1] == '/') d--;
    return strncmp(path, dir, d) == 0 && path[d] == '/' && !strchr(path + d + 1, '/');
}

/* How many of `count` bytes may be written at the file's position (-1: none, ENOSPC set). */
static long room(int fd, off_t pos, size_t count) {
    if (pos < 0) pos = (off_t)syscall(SYS_lseek, fd, 0, SEEK_CUR);
    if (pos >= FULL_AT) {
        errno = ENOSPC;
        return -1;
    }
    return (long)(count < (size_t)(FULL_AT - pos) ? count : (size_t)(FULL_AT - pos));
}

ssize_t write(int fd, const void *buf, size_t count) {
    if (count && in_full_dir(fd)) {
        long n = room(fd, -1, count);
        if (n < 0) return -1;
        count = (size_t)n;
    }
    return syscall(SYS_write, fd, buf, count);
}

ssize_t pwrite64(int fd, const void *buf, size_t count, off_t offset) {
    if (count && in_full_dir(fd)) {
        long n = room(fd, offset, count);
        if (n < 0) return -1;
        count = (size_t)n;
    }
    return syscall(SYS_pwrite64, fd, buf, count, offset);
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset) {
    return pwrite64(fd, buf, count, offset);
}

ssize_t writev(int fd, const struct iovec *iov, int iovcnt) {
    if (iovcnt > 0 && in_full_dir(fd)) {
        /* The first non-empty buffer only, cut to the room left: a short write. */
        for (int i = 0; i < iovcnt; i++) {
            if (iov[i].iov_len) return write(fd, iov[i].iov_base, iov[i].iov_len);
        }
        return 0;
    }
    return syscall(SYS_writev, fd, iov, iovcnt);
}

static void log_mkdir(const char *path, unsigned mode) {
    const char *log = getenv("MEMSCAPE_TEST_MKDIR_LOG");
    if (!log || !*log) return;
    char line[4200];
    char oct[8];
    int n = 0;
    do oct[n++] = (char)('0' + (mode & 7)); while ((mode >>= 3) && n < 7);
    size_t at = 0;
    while (n > 0) line[at++] = oct[--n];
    line[at] = 0;
    at = put(line, at, sizeof line, " ");
    at = put(line, at, sizeof line, path);
    at = put(line, at, sizeof line, "\n");
    int fd = (int)syscall(SYS_openat, AT_FDCWD, log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return;
    syscall(SYS_write, fd, line, at);
    syscall(SYS_close, fd);
}

int mkdir(const char *path, mode_t mode) {
    log_mkdir(path, mode);
    return (int)syscall(SYS_mkdirat, AT_FDCWD, path, mode);
}

int mkdirat(int dirfd, const char *path, mode_t mode) {
    log_mkdir(path, mode);
    return (int)syscall(SYS_mkdirat, dirfd, path, mode);
}
