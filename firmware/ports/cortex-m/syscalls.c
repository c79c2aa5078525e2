/*
 * syscalls.c - the minimal newlib(-nano) system layer of the Cortex-M ports
 * (MPS2 under QEMU, STM32).
 *
 * The firmware is heap-free: _sbrk always fails (ENOMEM), so a stray malloc()
 * returns NULL instead of silently growing into the stack, and stdio falls back
 * to unbuffered I/O. stdout/stderr go to the host link
 * (eb_port_write); there is no file system.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "eb_port.h"

#undef errno
extern int errno;

void *_sbrk(ptrdiff_t incr);
int _write(int fd, const char *buf, int len);
int _read(int fd, char *buf, int len);
int _close(int fd);
int _fstat(int fd, struct stat *st);
int _isatty(int fd);
int _lseek(int fd, int off, int whence);
int _kill(int pid, int sig);
int _getpid(void);
void _exit(int status);

void *_sbrk(ptrdiff_t incr)
{
    (void)incr;
    errno = ENOMEM;
    return (void *)-1;
}

int _write(int fd, const char *buf, int len)
{
    if (fd != 1 && fd != 2) {
        errno = EBADF;
        return -1;
    }
    eb_port_write((const uint8_t *)buf, (size_t)len);
    return len;
}

int _read(int fd, char *buf, int len)
{
    int c;
    if (fd != 0) {
        errno = EBADF;
        return -1;
    }
    if (len <= 0) {
        return 0;
    }
    c = eb_port_getc();
    if (c < 0) {
        return 0;
    }
    buf[0] = (char)c;
    return 1;
}

int _close(int fd)
{
    (void)fd;
    errno = EBADF;
    return -1;
}

int _fstat(int fd, struct stat *st)
{
    (void)fd;
    st->st_mode = S_IFCHR;
    return 0;
}

int _isatty(int fd)
{
    return fd >= 0 && fd <= 2;
}

int _lseek(int fd, int off, int whence)
{
    (void)fd;
    (void)off;
    (void)whence;
    errno = ESPIPE;
    return -1;
}

int _kill(int pid, int sig)
{
    (void)pid;
    (void)sig;
    errno = EINVAL;
    return -1;
}

int _getpid(void)
{
    return 1;
}

void _exit(int status)
{
    (void)status;
    for (;;) {
        __asm volatile("wfi");
    }
}
