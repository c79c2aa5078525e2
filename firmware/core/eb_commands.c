/*
 * eb_commands.c - the command table: every command of the firmware, the MLPerf
 * Tiny dialect's (eb_cmd_mlperf.c) and edgebench's extensions
 * (eb_cmd_edgebench.c), with its help text. The parser (eb_proto.c) runs a line
 * through eb_commands_run; `help` prints the table. A new command is a function
 * and a row here (and its reply in firmware/PROTOCOL.md).
 */
#include "eb_commands.h"

#include <string.h>

#include "eb_cmds.h"
#include "eb_config.h"
#include "eb_reply.h"
#include "eb_session.h"

typedef void (*eb_cmd_fn)(int argc, char **argv);

static void cmd_help(int argc, char **argv);

/* name, function, help lines ('\n' between lines), in the order help prints them */
static const struct {
    const char *name;
    eb_cmd_fn fn;
    const char *help;
} g_commands[] = {
    {"help", cmd_help, "help          : Print this information"},
    {"name", eb_cmd_name, "name          : Print the name of the device"},
    {"timestamp", eb_cmd_timestamp, "timestamp     : Print m-lap-us-<us> (energy mode: GPIO edge)"},
    {"profile", eb_cmd_profile, "profile       : Print firmware and model identification"},
    {"db", eb_cmd_db,
     "db SUBCMD     : Manipulate the input byte buffer\n"
     "  load N      : Expect N bytes\n"
     "  db HH[HH]*  : Load 8-bit hex byte(s) until N bytes\n"
     "  print       : Print the N bytes as hex"},
    {"infer", eb_cmd_infer, "infer N [W=10]: Execute N inferences after W warmup loops"},
    {"results", eb_cmd_results, "results       : Return the result fp32 vector"},
    {"eb-info", eb_cmd_eb_info, "eb-info       : Device, counter and buffer sizes"},
    {"eb-upload", eb_cmd_eb_upload, "eb-upload model|input LEN CRC32 : Binary upload in CRC-checked frames"},
    {"eb-model", eb_cmd_eb_model,
     "eb-model [ID] [input=E] [results=R] : Load the uploaded model blob\n"
     "  input=int8|uint8-offset|float32, results=outputs|mse"},
    {"eb-infer", eb_cmd_eb_infer, "eb-infer N [W=0] [layers] : N inferences timed one by one"},
    {"eb-output", eb_cmd_eb_output, "eb-output     : Raw int8 output of the last inference"},
    {"eb-temp", eb_cmd_eb_temp, "eb-temp       : Die temperature"},
    {"eb-sync", eb_cmd_eb_sync, "eb-sync NONCE : Echo NONCE (link resynchronisation)"},
};

#define EB_N_COMMANDS (sizeof g_commands / sizeof g_commands[0])

static void cmd_help(int argc, char **argv)
{
    size_t i;
    (void)argc;
    (void)argv;
    eb_out_line(EB_FW_VERSION " (MLPerf Tiny DUT dialect + edgebench protocol 2)");
    eb_out_line("");
    for (i = 0; i < EB_N_COMMANDS; i++) {
        const char *s = g_commands[i].help;
        for (;;) {
            const char *nl = strchr(s, '\n');
            if (nl == NULL) {
                eb_out_line(s);
                break;
            }
            eb_out_bytes(s, (size_t)(nl - s));
            eb_out_eol();
            s = nl + 1;
        }
    }
    eb_out_line("eb-... #SEQ:CRC32 : Framed request: every reply line carries SEQ and a CRC");
}

void eb_commands_init(size_t parser_ram_bytes)
{
    eb_session_init(parser_ram_bytes);
}

int eb_commands_run(int argc, char **argv)
{
    size_t i;
    for (i = 0; i < EB_N_COMMANDS; i++) {
        if (strcmp(argv[0], g_commands[i].name) == 0) {
            g_commands[i].fn(argc, argv);
            return 0;
        }
    }
    return -1;
}
