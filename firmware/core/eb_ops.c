/*
 * eb_ops.c - the engine's dispatch table, made from eb_ops.def (the one list of
 * operators, which the host converter reads too: edgebench/mcu/ops/table.py).
 */
#include "eb_ops.h"

const eb_op eb_ops[] = {
#define EB_OP(name, code, version, family) {code, eb_##family##_check, eb_##family##_run},
#include "eb_ops.def"
#undef EB_OP
};

/* every operator's version is one this engine reports (eb-info engine) */
#define EB_OP(name, code, version, family) typedef char eb_version_of_##name[(version) <= EB_ENGINE_VERSION ? 1 : -1];
#include "eb_ops.def"
#undef EB_OP

const uint32_t eb_ops_count = (uint32_t)(sizeof eb_ops / sizeof eb_ops[0]);

/* code -> 1 + its row in eb_ops[] (0: no such operator), for a lookup per layer
 * that costs the same whatever the code */
enum {
#define EB_OP(name, code, version, family) EB_ROW_##name,
#include "eb_ops.def"
#undef EB_OP
    EB_ROWS
};
static const uint8_t g_row_of[EB_OP_CODE_LIMIT] = {
#define EB_OP(name, code, version, family) [code] = EB_ROW_##name + 1,
#include "eb_ops.def"
#undef EB_OP
};

const eb_op *eb_op_find(uint32_t code)
{
    return code < EB_OP_CODE_LIMIT && g_row_of[code] ? &eb_ops[g_row_of[code] - 1u] : 0;
}
