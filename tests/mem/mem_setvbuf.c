/* A FILE buffer in managed memory (setvbuf, setbuffer, setbuf;
 * syscall-override.c): glibc fills and drains it with internal read/write
 * calls, so the stream must be given an unmanaged buffer of the same size.
 * Streams are written and read with putc, fprintf, small fwrite/fread and
 * fgetc while the rank is unloaded every few KiB (as a blocking MPI call
 * would), and the data is checked byte for byte; fclose/pclose must give
 * the substitute buffer back.
 * usage: mem_setvbuf <araw|arlw|lrlw> <uffd|mprotect|uffd-user> */
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>

#include "sysctest.h"

#define SB ((size_t)64 << 10)
#define TOTAL (((size_t)3 << 20) + 777)
#define EVERY ((size_t)50 << 10) /* bytes between unloads */

extern int bd_mem_syscall_override_linked;

static char path[300];
static int kernel_faults;
static bd_mem_strategy_t strategy;

static void cleanup_file(void)
{
    if (path[0])
        unlink(path);
}

enum { H_SETVBUF_FULL, H_SETVBUF_LINE, H_SETBUFFER, H_SETBUF, H_N };
static const char *hname[H_N] = {"setvbuf _IOFBF", "setvbuf _IOLBF", "setbuffer", "setbuf"};

static size_t buffer_size(int how) { return how == H_SETBUF ? BUFSIZ : ((size_t)1 << 20) + 123; }

/* Give fp a buffer at buf in managed memory the way `how` says, and check
 * that glibc got one of the same size that is not managed. */
static void set_buffer(FILE *fp, int how, char *buf)
{
    size_t size = buffer_size(how);
    CHECK(bd_mem_owns(buf));
    switch (how) {
    case H_SETVBUF_FULL: CHECK(setvbuf(fp, buf, _IOFBF, size) == 0); break;
    case H_SETVBUF_LINE: CHECK(setvbuf(fp, buf, _IOLBF, size) == 0); break;
    case H_SETBUFFER: setbuffer(fp, buf, size); break;
    default: setbuf(fp, buf);
    }
    CHECKF(fp->_IO_buf_base && !bd_mem_owns(fp->_IO_buf_base), "%s: the stream's buffer is managed",
           hname[how]);
    CHECKF((size_t)(fp->_IO_buf_end - fp->_IO_buf_base) == size,
           "%s: buffer of %zu bytes, expected %zu", hname[how],
           (size_t)(fp->_IO_buf_end - fp->_IO_buf_base), size);
}

/* TOTAL pattern bytes through putc, fprintf and small fwrites, unloading
 * every EVERY bytes.  Returns 0, or -1 if a call failed. */
static int write_stream(FILE *fp, int seed)
{
    uint8_t piece[37];
    size_t i = 0, next = EVERY;
    while (i < TOTAL) {
        if (i >= next) {
            mt_unload();
            next += EVERY;
        }
        switch (i % 4) {
        case 0:
            if (putc(mt_pat(i, seed), fp) == EOF)
                return -1;
            i++;
            break;
        case 1:
            if (i + 2 > TOTAL) {
                i = TOTAL - 1; /* the last byte through case 0 */
                break;
            }
            if (fprintf(fp, "%c%c", mt_pat(i, seed), mt_pat(i + 1, seed)) != 2)
                return -1;
            i += 2;
            break;
        default: {
            size_t n = TOTAL - i < sizeof piece ? TOTAL - i : sizeof piece;
            for (size_t k = 0; k < n; k++)
                piece[k] = mt_pat(i + k, seed);
            if (fwrite(piece, 1, n, fp) != n)
                return -1;
            i += n;
        }
        }
    }
    return 0;
}

static void check_file(const char *what, int seed)
{
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    uint8_t *t = mmap(NULL, TOTAL + 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(t != MAP_FAILED);
    ssize_t r = read(fd, t, TOTAL + 1);
    CHECKF(r == (ssize_t)TOTAL, "%s: the file has %zd bytes, expected %zu", what, r, (size_t)TOTAL);
    for (size_t i = 0; i < TOTAL; i++)
        CHECKF(t[i] == mt_pat(i, seed), "%s: byte %zu of the file wrong", what, i);
    munmap(t, TOTAL + 1);
    close(fd);
}

static void test_write(void)
{
    for (int how = 0; how < H_N; how++) {
        char *m = malloc((2u << 20) + SB);
        CHECK(m);
        memset(m, 0x33, (2u << 20) + SB);
        mt_unload();
        FILE *f = fopen(path, "w");
        CHECK(f);
        set_buffer(f, how, m + 1000);
        CHECKF(write_stream(f, how) == 0, "%s: writing failed (%s)", hname[how], strerror(errno));
        CHECKF(!ferror(f) && fclose(f) == 0, "%s: the stream failed (%s)", hname[how],
               strerror(errno));
        check_file(hname[how], how);
        free(m);
    }
}

static void test_read(void)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    uint8_t *t = mmap(NULL, TOTAL, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(t != MAP_FAILED);
    for (size_t i = 0; i < TOTAL; i++)
        t[i] = mt_pat(i, 20);
    CHECK(write(fd, t, TOTAL) == (ssize_t)TOTAL);
    munmap(t, TOTAL);
    close(fd);
    for (int how = 0; how < H_N; how++) {
        char *m = malloc((2u << 20) + SB);
        CHECK(m);
        memset(m, 0x44, (2u << 20) + SB);
        mt_unload();
        FILE *f = fopen(path, "r");
        CHECK(f);
        set_buffer(f, how, m + 1000);
        uint8_t piece[29];
        size_t i = 0, next = EVERY;
        while (i < TOTAL) {
            if (i >= next) {
                mt_unload();
                next += EVERY;
            }
            if (i % 3 == 0) {
                int c = getc(f);
                CHECKF(c == mt_pat(i, 20), "%s: getc at %zu gave %d (%s)", hname[how], i, c,
                       strerror(errno));
                i++;
            } else {
                size_t n = TOTAL - i < sizeof piece ? TOTAL - i : sizeof piece;
                CHECKF(fread(piece, 1, n, f) == n, "%s: fread at %zu failed (%s)", hname[how], i,
                       strerror(errno));
                for (size_t k = 0; k < n; k++)
                    CHECKF(piece[k] == mt_pat(i + k, 20), "%s: fread: byte %zu wrong", hname[how],
                           i + k);
                i += n;
            }
        }
        CHECK(getc(f) == EOF && feof(f) && !ferror(f));
        /* A seek drops the buffer; the next read refills it. */
        CHECK(fseek(f, (long)(TOTAL / 2), SEEK_SET) == 0);
        mt_unload();
        CHECK(getc(f) == mt_pat(TOTAL / 2, 20));
        CHECK(fclose(f) == 0);
        free(m);
    }
}

/* pclose gives the buffer back too; a child process drains the pipe. */
static void test_popen(void)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "cat > '%s'", path);
    char *m = malloc((2u << 20) + SB);
    CHECK(m);
    FILE *f = popen(cmd, "w");
    CHECK(f);
    set_buffer(f, H_SETVBUF_FULL, m + 5000);
    mt_unload();
    CHECK(write_stream(f, 30) == 0);
    CHECKF(pclose(f) == 0, "pclose failed (%s)", strerror(errno));
    check_file("popen", 30);
    free(m);
}

static size_t vm_size_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    CHECK(f);
    char line[256];
    size_t kib = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %zu", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

/* 64 streams with 1 MiB buffers one after the other: without the
 * substitutes unmapped at fclose, 64 MiB more address space. */
static void test_no_leak(void)
{
    char *m = malloc((2u << 20) + SB);
    CHECK(m);
    size_t before = vm_size_kib();
    for (int k = 0; k < 64; k++) {
        FILE *f = fopen(path, "w");
        CHECK(f);
        set_buffer(f, k % 2 ? H_SETBUFFER : H_SETVBUF_FULL, m + 1000);
        CHECK(fputc('x', f) == 'x');
        CHECK(fclose(f) == 0);
    }
    size_t after = vm_size_kib();
    CHECKF(after < before + 16 * 1024, "64 streams grew the address space by %zu KiB",
           after - before);
    free(m);
}

/* Without the substitute, glibc's own read/write calls see EFAULT where
 * the kernel does not handle faults: proof that the cases above test
 * something.  Under AR strategies the first touch loads the whole
 * allocation, so the flush may find it resident; LRLW must fail. */
static void test_control(void)
{
    if (kernel_faults || strategy != BD_MEM_LRLW)
        return;
    int (*libc_setvbuf)(FILE *, char *, int, size_t) =
        (int (*)(FILE *, char *, int, size_t))dlsym(RTLD_NEXT, "setvbuf");
    CHECK(libc_setvbuf);
    char *m = malloc((2u << 20) + SB);
    CHECK(m);
    FILE *f = fopen(path, "w");
    CHECK(f && libc_setvbuf(f, m + 1000, _IOFBF, buffer_size(H_SETVBUF_FULL)) == 0);
    CHECK(bd_mem_owns(f->_IO_buf_base));
    int failed = write_stream(f, 1) != 0 || ferror(f);
    failed |= fclose(f) != 0;
    CHECKF(failed, "a stream with a managed buffer worked without the wrapper: nothing to test");
    free(m);
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 1;
    (void)bd_mem_syscall_override_linked;
    bd_mem_config_t cfg;
    kernel_faults = mt_syscall_setup(argv, SB, &cfg);
    if (kernel_faults < 0)
        return SKIP;
    strategy = cfg.strategy;
    snprintf(path, sizeof path, "%s/../bdmem-setvbuf-%d", cfg.dir, (int)getpid());
    atexit(cleanup_file);

    test_control();
    test_write();
    test_read();
    test_popen();
    test_no_leak();

    cleanup_file();
    path[0] = 0;
    mt_finish();
    return 0;
}
