/*
 * eb_port_posix.h - what the posix port adds to eb_port.h for its main()
 * (main_posix.c): the options of the program.
 */
#ifndef EB_PORT_POSIX_H
#define EB_PORT_POSIX_H

/* --stdio (serve on stdin/stdout) and --keep-open (serve host after host);
 * call before eb_main(). */
/* The command line's options; the environment's EB_POSIX_COUNTER_BITS (12..32)
 * narrows the counter. Returns 0, or 2 (after a line on stderr) for a bad value. */
int eb_posix_options(int use_stdio, int keep_open);

#endif /* EB_PORT_POSIX_H */
