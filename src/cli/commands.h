/* commands.h - the subcommands of the callstitch binary.
 *
 * Each takes the arguments after its own name (argv[0] is the command
 * name) and returns the process exit status. One file per command:
 * src/cli/cmd_<name>.c.
 */
#ifndef CS_COMMANDS_H
#define CS_COMMANDS_H

int cmd_record(int argc, char **argv);
int cmd_script(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_folded(int argc, char **argv);
int cmd_flame(int argc, char **argv);
int cmd_pprof(int argc, char **argv);
int cmd_inject(int argc, char **argv);
int cmd_speedscope(int argc, char **argv);
int cmd_archive(int argc, char **argv);
int cmd_diff(int argc, char **argv);

#endif
