/* Starting a rank's program from a multithreaded master: see exec.h. */
#include "exec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

/* "NAME=..." sets NAME: does entry e (of environ) have that name? */
static int same_name(const char *e, const char *set)
{
    size_t n = strcspn(set, "=");
    return !strncmp(e, set, n) && e[n] == '=';
}

static char *join(const char *dir, size_t dlen, const char *file)
{
    size_t flen = strlen(file);
    char *s = malloc(dlen + 1 + flen + 1);
    if (!s)
        return NULL;
    memcpy(s, dir, dlen);
    /* An empty entry of PATH is the current directory: the bare name. */
    size_t k = dlen;
    if (dlen)
        s[k++] = '/';
    memcpy(s + k, file, flen + 1);
    return s;
}

int bdr_exec_prepare(bdr_exec_t *x, const char *path, char *const *argv, const char *const *set,
                     int nset)
{
    memset(x, 0, sizeof *x);
    int nenv = 0;
    while (environ && environ[nenv])
        nenv++;
    x->envp = calloc((size_t)nenv + (size_t)nset + 1, sizeof *x->envp);
    if (!x->envp)
        goto fail;
    int k = 0;
    for (int i = 0; i < nenv; i++) {
        int replaced = 0;
        for (int j = 0; j < nset && !replaced; j++)
            replaced = same_name(environ[i], set[j]);
        if (!replaced)
            x->envp[k++] = environ[i]; /* not ours to free: environ's */
    }
    for (int j = 0; j < nset; j++)
        x->envp[k++] = (char *)set[j]; /* the caller's, alive until the fork */

    if (strchr(path, '/')) {
        x->paths = calloc(1, sizeof *x->paths);
        if (!x->paths || !(x->paths[0] = strdup(path)))
            goto fail;
        x->npaths = 1;
    } else {
        /* execvp's search: PATH, or the system's default when unset. */
        const char *sp = getenv("PATH");
        char def[256];
        if (!sp) {
            size_t n = confstr(_CS_PATH, def, sizeof def);
            sp = n > 0 && n <= sizeof def ? def : "/bin:/usr/bin";
        }
        int n = 1;
        for (const char *p = sp; *p; p++)
            n += *p == ':';
        x->paths = calloc((size_t)n, sizeof *x->paths);
        if (!x->paths)
            goto fail;
        for (const char *p = sp;; p++) {
            const char *end = strchrnul(p, ':');
            if (!(x->paths[x->npaths++] = join(p, (size_t)(end - p), path)))
                goto fail;
            if (!*end)
                break;
            p = end;
        }
    }
    while (argv[x->nargs])
        x->nargs++;
    x->sh_argv = calloc((size_t)x->nargs + 2, sizeof *x->sh_argv);
    if (!x->sh_argv)
        goto fail;
    x->sh_argv[0] = "/bin/sh";
    for (int i = 1; i < x->nargs; i++)
        x->sh_argv[i + 1] = argv[i];
    return 0;
fail:
    bdr_exec_free(x);
    return -ENOMEM;
}

int bdr_exec_run(bdr_exec_t *x, char *const *argv)
{
    int eacces = 0, err = ENOENT;
    for (int i = 0; i < x->npaths; i++) {
        execve(x->paths[i], argv, x->envp);
        err = errno;
        if (err == ENOEXEC) {
            x->sh_argv[1] = x->paths[i];
            execve("/bin/sh", x->sh_argv, x->envp);
            return errno;
        }
        if (err == EACCES) /* remembered; another file may be runnable */
            eacces = 1;
        else if (err != ENOENT && err != ENOTDIR && err != ESTALE && err != ENODEV &&
                 err != ETIMEDOUT)
            return err;
    }
    return eacces ? EACCES : err;
}

void bdr_exec_free(bdr_exec_t *x)
{
    for (int i = 0; x->paths && i < x->npaths; i++)
        free(x->paths[i]);
    free(x->paths);
    free(x->envp);
    free(x->sh_argv);
    memset(x, 0, sizeof *x);
}
