#include "bd_log.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char g_prefix[64] = "bdmpi";
static int g_level;

void bd_log_set_prefix(const char *prefix) { snprintf(g_prefix, sizeof g_prefix, "%s", prefix); }

const char *bd_log_prefix(void) { return g_prefix; }
void bd_log_set_level(int level) { g_level = level; }
int bd_log_level(void) { return g_level; }

void bd_log_vmsg(const char *kind, const char *fmt, va_list ap)
{
    char buf[2048];
    int n = snprintf(buf, sizeof buf, "%s: %s", g_prefix, kind);
    if (n < 0 || (size_t)n >= sizeof buf)
        n = 0;
    int m = vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    size_t len = (size_t)n + (m > 0 ? (size_t)m : 0);
    if (len > sizeof buf - 2)
        len = sizeof buf - 2;
    buf[len++] = '\n';
    /* One write so lines from many processes do not interleave. */
    ssize_t w = write(STDERR_FILENO, buf, len);
    (void)w;
}

void bd_log_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bd_log_vmsg("", fmt, ap);
    va_end(ap);
}

void bd_log_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bd_log_vmsg("warning: ", fmt, ap);
    va_end(ap);
}

void bd_log_info(const char *fmt, ...)
{
    if (g_level < 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    bd_log_vmsg("", fmt, ap);
    va_end(ap);
}

void bd_log_debug(const char *fmt, ...)
{
    if (g_level < 2)
        return;
    va_list ap;
    va_start(ap, fmt);
    bd_log_vmsg("debug: ", fmt, ap);
    va_end(ap);
}

void bd_log_raw(const char *a, const char *b, const char *c)
{
    const char *parts[3] = {a, b, c};
    for (int i = 0; i < 3; i++) {
        if (parts[i]) {
            ssize_t w = write(STDERR_FILENO, parts[i], strlen(parts[i]));
            (void)w;
        }
    }
}
