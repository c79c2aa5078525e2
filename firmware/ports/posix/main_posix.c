/*
 * main_posix.c - the posix firmware's main(): its options, then the core's run
 * loop (eb_main). Apart from eb_port_posix.c so that the port's functions, which
 * the core calls, do not call back into the core.
 *
 *   --stdio      serve on stdin/stdout instead (fuzz reproduction, pipes)
 *   --keep-open  keep serving across host reconnects (exits on SIGTERM/SIGINT)
 */
#include <stdio.h>
#include <string.h>

#include "eb_port_posix.h"
#include "eb_proto.h"

int main(int argc, char **argv)
{
    int use_stdio = 0;
    int keep_open = 0;
    int i;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--stdio") == 0) {
            use_stdio = 1;
        } else if (strcmp(argv[i], "--keep-open") == 0) {
            keep_open = 1;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: %s [--stdio] [--keep-open]\n"
                   "Serves the edgebench firmware protocol on a new pseudo-terminal\n"
                   "(its path is the first line on stdout) or, with --stdio, on\n"
                   "stdin/stdout. Exits when the host hangs up, unless --keep-open.\n",
                   argv[0]);
            return 0;
        } else {
            fprintf(stderr, "eb-posix: unknown option %s (try --help)\n", argv[i]);
            return 2;
        }
    }
    if (eb_posix_options(use_stdio, keep_open) != 0) {
        return 2;
    }
    return eb_main();
}
