/* The job's private working directory, where spill files live, and the
 * spill files themselves. */
#ifndef BD_FS_H
#define BD_FS_H

#include <stddef.h>
#include <stdint.h>

/* Make a fresh 0700 directory "bdmpi.<pid>.XXXXXX" inside base (NULL:
 * $TMPDIR, else /tmp), with its owner file (below).  Returns 0, or -1 with
 * a message in err. */
int bd_fs_make_jobdir(const char *base, char *out, size_t outlen, char *err, size_t errlen);

/* Who made a job directory, so that one left behind can be told from one
 * in use.  bd_fs_make_jobdir writes the file BD_FS_JOBDIR_OWNER in it:
 * this machine's boot id (so that a directory on a file system shared
 * with other machines is judged only where it was made) and the pid and
 * start time of its maker.  bd_fs_jobdir_mark_guardian adds a second
 * process that removes the directory when the maker dies (bdmpiexec's
 * guardian).  The directory is left behind when every process named
 * there is gone: a kill -9 of both, or CTest's timeout killing the whole
 * process tree. */
#define BD_FS_JOBDIR_OWNER "owner"
int bd_fs_jobdir_mark_guardian(const char *jobdir, int guardian_pid);
/* Remove the job directories left behind in base (NULL: as
 * bd_fs_make_jobdir): named bdmpi.PID.XXXXXX, ours (same owner), made on
 * this boot of this machine, every process named in their owner file gone
 * (a pid reused by another process has another start time), and not
 * changed for min_age_s seconds.  A directory without an owner file is
 * left alone: nothing says where it was made.  removed(path, pid) is
 * called for each one removed.  Returns how many were. */
int bd_fs_jobdir_sweep(const char *base, int min_age_s, void (*removed)(const char *path, int pid));

/* dir is private to us: a directory (not a symbolic link) owned by our
 * effective user with no access for group and others (mode 0700 or less).
 * Returns 0, or -1 with the reason in err ("it has mode 0755", ...). */
int bd_fs_check_private_dir(const char *dir, char *err, size_t errlen);
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

/* Many reads at once (Linux native AIO), for a caller on the critical
 * path: with direct I/O the device sees them together, where one pread at
 * a time waits behind the other processes' transfers each time.  A ctx
 * starts zeroed and is set up on first use; bd_fs_batch_close ends it. */
typedef struct bd_fs_batch {
    unsigned long ctx; /* aio_context_t, 0: not set up */
    int broken;        /* io_setup refused: every read goes one at a time */
} bd_fs_batch_t;
typedef struct bd_fs_rd {
    void *buf;
    size_t len;
    uint64_t off;
} bd_fs_rd_t;
/* Read v[i].len bytes at v[i].off into v[i].buf for every i < n, up to 64
 * in flight.  A read the kernel completes short is finished with pread.
 * 0, -EIO when the file ends before a read does, or -errno. */
int bd_fs_pread_batch(bd_fs_batch_t *b, int fd, const bd_fs_rd_t *v, int n);
void bd_fs_batch_close(bd_fs_batch_t *b);

/* Checksums of message spill files (msg-<rank>-<n>): whoever writes one
 * sums the data as it goes, in chunks of BD_FS_CK_CHUNK bytes, and ends
 * the file with a trailer after the data: the chunks' CRC32Cs (bd_crc.h),
 * then BD_FS_CK_MAGIC.  Whoever reads it back sums what it reads the same
 * way and checks the trailer before the data is used, so that storage
 * that returns something else than was written is caught ("storage
 * returned corrupted data ... at offset O in FILE": O is the start of the
 * chunk that differs).  Data may be added in pieces of any size. */
#define BD_FS_CK_CHUNK (1u << 20)
#define BD_FS_CK_MAGIC 0x4b434442u /* "BDCK" */
typedef struct {
    uint64_t pos;    /* bytes summed */
    uint32_t cur;    /* CRC32C of the chunk in progress */
    uint32_t n, cap; /* chunks finished; room in crc */
    uint32_t *crc;   /* the finished chunks' CRC32Cs: small, or malloc'd */
    uint32_t small[8];
    int failed; /* out of memory: the sums are incomplete */
} bd_fs_ck_t;
void bd_fs_ck_init(bd_fs_ck_t *k);
void bd_fs_ck_add(bd_fs_ck_t *k, const void *p, size_t len);
void bd_fs_ck_free(bd_fs_ck_t *k);
/* Write the trailer at offset off (the end of the data).  0 or -errno. */
int bd_fs_ck_write(bd_fs_ck_t *k, int fd, uint64_t off);
/* Compare with the trailer of fd, whose data ends at off (all of it must
 * have been added).  0 when it matches, -EBADMSG with *bad set to the
 * offset of the first chunk that differs (0 when the trailer itself is
 * missing or damaged), or another -errno when it cannot be read. */
int bd_fs_ck_verify(bd_fs_ck_t *k, int fd, uint64_t off, uint64_t *bad);
/* The recorded checksums of a spill file whose data is n bytes (one per
 * BD_FS_CK_CHUNK from 0), for a reader that checks chunk by chunk: a
 * malloc'd array in *out.  0, -EBADMSG (no valid trailer) or -errno. */
int bd_fs_ck_load(int fd, uint64_t n, uint32_t **out);

#endif
