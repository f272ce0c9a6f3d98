/* The job's private working directory, where spill files live. */
#ifndef BD_FS_H
#define BD_FS_H

#include <stddef.h>

/* Make a fresh 0700 directory "bdmpi.<pid>.XXXXXX" inside base (NULL:
 * $TMPDIR, else /tmp).  Returns 0, or -1 with a message in err. */
int bd_fs_make_jobdir(const char *base, char *out, size_t outlen, char *err, size_t errlen);
/* Remove dir and every file in it (spill directories are flat). */
int bd_fs_remove_tree(const char *dir);

#endif
