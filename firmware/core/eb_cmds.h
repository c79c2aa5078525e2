/*
 * eb_cmds.h - the command functions the command table (eb_commands.c) lists:
 * the MLPerf Tiny dialect's (eb_cmd_mlperf.c) and edgebench's extensions
 * (eb_cmd_edgebench.c). Each takes the command line's words (argv[0] is the
 * command) and writes its reply lines; the parser adds m-ready.
 */
#ifndef EB_CMDS_H
#define EB_CMDS_H

void eb_cmd_name(int argc, char **argv);
void eb_cmd_profile(int argc, char **argv);
void eb_cmd_timestamp(int argc, char **argv);
void eb_cmd_db(int argc, char **argv);
void eb_cmd_infer(int argc, char **argv);
void eb_cmd_results(int argc, char **argv);

void eb_cmd_eb_info(int argc, char **argv);
void eb_cmd_eb_upload(int argc, char **argv);
void eb_cmd_eb_model(int argc, char **argv);
void eb_cmd_eb_infer(int argc, char **argv);
void eb_cmd_eb_output(int argc, char **argv);
void eb_cmd_eb_temp(int argc, char **argv);
void eb_cmd_eb_sync(int argc, char **argv);

#endif /* EB_CMDS_H */
