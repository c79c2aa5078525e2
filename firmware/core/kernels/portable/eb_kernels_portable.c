/*
 * eb_kernels_portable.c - the kernel set of builds without an optimised one
 * (posix, fuzzing, cores without the DSP extension): every layer runs the
 * portable kernels of ops/, and there is no kernel scratch.
 */
#include "eb_kernels_opt.h"

int eb_conv_s8_opt(const eb_conv_params *p, const int8_t *in, int8_t *out)
{
    (void)p;
    (void)in;
    (void)out;
    return 0;
}

int eb_depthwise_s8_opt(const eb_conv_params *p, const int8_t *in, int8_t *out)
{
    (void)p;
    (void)in;
    (void)out;
    return 0;
}

int eb_fc_s8_opt(const eb_fc_params *p, const int8_t *in, int8_t *out)
{
    (void)p;
    (void)in;
    (void)out;
    return 0;
}

int eb_avgpool_s8_opt(const eb_pool_params *p, const int8_t *in, int8_t *out)
{
    (void)p;
    (void)in;
    (void)out;
    return 0;
}

size_t eb_kernels_ram_bytes(void)
{
    return 0;
}
