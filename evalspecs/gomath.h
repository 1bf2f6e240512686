/* Go's math.Exp and math.Log with the bits the reference gets on amd64
 * (Go runs its own assembly for both, which differs from glibc's in the
 * last place now and then): BLEU's brevity penalty and geometric mean,
 * and every other score built from them, come out the same. */
#ifndef TALLY_ES_GOMATH_H
#define TALLY_ES_GOMATH_H

#include <stdbool.h>

double tally_go_exp(double x);
double tally_go_log(double x);

/* Exp by one path: fused (the AVX+FMA path) or not. For tests. */
double tally_go_exp_path(double x, bool fused);

#endif
