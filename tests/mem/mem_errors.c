/* Error handling.
 * usage: mem_errors <uffd|mprotect>
 *  - a failed write-back (file size limit -> EFBIG) is reported by
 *    bd_mem_unload_all and loses nothing; a later unload succeeds;
 *  - double free and freeing an interior pointer abort with a clear message. */
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "memtest.h"

/* Run fn in a child; expect SIGABRT and a message containing want. */
static void expect_abort(void (*fn)(void), const char *want) {
  int pfd[2];
  CHECK(pipe(pfd) == 0);
  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    dup2(pfd[1], 2);
    close(pfd[0]);
    signal(SIGABRT, SIG_DFL);
    fn();
    _exit(0);
  }
  close(pfd[1]);
  char out[2048];
  size_t n = 0;
  ssize_t r;
  while (n < sizeof out - 1 && (r = read(pfd[0], out + n, sizeof out - 1 - n)) > 0) n += (size_t)r;
  out[n] = 0;
  close(pfd[0]);
  int status;
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECKF(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "child status %d, output: %s", status, out);
  CHECKF(strstr(out, want) != NULL, "message '%s' lacks '%s'", out, want);
  fprintf(stderr, "ok, child said: %s", out);
}

static void double_free(void) {
  void *p = bd_mem_alloc(1u << 20, 0);
  bd_mem_free(p);
  bd_mem_free(p);
}

static void interior_free(void) {
  char *p = bd_mem_alloc(1u << 20, 0);
  bd_mem_free(p + 4096);
}

int main(int argc, char **argv) {
  if (argc != 2) return 1;
  bd_mem_config_t cfg;
  mt_setup(&cfg, "arlw", 64u << 10, argv[1]);
  const size_t n = 4u << 20;
  uint8_t *a = bd_mem_alloc(n, 0);
  CHECK(a);
  for (size_t k = 0; k < n; k++) a[k] = (uint8_t)(k * 5);

  /* write-back fails: file size limit below the allocation */
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit old, lim;
  CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
  lim = old;
  lim.rlim_cur = 1u << 20;
  CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
  int rc = bd_mem_unload_all();
  CHECKF(rc == -EFBIG, "unload returned %d", rc);
  for (size_t k = 0; k < n; k += 333) CHECK(a[k] == (uint8_t)(k * 5));
  CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
  CHECK(bd_mem_unload_all() == 0);
  CHECK(bd_mem_resident_bytes() == 0);
  for (size_t k = 0; k < n; k++) CHECKF(a[k] == (uint8_t)(k * 5), "offset %zu", k);

  expect_abort(double_free, "double free");
  expect_abort(interior_free, "invalid pointer");

  bd_mem_free(a);
  mt_finish();
  return 0;
}
