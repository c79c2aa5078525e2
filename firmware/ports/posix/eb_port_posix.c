/*
 * eb_port_posix.c - the firmware core built for the host (Linux: the hang-up
 * detection relies on Linux pty semantics; other systems are untested). The
 * program's main() and its options are in main_posix.c.
 *
 * The host link is a pseudo-terminal, so the real serial path (pyserial,
 * termios) is exercised: the program creates a pty, puts it in raw mode and,
 * once the core waits for input, prints the slave path as the first line on
 * stdout, like QEMU does for its `-serial pty`:
 *
 *     eb-posix: serial on /dev/pts/7
 *
 * and serves the protocol on the master side. It exits when the host closes
 * the slave (hang-up) unless --keep-open is given.
 *
 *   --stdio      serve on stdin/stdout instead (fuzz reproduction, pipes)
 *   --keep-open  keep serving across host reconnects (exits on SIGTERM/SIGINT)
 *
 * Counter: CLOCK_MONOTONIC in microseconds, truncated to 32 bits (wraps every
 * 71.6 minutes; the core computes differences modulo 2^32). Timing is real
 * (wall-clock time of the host CPU). No temperature sensor, no GPIO marker.
 * EB_POSIX_COUNTER_BITS=<n> (environment, 12..32) narrows the counter to n bits,
 * so that it wraps every 2^n µs like a narrow hardware timer (tests of the
 * core's modulo arithmetic: a 16-bit counter wraps every 65.5 ms).
 */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "eb_port.h"
#include "eb_port_posix.h"

static struct {
    int stdio;
    int keep_open;
    int in_fd;
    int out_fd;
    int slave_fd; /* held open with --keep-open so a host hang-up is not EOF */
    int connected; /* a host has had the slave open at some point */
    const char *slave_name; /* announced on stdout at the first eb_port_getc() */
    unsigned char rx[4096];
    size_t rx_len;
    size_t rx_pos;
    uint32_t counter_bits; /* 32, or EB_POSIX_COUNTER_BITS */
} P = {0, 0, -1, -1, -1, 0, NULL, {0}, 0, 0, 32u};

static void die(const char *what)
{
    fprintf(stderr, "eb-posix: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* Raw 8-bit link: no echo, no line editing, no CR/LF translation. */
static void make_raw(int fd)
{
    struct termios t;
    if (tcgetattr(fd, &t) != 0) {
        die("tcgetattr");
    }
    t.c_iflag &= ~(tcflag_t)(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON |
                             IXOFF);
    t.c_oflag &= ~(tcflag_t)OPOST;
    t.c_lflag &= ~(tcflag_t)(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
    t.c_cflag &= ~(tcflag_t)(CSIZE | PARENB);
    t.c_cflag |= CS8 | CLOCAL | CREAD;
    t.c_cc[VMIN] = 1;
    t.c_cc[VTIME] = 0;
    (void)cfsetispeed(&t, B115200);
    (void)cfsetospeed(&t, B115200);
    if (tcsetattr(fd, TCSANOW, &t) != 0) {
        die("tcsetattr");
    }
}

void eb_port_init(void)
{
    int master;
    const char *name;

    signal(SIGPIPE, SIG_IGN);
    if (P.stdio) {
        P.in_fd = STDIN_FILENO;
        P.out_fd = STDOUT_FILENO;
        return;
    }
    master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0) {
        die("posix_openpt");
    }
    if (grantpt(master) != 0 || unlockpt(master) != 0) {
        die("grantpt/unlockpt");
    }
    name = ptsname(master);
    if (name == NULL) {
        die("ptsname");
    }
    /* On a pty master, termios settings apply to the slave side. */
    make_raw(master);
    /* Open the slave once ourselves: held with --keep-open; otherwise closed
     * at once, which puts the master in the same "no host" state (POLLHUP,
     * EIO) as after a host hung up, so a first connection can be seen. */
    P.slave_fd = open(name, O_RDWR | O_NOCTTY);
    if (P.slave_fd < 0) {
        die("open slave");
    }
    if (!P.keep_open) {
        close(P.slave_fd);
        P.slave_fd = -1;
    }
    P.in_fd = master;
    P.out_fd = master;
    P.slave_name = name;
}

/* The pty path is printed when the core first waits for input, i.e. after its
 * start-up lines: those are dropped (no host yet), so every host session
 * starts on a quiet line, whatever the timing. */
static void announce(void)
{
    if (P.slave_name != NULL) {
        printf("eb-posix: serial on %s\n", P.slave_name);
        fflush(stdout);
        P.slave_name = NULL;
    }
}

/* Linux reports "no slave open" (POLLHUP, read() -> EIO) both before the
 * host's first open and after its last close: the first means wait, the
 * second means the host hung up. */
static void wait_for_host(void)
{
    while (!P.connected) {
        struct pollfd pf;
        int r;
        pf.fd = P.in_fd;
        pf.events = POLLIN;
        pf.revents = 0;
        r = poll(&pf, 1, 50);
        if (r < 0 && errno != EINTR) {
            die("poll");
        }
        if (r > 0 && (pf.revents & POLLHUP) != 0) {
            struct timespec ts = {0, 5000000};
            nanosleep(&ts, NULL);
            continue;
        }
        if (r >= 0) {
            P.connected = 1;
        }
    }
}

int eb_port_getc(void)
{
    announce();
    while (P.rx_pos == P.rx_len) {
        ssize_t n;
        if (!P.stdio && P.slave_fd < 0) {
            wait_for_host();
        }
        n = read(P.in_fd, P.rx, sizeof P.rx);
        if (n > 0) {
            P.rx_len = (size_t)n;
            P.rx_pos = 0;
        } else if (n == 0) {
            return -1; /* EOF */
        } else if (errno != EINTR && errno != EAGAIN) {
            return -1; /* EIO after the host closed the slave: hang-up */
        }
    }
    return P.rx[P.rx_pos++];
}

/* Like QEMU's pty backend, drop output while no host has ever connected (the
 * start-up lines), instead of leaving it for the host to find. */
static int host_absent(void)
{
    struct pollfd pf;
    if (P.stdio || P.slave_fd >= 0 || P.connected) {
        return 0;
    }
    pf.fd = P.out_fd;
    pf.events = POLLIN;
    pf.revents = 0;
    if (poll(&pf, 1, 0) >= 0 && (pf.revents & POLLHUP) != 0) {
        return 1;
    }
    P.connected = 1;
    return 0;
}

void eb_port_write(const uint8_t *data, size_t n)
{
    if (host_absent()) {
        return;
    }
    while (n > 0) {
        ssize_t k = write(P.out_fd, data, n);
        if (k > 0) {
            data += k;
            n -= (size_t)k;
        } else if (k < 0 && errno == EINTR) {
            continue;
        } else {
            return; /* link gone: the next eb_port_getc() reports it */
        }
    }
}

uint32_t eb_port_counter(void)
{
    struct timespec ts;
    uint32_t us;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    us = (uint32_t)((uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u);
    return P.counter_bits >= 32u ? us : (us & ((1u << P.counter_bits) - 1u));
}

uint32_t eb_port_counter_hz(void)
{
    return 1000000u;
}

uint32_t eb_port_counter_bits(void)
{
    return P.counter_bits;
}

int eb_port_temp_mc(int32_t *milli_c)
{
    (void)milli_c;
    return -1;
}

void eb_port_marker(int level)
{
    (void)level;
}

const char *eb_port_name(void)
{
    return "posix";
}

int eb_port_timing_is_real(void)
{
    return 1;
}

int eb_posix_options(int use_stdio, int keep_open)
{
    const char *bits = getenv("EB_POSIX_COUNTER_BITS");
    if (bits != NULL && *bits != '\0') {
        char *end = NULL;
        unsigned long v = strtoul(bits, &end, 10);
        if (*end != '\0' || v < 12u || v > 32u) {
            fprintf(stderr, "eb-posix: EB_POSIX_COUNTER_BITS=%s is not a width from 12 to 32\n", bits);
            return 2;
        }
        P.counter_bits = (uint32_t)v;
    }
    P.stdio = use_stdio;
    P.keep_open = keep_open;
    return 0;
}

const char *eb_port_clock(uint32_t *ppm, const char **fallback)
{
    *ppm = 0u;                   /* CLOCK_MONOTONIC: the computer's clock, no stated bound */
    *fallback = "none";
    return "host";
}
