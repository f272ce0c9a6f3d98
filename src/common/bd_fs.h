/* The job's private working directory, where spill files live. */
#ifndef BD_FS_H
#define BD_FS_H

#include <stddef.h>

/* Make a fresh 0700 directory "bdmpi.<pid>.XXXXXX" inside base (NULL:
 * $TMPDIR, else /tmp).  Returns 0, or -1 with a message in err. */
int bd_fs_make_jobdir(const char *base, char *out, size_t outlen, char *err, size_t errlen);
/* Remove dir and everything in it (the job directory holds files and, with
 * several masters on one machine, their own directories). */
int bd_fs_remove_tree(const char *dir);

#endif
