/* The one table of BDMPI's run-time options.  Each option is read, in
 * increasing priority, from its default, from the environment variable
 * BDMPI_<NAME> (upper case, '-' -> '_'), and from the bdmpiexec command
 * line (-name value, -name=value, --name value or --name=value).
 * docs/options.md is generated from this table by `bdmpiexec --help-md`. */
#ifndef BD_OPTIONS_H
#define BD_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

typedef enum {
    BD_OPT_N,
    BD_OPT_NN,
    BD_OPT_HOSTFILE,
    BD_OPT_NS,
    BD_OPT_NR,
    BD_OPT_NC,
    BD_OPT_MAX_SPAWN,
    BD_OPT_UNIVERSE_SIZE,
    BD_OPT_INITIAL_ERRHANDLER,
    BD_OPT_MSG_THRESHOLD,
    BD_OPT_WINDOW,
    BD_OPT_SPIN,
    BD_OPT_POLL_QUANTUM,
    BD_OPT_POLL_REMOTE,
    BD_OPT_LEND_ASLEEP,
    BD_OPT_PIN,
    BD_OPT_MASTER_SLICE,
    BD_OPT_RANK_SESSION,
    BD_OPT_WD,
    BD_OPT_MEM,
    BD_OPT_MEM_STRATEGY,
    BD_OPT_SBPAGE,
    BD_OPT_MEM_THRESHOLD,
    BD_OPT_MEM_READAHEAD,
    BD_OPT_MEM_PREDICT,
    BD_OPT_MEM_TRACK,
    BD_OPT_MEM_WP,
    BD_OPT_MEM_PREFETCH,
    BD_OPT_MEM_PRECLEAN,
    BD_OPT_MEM_PRECLEAN_TICK,
    BD_OPT_MEM_ALLOC_STATS,
    BD_OPT_MEM_DEDUP,
    BD_OPT_MEM_SHARE,
    BD_OPT_MEM_ADAPT,
    BD_OPT_MEM_MIN,
    BD_OPT_MEM_REMOTE,
    BD_OPT_MEM_NODE,
    BD_OPT_SPILL_MAX,
    BD_OPT_P2P_TOKENS,
    BD_OPT_COLL_STAGE,
    BD_OPT_COLL_BYREF,
    BD_OPT_NET_DIRECT,
    BD_OPT_STATS,
    BD_OPT_TRACE,
    BD_OPT_VERBOSE,
    BD_OPT_FAULT,
    BD_OPT_STALL_TIMEOUT,
    BD_OPT_GENV,
    BD_OPT_X,
    BD_OPT__COUNT
} bd_opt_id_t;

/* -pin values */
enum { BD_PIN_AUTO = 0, BD_PIN_ON, BD_PIN_OFF };
/* -mem-adapt values */
enum { BD_ADAPT_AUTO = 0, BD_ADAPT_ON, BD_ADAPT_OFF };

/* BD_OPT_ENV: an environment variable for the ranks (-genv NAME VALUE,
 * -x NAME[=VALUE]); may repeat; has no BDMPI_* variable of its own. */
typedef enum {
    BD_OPT_INT,
    BD_OPT_SIZE,
    BD_OPT_STR,
    BD_OPT_FLAG,
    BD_OPT_ENUM,
    BD_OPT_ENV
} bd_opt_type_t;

typedef struct {
    const char *name;
    bd_opt_type_t type;
    const char *def;    /* NULL: no default (string options) */
    long long min, max; /* for INT and SIZE */
    const char *help;
    const char *choices; /* ENUM: "a|b|c"; the value is the index of the choice.
                             * SIZE: a word that also means 0 (e.g. "off"), or NULL */
    const char *alias;   /* another name of the option (mpiexec's), or NULL */
} bd_opt_desc_t;

/* Values of -mem-strategy. */
enum { BD_MEMS_NONE = 0, BD_MEMS_ARAW, BD_MEMS_ARLW, BD_MEMS_LRLW };
/* Values of -mem-predict. */
enum { BD_MEMP_AUTO = 0, BD_MEMP_ON, BD_MEMP_OFF };
/* Values of -mem-track (in the order of bd_mem_track_t). */
enum { BD_MEMT_AUTO = 0, BD_MEMT_UFFD, BD_MEMT_MPROTECT };
/* Values of -mem-wp (in the order of bd_mem_wp_t). */
enum { BD_MEMW_AUTO = 0, BD_MEMW_ASYNC, BD_MEMW_SYNC };

/* Names (separated by ',') of environment variables bdmpiexec set only for
 * the masters' MPI_Init with several nodes: each master removes them, and
 * this one, before it starts its ranks (bdmpiexec.c, local_shm_setup). */
#define BD_MASTER_ONLY_ENV "BDMPI_MASTER_ONLY_ENV"

/* One -genv/-x setting: NAME (namelen bytes of name) = value. */
typedef struct {
    const char *name;
    size_t namelen;
    const char *value;
} bd_opt_envset_t;

#define BD_OPT_MAX_ENVSETS 256

typedef struct {
    long long num[BD_OPT__COUNT];
    const char *str[BD_OPT__COUNT];
    int set_on_cmdline[BD_OPT__COUNT];
    int set_in_env[BD_OPT__COUNT];
    bd_opt_envset_t envset[BD_OPT_MAX_ENVSETS]; /* -genv and -x, in command-line order */
    int n_envset;
} bd_opts_t;

extern const bd_opt_desc_t bd_opt_table[BD_OPT__COUNT];

/* Fill defaults, then apply BDMPI_* variables.  Returns 0, or -1 with a
 * message in err. */
int bd_opts_load_env(bd_opts_t *o, char *err, size_t errlen);
/* Apply command-line options from argv[1..]; stops at the first argument
 * that is not an option (the program) or after "--".  *first_arg gets its
 * index.  Values point into argv, which must outlive o.  Returns 0, 1 when
 * help was requested (-h, --help), 2 for --version, -1 on error (message in
 * err). */
int bd_opts_parse_argv(bd_opts_t *o, int argc, char **argv, int *first_arg, char *err,
                       size_t errlen);
/* Apply the limits between options, after loading and parsing them and
 * before anything uses them: -nr is at most -ns.  Every process that reads
 * the options (bdmpiexec, bdmprun) calls it, so each sees the same values. */
void bd_opts_normalise(bd_opts_t *o);
/* -n N (mpiexec's total number of ranks): sets -ns to N / -nn.  An error
 * (-1, message in err) if N is not a multiple of -nn, or if -ns was also
 * given, at the same or a higher priority (command line over environment),
 * and says otherwise.  Called by bdmpiexec after parsing; 0 if -n is unset. */
int bd_opts_resolve_total(bd_opts_t *o, char *err, size_t errlen);
/* Set the -genv/-x variables in this process (whose environment the ranks
 * inherit).  Returns 0 or -errno. */
int bd_opts_apply_envsets(const bd_opts_t *o);
/* Export every option as BDMPI_* so child processes see the same values. */
int bd_opts_export_env(const bd_opts_t *o);
void bd_opts_print_help(FILE *f, const char *usage);
void bd_opts_print_markdown(FILE *f);
/* Parse "123", "64K", "2M", "1G" (powers of 1024).  Returns 0 or -1. */
int bd_opts_parse_size(const char *s, long long *out);

#endif
