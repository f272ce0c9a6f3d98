/* prtop.h -- the k largest (value, id) pairs, largest value first, ties
 * by smaller id (so every variant reports the same list). */
#ifndef BDAPPS_PRTOP_H
#define BDAPPS_PRTOP_H

#include <stdint.h>
#include <stdlib.h>

typedef struct {
    int k, n;
    double *val;
    int64_t *id;
} prtop_t;

static inline void prtop_init(prtop_t *t, int k)
{
    t->k = k;
    t->n = 0;
    t->val = malloc((size_t)k * sizeof *t->val);
    t->id = malloc((size_t)k * sizeof *t->id);
    if (!t->val || !t->id)
        abort();
    for (int i = 0; i < k; i++) {
        t->val[i] = -1.0;
        t->id[i] = -1;
    }
}

static inline int prtop_before(double va, int64_t ia, double vb, int64_t ib)
{
    return va > vb || (va == vb && ia < ib);
}

static inline void prtop_offer(prtop_t *t, int64_t id, double v)
{
    if (t->n == t->k && !prtop_before(v, id, t->val[t->k - 1], t->id[t->k - 1]))
        return;
    int i = t->n < t->k ? t->n++ : t->k - 1;
    while (i > 0 && prtop_before(v, id, t->val[i - 1], t->id[i - 1])) {
        t->val[i] = t->val[i - 1];
        t->id[i] = t->id[i - 1];
        i--;
    }
    t->val[i] = v;
    t->id[i] = id;
}

static inline void prtop_free(prtop_t *t)
{
    free(t->val);
    free(t->id);
    t->val = NULL;
    t->id = NULL;
}

#endif
