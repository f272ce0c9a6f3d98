/* The job's private working directory, where spill files live, and the
 * spill files themselves. */
#ifndef BD_FS_H
#define BD_FS_H

#include <stddef.h>
#include <stdint.h>

/* Make a fresh 0700 directory "bdmpi.<pid>.XXXXXX" inside base (NULL:
 * $TMPDIR, else /tmp).  Returns 0, or -1 with a message in err. */
int bd_fs_make_jobdir(const char *base, char *out, size_t outlen, char *err, size_t errlen);
/* Remove dir and everything in it (the job directory holds files and, with
 * several masters on one machine, their own directories). */
int bd_fs_remove_tree(const char *dir);

/* Spill files through O_DIRECT, so that what a job stages on storage is
 * not also kept in the page cache, where no budget sees it.  Offsets,
 * lengths and memory of every transfer must be multiples of
 * BD_FS_DIO_ALIGN (the largest logical block size of common devices). */
#define BD_FS_DIO_ALIGN 4096
/* Create path (O_EXCL, mode 0600) for reading and writing, with O_DIRECT
 * if want_direct and the file system allows it (*direct says whether it
 * did), and unlink it at once: nothing outlives the descriptor.  Returns
 * the descriptor, or -errno. */
int bd_fs_spill_create(const char *path, int want_direct, int *direct);
/* A second, buffered descriptor of the same (possibly unlinked) file, for
 * readers that cannot align what they read; -errno on failure. */
int bd_fs_reopen_buffered(int fd, int flags);
/* Write or read len bytes at off, all of it (EINTR and short transfers are
 * retried); a read that meets the end of the file fills the rest with
 * zeros.  0 or -errno. */
int bd_fs_pwrite_all(int fd, const void *buf, size_t len, uint64_t off);
int bd_fs_pread_zero(int fd, void *buf, size_t len, uint64_t off);

#endif
