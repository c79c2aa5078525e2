/*
 * eb_kernels_opt.h - the optimised kernel set of a build (core/kernels/<set>/,
 * chosen by core.mk: `dsp` for Cortex-M cores with the DSP extension,
 * `portable` elsewhere), as TFLite Micro selects an optimised kernel directory.
 * The portable kernels (ops/eb_op_conv.c, ops/eb_op_fully_connected.c, ops/eb_op_pooling.c) call these first; each returns 1 when it
 * ran the layer and 0 when the portable kernel must (a layer it does not handle,
 * or whose working set does not fit its scratch). Every set gives the same
 * integers as the portable kernels.
 */
#ifndef EB_KERNELS_OPT_H
#define EB_KERNELS_OPT_H

#include "eb_kernels.h"

int eb_conv_s8_opt(const eb_conv_params *p, const int8_t *in, int8_t *out);
int eb_depthwise_s8_opt(const eb_conv_params *p, const int8_t *in, int8_t *out);
int eb_fc_s8_opt(const eb_fc_params *p, const int8_t *in, int8_t *out);
int eb_avgpool_s8_opt(const eb_pool_params *p, const int8_t *in, int8_t *out);

#endif /* EB_KERNELS_OPT_H */
