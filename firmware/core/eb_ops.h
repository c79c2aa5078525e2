/*
 * eb_ops.h - the engine's operators, declared by the one table eb_ops.def: their
 * codes (EB_OP_<NAME>, TFLite's BuiltinOperator values), the functions of each
 * family (ops/eb_op_<family>.c) and the lookup the engine validates and runs every
 * layer with. Private to the engine and its operators.
 */
#ifndef EB_OPS_H
#define EB_OPS_H

#include "eb_layer.h"

/* EB_OP_ADD = 0, EB_OP_CONV_2D = 3, ... */
enum {
#define EB_OP(name, code, version, family) EB_OP_##name = code,
#include "eb_ops.def"
#undef EB_OP
    EB_OP_CODE_LIMIT = 256
};

/* An operator family validates a layer once at eb_model_init (everything its
 * kernel relies on: tensors, shapes, parameters, ranges inside the blob and the
 * arena; k is the layer's index for the message) and runs it at every invoke. */
typedef eb_status (*eb_op_check_fn)(const eb_view *v, const eb_layer *L, uint32_t k, eb_msg *msg);
typedef void (*eb_op_run_fn)(eb_model *m, const eb_view *v, const eb_layer *L);

typedef struct {
    uint8_t code;         /* TFLite BuiltinOperator (the name is the host's: OP_NAMES) */
    eb_op_check_fn check;
    eb_op_run_fn run;
} eb_op;

/* eb_<family>_check / eb_<family>_run of every family of the table (a family with
 * several operators is declared once per operator: identical prototypes). */
#define EB_OP(name, code, version, family)                                                  \
    eb_status eb_##family##_check(const eb_view *v, const eb_layer *L, uint32_t k, eb_msg *msg); \
    void eb_##family##_run(eb_model *m, const eb_view *v, const eb_layer *L);
#include "eb_ops.def"
#undef EB_OP

/* The operator with this code, or NULL when the engine does not run it. */
const eb_op *eb_op_find(uint32_t code);

/* The table itself, in eb_ops.def order (eb_ops_count entries). */
extern const eb_op eb_ops[];
extern const uint32_t eb_ops_count;

#endif /* EB_OPS_H */
