"""What the benchmarks that build their own Keras models (ab_real.py, verify_under_load.py) share: the
full-integer INT8 conversion."""
from __future__ import annotations


def int8_tflite(model, calib) -> bytes:
    """A Keras model as full-integer TFLite (int8 input and output, per-channel weights), calibrated
    on ``calib`` one sample at a time, in order."""
    # imported when a model is built (seconds of imports): check_real.py imports ab_real for its helpers
    import tensorflow as tf

    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = lambda: ([calib[i:i + 1]] for i in range(len(calib)))
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    conv.inference_input_type = conv.inference_output_type = tf.int8
    return conv.convert()
