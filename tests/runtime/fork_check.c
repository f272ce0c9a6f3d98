/* fork_check.so: preloaded into bdmprun (LD_PRELOAD), it ends a child of
 * the master that calls a function that is not async-signal-safe between
 * fork and exec (issue 18: the master has threads, so such a call may wait
 * for ever on a lock another thread held at the fork).  Watched: the
 * allocator, the environment (setenv, unsetenv, putenv) and execvp's PATH
 * search (execvp, execvpe).  Such a child writes "fork_check: NAME called
 * between fork and exec" and exits with status 99, which fails the job.
 * Only a process named bdmprun is watched, and the library takes itself
 * out of LD_PRELOAD there, so that the ranks the master starts do not load
 * it (their allocator is BDMPI's). */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *__libc_malloc(size_t n);
void *__libc_calloc(size_t k, size_t n);
void *__libc_realloc(void *p, size_t n);
void __libc_free(void *p);

static int g_armed;          /* this process is a master */
static volatile int g_child; /* ... and this is its child, before exec */

static void after_fork_child(void) { g_child = g_armed; }

static void caught(const char *name)
{
    if (!g_child)
        return;
    static const char pre[] = "fork_check: ", post[] = " called between fork and exec\n";
    (void)!write(2, pre, sizeof pre - 1);
    (void)!write(2, name, strlen(name));
    (void)!write(2, post, sizeof post - 1);
    _exit(99);
}

__attribute__((constructor)) static void fork_check_init(void)
{
    char comm[32] = "";
    int fd = open("/proc/self/comm", O_RDONLY);
    if (fd >= 0) {
        ssize_t n = read(fd, comm, sizeof comm - 1);
        comm[n > 0 ? n : 0] = 0;
        close(fd);
    }
    if (strncmp(comm, "bdmprun", 7))
        return;
    int (*real_unsetenv)(const char *) = (int (*)(const char *))dlsym(RTLD_NEXT, "unsetenv");
    if (real_unsetenv)
        real_unsetenv("LD_PRELOAD");
    pthread_atfork(NULL, NULL, after_fork_child);
    g_armed = 1;
}

void *malloc(size_t n)
{
    caught("malloc");
    return __libc_malloc(n);
}

void *calloc(size_t k, size_t n)
{
    caught("calloc");
    return __libc_calloc(k, n);
}

void *realloc(void *p, size_t n)
{
    caught("realloc");
    return __libc_realloc(p, n);
}

void free(void *p)
{
    caught("free");
    __libc_free(p);
}

int setenv(const char *name, const char *value, int overwrite)
{
    caught("setenv");
    int (*real)(const char *, const char *, int) =
        (int (*)(const char *, const char *, int))dlsym(RTLD_NEXT, "setenv");
    return real ? real(name, value, overwrite) : -1;
}

int unsetenv(const char *name)
{
    caught("unsetenv");
    int (*real)(const char *) = (int (*)(const char *))dlsym(RTLD_NEXT, "unsetenv");
    return real ? real(name) : -1;
}

int putenv(char *s)
{
    caught("putenv");
    int (*real)(char *) = (int (*)(char *))dlsym(RTLD_NEXT, "putenv");
    return real ? real(s) : -1;
}

int execvp(const char *file, char *const argv[])
{
    caught("execvp");
    int (*real)(const char *, char *const[]) =
        (int (*)(const char *, char *const[]))dlsym(RTLD_NEXT, "execvp");
    return real ? real(file, argv) : -1;
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
    caught("execvpe");
    int (*real)(const char *, char *const[], char *const[]) =
        (int (*)(const char *, char *const[], char *const[]))dlsym(RTLD_NEXT, "execvpe");
    return real ? real(file, argv, envp) : -1;
}
