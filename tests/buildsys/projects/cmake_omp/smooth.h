#pragma once
#ifdef __cplusplus
extern "C" {
#endif
void scale(const double *in, double *out, int n, double f);
#ifdef __cplusplus
}
#endif
