/*
 * eb_commands.h - the command table (eb_commands.c), as the parser (eb_proto.c)
 * uses it. Not for ports.
 */
#ifndef EB_COMMANDS_H
#define EB_COMMANDS_H

#include <stddef.h>

/* Reset the commands' state (no model, empty input). parser_ram_bytes: the
 * parser's own static RAM, which eb-info adds to the total. */
void eb_commands_init(size_t parser_ram_bytes);

/* Run the command argv[0] (0), or return -1 without output when there is no
 * such command. */
int eb_commands_run(int argc, char **argv);

#endif /* EB_COMMANDS_H */
