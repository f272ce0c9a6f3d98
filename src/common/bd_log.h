/* Logging for every BDMPI component.  Messages go to stderr prefixed with
 * the component and, in slaves, the rank, so a user can tell who spoke. */
#ifndef BD_LOG_H
#define BD_LOG_H

#include <stdarg.h>
#include <stddef.h>

/* Set once at startup, e.g. "bdmpiexec", "bdmprun", "rank 3". */
void bd_log_set_prefix(const char *prefix);
const char *bd_log_prefix(void);
/* 0 = errors only (default), 1 = info, 2 = debug.  From BDMPI_VERBOSE. */
void bd_log_set_level(int level);
int bd_log_level(void);

void bd_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void bd_log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Said whatever the level, prefixed "warning: ": the job goes on. */
void bd_log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void bd_log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void bd_log_vmsg(const char *kind, const char *fmt, va_list ap);

/* Async-signal-safe: formats nothing, only writes the pieces with write(2). */
void bd_log_raw(const char *a, const char *b, const char *c);

#endif
